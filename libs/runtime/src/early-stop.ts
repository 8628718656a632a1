/**
 * The stop signals from an app's first line (ADR 0040). Each app's `main` imports this (through
 * `@dossier/runtime/before-nest`) before anything else, so a stop that comes while its modules load — about
 * half a second in which Node's default would end the process by the signal, read by a supervisor as a
 * crash — is only noted; `StopWhileStarting` then takes it over. It imports nothing.
 */

/** The signals that ask an app to stop in order: a supervisor's SIGTERM, a terminal's Ctrl-C. */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

let stopped = false;
const note = (): void => {
  stopped = true;
};

/** Takes the stop signals until `takeEarlyStop` is called. */
export function catchStopsEarly(): void {
  for (const signal of STOP_SIGNALS) process.on(signal, note);
}

/**
 * Lets the stop signals go (call it once the caller listens to them itself, so that none falls to Node's
 * default in between, nor one already received but not yet dispatched); says whether one came meanwhile.
 */
export function takeEarlyStop(): boolean {
  for (const signal of STOP_SIGNALS) process.off(signal, note);
  return stopped;
}
