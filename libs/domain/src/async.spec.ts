import { mapLimit } from './async';

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
