import { distance } from 'fastest-levenshtein';
import { areVariants } from '../identity/nicknames';

/** What a match found only by joining words ("o brien" as "obrien") keeps of its score. */
const JOINED = 0.95;
/** A word matched by a nickname or variant of it ("Bob" for "Robert", identity/nicknames.ts): below an exact one. */
const NICKNAME = 0.9;
/** A word matched by its initial ("J" for "John"). */
const INITIAL = 0.85;

/**
 * How well a searched name matches a name on record, in [0, 1], from their folded tokens
 * (normalizePersonName / normalizeCompanyName output). Order-free — "Smith John" is "John Smith" —
 * and forgiving the way people write names:
 *
 * - a token equal to one on record counts 1; a nickname or variant of it ("Bob" for "Robert", "Pepe" for
 *   "José") 0.9; an initial ("J" or "J.") against a name starting with it 0.85;
 *   a typo counts by edit distance (1 − distance ÷ length, from 0.6 up; else nothing);
 * - the score is the mean over the searched tokens, times a coverage factor: names on record that the
 *   search did not mention (a middle name) cost a little (at most 15%), so "Ada Lovelace" still finds
 *   "Augusta Ada Lovelace", but below the record that is exactly "Ada Lovelace";
 * - words written apart on one side and together on the other ("O Brien" and "OBrien", "Wang Xiao Ming"
 *   and "Wang Xiaoming" or "Wangxiaoming") match as one word, at 95% of the score: two neighbouring words
 *   of one side, or all of them, joined — never both sides at once ("John Smith" is not "Johns Mith"), and
 *   only when every word of both names is then matched ("Li Na" is "Lina", not "Lina Smith").
 */
export function nameMatchScore(searched: readonly string[], recorded: readonly string[]): number {
  if (searched.length === 0 || recorded.length === 0) return 0;
  let best = aligned(searched, recorded).score;
  if (best === 1) return 1;
  for (const joined of joinings(searched)) best = Math.max(best, JOINED * wholeScore(joined, recorded));
  for (const joined of joinings(recorded)) best = Math.max(best, JOINED * wholeScore(searched, joined));
  return best;
}

/** Each searched token against its best unused recorded one, greedily in the searched order. */
function aligned(
  searched: readonly string[],
  recorded: readonly string[],
): { score: number; everyMatched: boolean; used: number } {
  const used = new Set<number>();
  let total = 0;
  let everyMatched = true;
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
    else everyMatched = false;
    total += best;
  }
  const coverage = used.size / recorded.length;
  return { score: (total / searched.length) * (0.85 + 0.15 * coverage), everyMatched, used: used.size };
}

/** The score when every token of both names is matched, one to one; else 0. */
function wholeScore(searched: readonly string[], recorded: readonly string[]): number {
  if (searched.length !== recorded.length) return 0;
  const { score, everyMatched } = aligned(searched, recorded);
  return everyMatched ? score : 0;
}

/** The tokens with two neighbours joined (each pair in turn), and all of them joined when there are more than two. */
function joinings(tokens: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i + 1 < tokens.length; i++) {
    out.push([...tokens.slice(0, i), tokens[i]! + tokens[i + 1]!, ...tokens.slice(i + 2)]);
  }
  if (tokens.length > 2) out.push([tokens.join('')]);
  return out;
}

function tokenScore(q: string, r: string): number {
  if (q === r) return 1;
  if (q.length === 1 || r.length === 1) return q[0] === r[0] ? INITIAL : 0;
  const longest = Math.max(q.length, r.length);
  const s = 1 - distance(q, r) / longest;
  const typo = s >= 0.6 ? s : 0;
  return areVariants(q, r) ? Math.max(NICKNAME, typo) : typo;
}
