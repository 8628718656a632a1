import { MicroBatcher } from './micro-batcher';

describe('MicroBatcher', () => {
  it('runs the calls of one window as one batch and hands each caller its own result', async () => {
    const batches: number[][] = [];
    const batcher = new MicroBatcher<number, number>(
      (items) => {
        batches.push(items);
        return Promise.resolve(items.map((n) => n * 10));
      },
      5,
      100,
    );
    const results = await Promise.all([1, 2, 3].map((n) => batcher.submit(n)));
    expect(results).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
    expect(await batcher.submit(4)).toBe(40);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('flushes at maxItems without waiting for the window', async () => {
    const batches: number[][] = [];
    const batcher = new MicroBatcher<number, number>(
      (items) => (batches.push(items), Promise.resolve(items)),
      60_000,
      2,
    );
    await Promise.all([batcher.submit(1), batcher.submit(2)]);
    expect(batches).toEqual([[1, 2]]);
  });

  it('rejects every caller of a failed batch, and keeps working afterwards', async () => {
    let fail = true;
    const batcher = new MicroBatcher<number, number>(
      (items) => (fail ? Promise.reject(new Error('database down')) : Promise.resolve(items)),
      1,
      10,
    );
    const outcomes = await Promise.allSettled([batcher.submit(1), batcher.submit(2)]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await batcher.submit(3)).toBe(3);
  });
});
