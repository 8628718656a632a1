import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  /** Give up after this long in all (ms). */
  timeoutMs: number;
  /** Give up when the observed value has not changed for this long (ms). */
  stallMs?: number;
  /** Poll interval (ms), backing off ×1.5 up to 250 ms. */
  intervalMs?: number;
  what?: string;
  /** Give up at once, with the signal's reason, when it aborts (e.g. the process being waited on exited). */
  signal?: AbortSignal;
}

/**
 * Polls `probe` until `done(value)` holds. Fails with the last value seen when it stalls or times out:
 * never a busy loop, never a bare sleep.
 */
export async function waitFor<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  options: WaitOptions,
): Promise<T> {
  const started = Date.now();
  let interval = options.intervalMs ?? 20;
  let last: T | undefined;
  let lastJson = '';
  let changedAt = started;
  for (;;) {
    options.signal?.throwIfAborted();
    let value: T | undefined;
    let error: unknown;
    try {
      value = await probe();
    } catch (err) {
      error = err;
    }
    if (value !== undefined && done(value)) return value;
    const json = JSON.stringify(value ?? String(error));
    if (json !== lastJson) {
      lastJson = json;
      changedAt = Date.now();
    }
    last = value;
    const now = Date.now();
    const label = options.what ?? 'condition';
    if (now - started > options.timeoutMs) {
      throw new Error(
        `timed out after ${options.timeoutMs}ms waiting for ${label}; last: ${JSON.stringify(last ?? String(error))}`,
      );
    }
    if (options.stallMs !== undefined && now - changedAt > options.stallMs) {
      throw new Error(
        `stalled for ${options.stallMs}ms waiting for ${label}; last: ${JSON.stringify(last ?? String(error))}`,
      );
    }
    await sleep(interval, undefined, { signal: options.signal }).catch(() => options.signal?.throwIfAborted());
    interval = Math.min(250, interval * 1.5);
  }
}
