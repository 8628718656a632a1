import { jest } from '@jest/globals';
import { Coalescer, deadlineSignal, mapLimit, settledBefore, Slots } from './async';

/** A promise the test settles by hand. */
function gate<T>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

describe('mapLimit', () => {
  it('runs at most `limit` at once, starts the next as one finishes, and keeps the order of the items', async () => {
    const gates = Array.from({ length: 5 }, () => gate<string>());
    const started: number[] = [];
    const all = mapLimit([0, 1, 2, 3, 4], 2, (item) => {
      started.push(item);
      return gates[item]!.promise;
    });
    await Promise.resolve();
    expect(started).toEqual([0, 1]);

    gates[1]!.open('b');
    await new Promise(setImmediate);
    expect(started).toEqual([0, 1, 2]);

    for (const [i, g] of [0, 2, 3, 4].map((i) => [i, gates[i]!] as const)) {
      g.open(String.fromCharCode(97 + i));
      await new Promise(setImmediate);
    }
    await expect(all).resolves.toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('answers an empty list at once, and a limit above the count runs everything together', async () => {
    await expect(mapLimit([], 4, () => Promise.resolve(1))).resolves.toEqual([]);
    const started: number[] = [];
    const never = new Promise<number>(() => undefined);
    void mapLimit([1, 2, 3], 32, (item) => {
      started.push(item);
      return never;
    });
    await Promise.resolve();
    expect(started).toEqual([1, 2, 3]);
  });
});

describe('Slots', () => {
  it('lets `size` hold at once and the others in turn, first come first served; a wait whose signal aborts leaves the line', async () => {
    const slots = new Slots(2);
    const never = new AbortController().signal;
    const order: string[] = [];
    const first = await slots.take(never);
    const second = await slots.take(never);
    const leaving = new AbortController();
    const waits = {
      c: slots.take(never).then((release) => (order.push('c'), release)),
      gone: slots.take(leaving.signal).then(() => order.push('gone')),
      d: slots.take(never).then((release) => (order.push('d'), release)),
    };
    expect({ held: slots.held, waiting: slots.waiting }).toEqual({ held: 2, waiting: 3 });
    leaving.abort(new Error('deadline'));
    await expect(waits.gone).rejects.toThrow('deadline');
    expect(slots.waiting).toBe(2);
    await new Promise(setImmediate);
    expect(order).toEqual([]);

    first();
    first(); // a second release gives nothing back
    const third = await waits.c;
    await new Promise(setImmediate);
    expect(order).toEqual(['c']);
    second();
    const fourth = await waits.d;
    expect(order).toEqual(['c', 'd']);
    third();
    fourth();
    expect({ held: slots.held, waiting: slots.waiting }).toEqual({ held: 0, waiting: 0 });
    await expect(slots.take(AbortSignal.abort(new Error('late')))).rejects.toThrow('late');
    await Promise.all([slots.take(never), slots.take(never)]);
  });
});

describe('Coalescer', () => {
  /** A run whose batches finish only when the test says so. */
  function gated() {
    const batches: { items: number[]; finish: () => void; fail: (e: Error) => void }[] = [];
    const run = (items: number[]) =>
      new Promise<number[]>((resolve, reject) => {
        batches.push({ items, finish: () => resolve(items.map((i) => i * 10)), fail: reject });
      });
    return { batches, run };
  }
  const tick = () => new Promise((r) => setImmediate(r));

  it('runs a lone call at once, alone', async () => {
    const { batches, run } = gated();
    const c = new Coalescer(run, 10, 1);
    const one = c.submit(1);
    await tick();
    expect(batches.map((b) => b.items)).toEqual([[1]]);
    batches[0]!.finish();
    await expect(one).resolves.toBe(10);
  });

  it('queues calls while every slot is busy and runs them together, each caller getting its own result', async () => {
    const { batches, run } = gated();
    const c = new Coalescer(run, 3, 1);
    const first = c.submit(1);
    await tick();
    const rest = [2, 3, 4, 5].map((i) => c.submit(i));
    await tick();
    expect(batches).toHaveLength(1);
    batches[0]!.finish();
    await first;
    await tick();
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3, 4]]);
    batches[1]!.finish();
    await tick();
    expect(batches[2]!.items).toEqual([5]);
    batches[2]!.finish();
    await expect(Promise.all(rest)).resolves.toEqual([20, 30, 40, 50]);
  });

  it('uses up to maxInFlight slots, and a failed batch fails its callers only', async () => {
    const { batches, run } = gated();
    const c = new Coalescer(run, 10, 2);
    const a = c.submit(1);
    await tick();
    const b = c.submit(2);
    await tick();
    expect(batches.map((x) => x.items)).toEqual([[1], [2]]);
    batches[0]!.fail(new Error('deadlock'));
    batches[1]!.finish();
    await expect(a).rejects.toThrow('deadlock');
    await expect(b).resolves.toBe(20);
  });
});

describe('settledBefore', () => {
  it('is true when the work settles first, false once the signal aborts first', async () => {
    const stop = new AbortController();
    await expect(settledBefore(Promise.resolve(1), stop.signal)).resolves.toBe(true);
    const waiting = settledBefore(new Promise(() => undefined), stop.signal);
    stop.abort();
    await expect(waiting).resolves.toBe(false);
    await expect(settledBefore(Promise.resolve(1), stop.signal)).resolves.toBe(false);
  });

  it('throws what the work rejects with before the signal aborts', async () => {
    await expect(settledBefore(Promise.reject(new Error('refused')), new AbortController().signal)).rejects.toThrow(
      'refused',
    );
  });
});

describe('deadlineSignal', () => {
  afterEach(() => jest.useRealTimers());

  it('aborts at its deadline with a TimeoutError, as AbortSignal.timeout does', () => {
    jest.useFakeTimers();
    const { signal } = deadlineSignal(50);
    jest.advanceTimersByTime(49);
    expect(signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('never fires once cleared: no timer is left behind the work it bounded', () => {
    jest.useFakeTimers();
    const { signal, clear } = deadlineSignal(50);
    expect(jest.getTimerCount()).toBe(1);
    clear();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(1_000);
    expect(signal.aborted).toBe(false);
  });
});
