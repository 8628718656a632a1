import type { Worker } from 'bullmq';

/**
 * Closes BullMQ workers the graceful way (no new jobs; the active ones finish) but waits at most
 * `graceMs` (WORKER_SHUTDOWN_GRACE_MS); true when it stopped waiting. A close also waits for Redis: each
 * worker's connections say QUIT through their offline queue, which during an outage holds it until Redis
 * is back. Not `close(true)` at the deadline: BullMQ hands back the close already under way. Shutdown
 * goes on instead and the process exits; a job still active is redelivered once its lock expires (a
 * settle is idempotent, so one that got through is not charged twice).
 *
 * `starting` aborted: the stop came while the worker was still starting, waiting for Redis, so its workers
 * have taken nothing (one taken the moment Redis came is redelivered): the close goes on unawaited.
 */
export async function closeWithin(
  workers: readonly Worker[],
  graceMs: number,
  starting: AbortSignal,
): Promise<boolean> {
  const graceful = Promise.all(workers.map((w) => w.close()));
  if (starting.aborted) {
    graceful.catch(() => undefined);
    return false;
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    graceful.then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs).unref())),
  ]);
  clearTimeout(timer);
  if (timedOut) graceful.catch(() => undefined);
  return timedOut;
}
