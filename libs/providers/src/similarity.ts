/**
 * The trigrams of a text as Postgres' pg_trgm extracts them: each word (a run of letters and digits,
 * lower-cased) padded with two spaces before and one after, every three consecutive characters of it.
 */
export function trigramsOf(text: string): Set<string> {
  const trigrams = new Set<string>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const padded = `  ${word} `;
    for (let i = 0; i + 3 <= padded.length; i++) trigrams.add(padded.slice(i, i + 3));
  }
  return trigrams;
}

/**
 * pg_trgm's `similarity(a, b)`: the trigrams the two texts share over all the trigrams of either, in
 * [0, 1] (1 for texts with the same words, 0 when none is shared). The same measure the local index
 * ranks names by in SQL, for scoring candidates that come from elsewhere (a registry's search) on the
 * same scale. Pass texts already normalised (e.g. `normalizeCompanyName`).
 */
export function trigramSimilarity(a: string, b: string): number {
  const left = trigramsOf(a);
  const right = trigramsOf(b);
  if (left.size === 0 || right.size === 0) return 0;
  let shared = 0;
  for (const t of left) if (right.has(t)) shared++;
  return shared / (left.size + right.size - shared);
}

/** pg_trgm's default `similarity_threshold`: below it, two names are not taken for one another. */
export const NAME_SIMILARITY_THRESHOLD = 0.3;
