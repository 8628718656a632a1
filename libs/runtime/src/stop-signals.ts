import { STOP_SIGNALS, takeEarlyStop } from './early-stop';

export { STOP_SIGNALS } from './early-stop';

/** What of a Nest app (the gateway's, a worker's context) the hand-over needs. */
interface Closable {
  close(): Promise<void>;
  enableShutdownHooks(signals: string[], options: { useProcessExit: boolean }): unknown;
}

/**
 * A stop asked for while an app is being created. Until Nest's shutdown hooks are on, Node's default ends
 * the process by the signal, which a supervisor reads as a crash; from the start of `main`, this takes the
 * stop signals instead (over from `@dossier/runtime/before-nest`, which noted one that came while the
 * modules loaded): they abort `signal` (the start-up waits end on it), and `handOver` then closes the app
 * and exits 0.
 */
export class StopWhileStarting {
  private readonly stopping = new AbortController();
  private readonly stop = (): void => this.stopping.abort();

  constructor() {
    for (const signal of STOP_SIGNALS) process.on(signal, this.stop);
    if (takeEarlyStop()) this.stop();
  }

  get signal(): AbortSignal {
    return this.stopping.signal;
  }

  /**
   * The created app takes the stop signals over (Nest's hooks, exiting 0 once closed: Nest's default would
   * re-raise the signal); if one came meanwhile, the app is closed now and the process exits 0.
   */
  async handOver(app: Closable, log: (message: string) => void): Promise<void> {
    for (const signal of STOP_SIGNALS) process.off(signal, this.stop);
    if (this.stopping.signal.aborted) {
      log('stopped before it was up: closing');
      await app.close();
      process.exit(0);
    }
    app.enableShutdownHooks([...STOP_SIGNALS], { useProcessExit: true });
  }
}
