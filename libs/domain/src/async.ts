/**
 * Settles with `work`, or rejects as soon as `signal` aborts (with `onAbort()`'s error, else the signal's
 * reason): a callee that ignores its signal still cannot outlive its deadline.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal, onAbort?: () => Error): Promise<T> {
  const reason = (): Error => onAbort?.() ?? toError(signal.reason);
  if (signal.aborted) {
    work.catch(() => undefined); // settles later, to nobody: not an unhandled rejection
    return Promise.reject(reason());
  }
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(reason());
    signal.addEventListener('abort', abort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(toError(error));
      },
    );
  });
}

/**
 * A signal that aborts `ms` from now with a `TimeoutError`, and `clear()` to drop it once the work it bounds
 * has ended. AbortSignal.timeout's timer cannot be cleared: each one still fires at its deadline (seconds
 * after a lookup that answered in milliseconds) and builds its DOMException and stack then, for nobody.
 */
export function deadlineSignal(ms: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    ms,
  );
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/**
 * `work` over every item, at most `limit` at a time, the results in the items' order. `work` reports its
 * own failures in its result: a rejection rejects the whole (the items still running go on, unawaited).
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return results;
}

/**
 * At most `size` holders at a time, shared by whoever takes from it; the others wait their turn, first
 * come first served. `take` resolves with the slot's release (calling it again does nothing); a wait
 * whose signal aborts first is left, rejected with the signal's reason.
 */
export class Slots {
  private busy = 0;
  private readonly queue: (() => void)[] = [];

  constructor(readonly size: number) {}

  /** How many hold a slot now. */
  get held(): number {
    return this.busy;
  }

  /** How many wait for a slot (the holders not counted): a caller that would join them can refuse instead. */
  get waiting(): number {
    return this.queue.length;
  }

  take(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(toError(signal.reason));
    if (this.busy < this.size && this.queue.length === 0) return Promise.resolve(this.hold());
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', leave);
        resolve(this.hold());
      };
      const leave = (): void => {
        const at = this.queue.indexOf(grant);
        if (at >= 0) this.queue.splice(at, 1);
        reject(toError(signal.reason));
      };
      signal.addEventListener('abort', leave, { once: true });
      this.queue.push(grant);
    });
  }

  private hold(): () => void {
    this.busy += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.busy -= 1;
      this.queue.shift()?.();
    };
  }
}

/** `ok` when `check` settles successfully within `timeoutMs`, else `unavailable` (health probes). */
export async function probe(check: () => Promise<unknown>, timeoutMs: number): Promise<'ok' | 'unavailable'> {
  try {
    await untilAborted(check(), AbortSignal.timeout(timeoutMs));
    return 'ok';
  } catch {
    return 'unavailable';
  }
}

function toError(value: unknown): Error {
  // AbortSignal.timeout() rejects with a DOMException, which is an Error in Node but not always across realms.
  if (value instanceof Error) return value;
  if (typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string') {
    return value as Error;
  }
  return new Error(String(value));
}

/**
 * Whether `work` settled before `signal` aborted: false once it has (the work goes on, unawaited); a
 * rejection before then is thrown. For waits a stop may cut short, such as waiting for Redis at start.
 */
export async function settledBefore(work: Promise<unknown>, signal: AbortSignal): Promise<boolean> {
  try {
    await untilAborted(work, signal);
    return true;
  } catch (error) {
    if (signal.aborted) return false;
    throw error;
  }
}

/**
 * Runs calls in batches without waiting for a window: while fewer than `maxInFlight` batches run, a call
 * goes at once (with whatever else arrived in the same tick); while they all run, calls queue and go
 * together when one finishes. Idle, it adds no latency; busy, batches grow with the load (up to
 * `maxItems`). Each caller gets its own item's result; if a batch fails, every caller in it gets the error.
 */
export class Coalescer<I, O> {
  private queued: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxItems: number,
    private readonly maxInFlight: number,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        queueMicrotask(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queued.length > 0) {
      const batch = this.queued.splice(0, this.maxItems);
      this.inFlight += 1;
      this.run(batch.map((b) => b.item))
        .then(
          (results) =>
            batch.forEach((b, k) =>
              k < results.length
                ? b.resolve(results[k]!)
                : b.reject(new Error(`batch returned ${results.length} results for ${batch.length} items`)),
            ),
          (err: unknown) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.pump();
        });
    }
  }
}
