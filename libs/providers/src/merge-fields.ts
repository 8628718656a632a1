/**
 * How the fields of several items about one subject become one item's: the helpers every kind's merge
 * shares (merge.ts, identity/resolve-people.ts).
 */

export type Ranked<T> = { precedence: number; item: T }[];

/**
 * The value of the highest-precedence item where it is known (not null, not `unknown`, not an empty
 * string or list): a provider leaves a field it does not know so (Twilio has no time zones or
 * international format), and a lower precedence's value stands there.
 */
export function firstKnown<T, F extends keyof T>(ranked: Ranked<T>, field: F): T[F] {
  const known = ranked.find(({ item }) => {
    const v = item[field];
    return v !== null && v !== 'unknown' && v !== '' && !(Array.isArray(v) && v.length === 0);
  });
  return (known ?? ranked[0]!).item[field];
}

export function unionSources(items: { sources: string[] }[]): string[] {
  return [...new Set(items.flatMap((i) => i.sources))];
}

export function unionBy<T>(lists: T[][], keyOf: (v: T) => string = String): T[] {
  const seen = new Map<string, T>();
  for (const v of lists.flat()) if (!seen.has(keyOf(v))) seen.set(keyOf(v), v);
  return [...seen.values()];
}

/** How the values of each list field of an item compare: the same key is the same value, kept once. */
export type ListKeys<T> = Partial<Record<keyof T, (value: never, item: T) => string>>;

export const asWritten = (value: unknown): string => JSON.stringify(value);

/**
 * Scalars from the highest precedence that knows them; lists unioned, each value once by its list's key
 * (the first part's spelling kept); sources unioned; the best score.
 */
export function mergeSubject<T extends { id: string; match_score: number; matched_on: string[]; sources: string[] }>(
  ranked: Ranked<T>,
  lists: ListKeys<T>,
): T {
  const merged = { ...ranked[0]!.item };
  for (const field of Object.keys(merged) as (keyof T)[]) {
    const keyOf = lists[field] as ((value: unknown, item: T) => string) | undefined;
    (merged as Record<keyof T, unknown>)[field] = keyOf
      ? unionBy(
          ranked.map(({ item }) => (item[field] as unknown[]).map((value) => ({ value, key: keyOf(value, item) }))),
          (v) => v.key,
        ).map((v) => v.value)
      : firstKnown(ranked, field);
  }
  merged.id = ranked[0]!.item.id;
  merged.match_score = Math.max(...ranked.map((r) => r.item.match_score));
  merged.matched_on = unionBy(ranked.map((r) => r.item.matched_on));
  merged.sources = unionSources(ranked.map((r) => r.item));
  return merged;
}

export function bestFirst<T extends { match_score: number }>(items: T[]): T[] {
  return items.sort((a, b) => b.match_score - a.match_score);
}

export function keyOrNone(prefix: string, value: string | null): string[] {
  return value ? [`${prefix}:${value}`] : [];
}
