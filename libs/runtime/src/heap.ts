import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's name for the flag, as it may be written on a command line (dashes or underscores, `--no-` to turn it off). */
const BASELINE_FLUSH = /^--(?:no-?)?flush[-_]baseline[-_]code(?:=|$)/;

/**
 * Tunes V8's heap for the gateway and the worker, first thing in `main` (both read at every full
 * collection, so setting them at run time is enough and every launcher gets them):
 *
 * - caps how far V8 lets the old generation grow past what its last full collection kept alive
 *   (HEAP_GROWING_PERCENT; ADR 0025). V8's own factor (1.1–4, by how fast it collects) let a loaded
 *   worker keep ~80 MiB of garbage; 10 % keeps RSS near the live set at no measured throughput cost.
 *   0 leaves V8's factor;
 * - flushes the baseline (Sparkplug) code of functions that have not run for a while, as V8 already
 *   does their bytecode (ADR 0032). V8 leaves it off by default, and then keeps the machine code of
 *   everything that ran a few times at start (Nest's bootstrap, module initialisers) — and that
 *   code's bytecode — for good: ~6 MiB of a loaded gateway's RSS. A function that runs again is
 *   compiled again. A `--flush-baseline-code` or `--no-flush-baseline-code` on the process's own command
 *   line (`execArgv`; Node refuses V8 flags like it in NODE_OPTIONS) wins.
 */
export function tuneHeap(growingPercent: number): void {
  if (growingPercent > 0) setFlagsFromString(`--heap-growing-percent=${growingPercent}`);
  if (!process.execArgv.some((option) => BASELINE_FLUSH.test(option))) setFlagsFromString('--flush-baseline-code');
}

/**
 * One full collection, once the app is created (ADR 0075). HEAP_GROWING_PERCENT bounds the old generation
 * from the last full collection's live set, and until the first one V8 has only its start-up limit: a
 * worker hit by 1,000 searches at once grew it to 133 MiB before collecting, and the process kept that
 * RSS (about 245 MiB against 175) for the rest of its life. Collected here, the limit follows the live set
 * from the first burst on. Takes tens of milliseconds, once. `gc` is reached through a fresh context with
 * `--expose-gc` set only for that moment: the process's own global never has it.
 */
export function collectOnce(): void {
  setFlagsFromString('--expose-gc');
  try {
    (runInNewContext('gc') as () => void)();
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/**
 * Node options every launcher starts the gateway and the worker with, on the Node whose version is
 * given (ADR 0029, ADR 0033): the Dockerfile's `NODE_OPTIONS` (and so docker-compose.yml and
 * deploy/k8s), the `start:gateway`/`start:worker` npm scripts, `npm start`, and the tests' and the
 * bench's processes. Node reads them before any of our code runs, so `main` cannot set them.
 *
 * - `--max-semi-space-size=8`: semi-spaces of 8 MiB instead of V8's 16 take ~16 MiB off each process
 *   at no measured throughput cost (`setFlagsFromString` at run time changes nothing).
 * - `--experimental-async-context-frame`, before Node 24: AsyncLocalStorage (the request's logging
 *   context, nestjs-pino) then carries its store in V8's continuation data instead of a promise hook
 *   on every promise the process makes; ~12 % less gateway CPU per lookup. Node 24 does this by
 *   default and refuses the flag.
 */
export function appNodeFlags(nodeVersion: string = process.versions.node): readonly string[] {
  const flags = ['--max-semi-space-size=8'];
  return Number.parseInt(nodeVersion, 10) < 24 ? [...flags, '--experimental-async-context-frame'] : flags;
}

/** {@link appNodeFlags} for the Node running this code (the launchers start the apps with the same `node`). */
export const APP_NODE_FLAGS: readonly string[] = appNodeFlags();

/**
 * Environment every launcher adds for the gateway and the worker unless it is already set (ADR 0029):
 * glibc reads `MALLOC_ARENA_MAX` at the first allocation. Two arenas instead of up to 8 per core keep
 * memory that V8's background threads freed from staying resident in arenas of their own (~6 MiB in a
 * loaded worker).
 */
export const APP_PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
