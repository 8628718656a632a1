/**
 * How the bench's own helper processes (noop-worker.ts, http-floor-front.ts) run: `start` sets the
 * process up and returns how to close it; SIGTERM or SIGINT closes it and exits (0, or 1 when closing
 * failed); a failed start prints the error and exits 1.
 */
export function runBenchProcess(start: () => Promise<() => void | Promise<void>>): void {
  start().then(
    (close) => {
      const stop = () => {
        Promise.resolve()
          .then(close)
          .then(
            () => process.exit(0),
            () => process.exit(1),
          );
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
