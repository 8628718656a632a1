import { distance } from 'fastest-levenshtein';

/**
 * How well a searched name matches a name on record, in [0, 1], from their folded tokens
 * (normalizePersonName / normalizeCompanyName output). Order-free — "Smith John" is "John Smith" —
 * and forgiving the way people write names:
 *
 * - a token equal to one on record counts 1; an initial ("J" or "J.") against a name starting with it 0.85;
 *   a typo counts by edit distance (1 − distance ÷ length, from 0.6 up; else nothing);
 * - the score is the mean over the searched tokens, times a coverage factor: names on record that the
 *   search did not mention (a middle name) cost a little (at most 15%), so "Ada Lovelace" still finds
 *   "Augusta Ada Lovelace", but below the record that is exactly "Ada Lovelace".
 */
export function nameMatchScore(searched: readonly string[], recorded: readonly string[]): number {
  if (searched.length === 0 || recorded.length === 0) return 0;
  const used = new Set<number>();
  let total = 0;
  for (const q of searched) {
    let best = 0;
    let bestAt = -1;
    for (const [i, r] of recorded.entries()) {
      if (used.has(i)) continue;
      const s = tokenScore(q, r);
      if (s > best) {
        best = s;
        bestAt = i;
      }
    }
    if (bestAt >= 0) used.add(bestAt);
    total += best;
  }
  const coverage = used.size / recorded.length;
  return (total / searched.length) * (0.85 + 0.15 * coverage);
}

function tokenScore(q: string, r: string): number {
  if (q === r) return 1;
  if (q.length === 1 || r.length === 1) return q[0] === r[0] ? 0.85 : 0;
  const longest = Math.max(q.length, r.length);
  const s = 1 - distance(q, r) / longest;
  return s >= 0.6 ? s : 0;
}
