/**
 * `task` over each of `items`, at most `atOnce` running at a time, answered in the items' order: for
 * tests that make thousands of searches, where one at a time leaves the database idle while each answer
 * is read and one per item at once queues them all behind the connection pool.
 */
export async function inTurns<T, R>(items: readonly T[], atOnce: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const answers = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const k = next++;
      answers[k] = await task(items[k]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(atOnce, items.length)) }, worker));
  return answers;
}
