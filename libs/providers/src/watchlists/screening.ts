import { watchlistNameKey, type WatchlistEntityType, type WatchlistRow } from '@dossier/domain';
import type { WatchlistHit } from '@dossier/contracts';
import { nameMatchScore } from '../local/name-match';

/**
 * The name score a listed entry must reach to be a hit (ADR 0064), on the local search's name matcher
 * (order-free; nicknames 0.9, initials 0.85, typos and transliterations by edit distance; a missing middle
 * name costs at most 15%). Chosen by the quality measurement in `screening-quality.int-spec.ts`: on its
 * generated set it keeps the recall of listed names under transliteration, word order, missing middle names
 * and nicknames at or above 0.95 and false hits on 10,000 names not listed at or below 0.5%.
 */
export const WATCHLIST_THRESHOLD = 0.85;

/** Years of birth more than this apart are two people (as identity resolution reads them, ADR 0046). */
const BIRTH_YEAR_SLACK = 1;

/** What is screened: a subject's names as written, and its years of birth and countries where known. */
export interface ScreenedSubject {
  names: readonly string[];
  birth_years: readonly number[];
  countries: readonly string[];
}

/** A listed entry that matched, and the hit it makes. */
export interface Match {
  row: WatchlistRow;
  hit: WatchlistHit;
}

/**
 * The entries among `rows` that `subject` matches, best first: the best name score over every pair of names
 * at WATCHLIST_THRESHOLD or more, and — when both sides know them — years of birth at most a year apart (a
 * conflict is no hit; an agreement is in `matched_on`, as a shared country is).
 */
export function matchesOf(
  entityType: WatchlistEntityType,
  subject: ScreenedSubject,
  rows: readonly WatchlistRow[],
  threshold = WATCHLIST_THRESHOLD,
): Match[] {
  const searched = [...new Set(subject.names.map((n) => watchlistNameKey(entityType, n)).filter((k) => k !== ''))].map(
    (k) => k.split(' '),
  );
  const out: Match[] = [];
  for (const row of rows) {
    if (row.entity_type !== entityType) continue;
    let best = 0;
    let listed = row.name;
    for (const name of row.names) {
      const tokens = name.name_key.split(' ');
      for (const s of searched) {
        const score = nameMatchScore(s, tokens);
        if (score > best) [best, listed] = [score, name.name];
      }
    }
    if (best < threshold) continue;
    const matchedOn: WatchlistHit['matched_on'] = ['name'];
    if (subject.birth_years.length > 0 && row.birth_years.length > 0) {
      const agree = subject.birth_years.some((a) => row.birth_years.some((b) => Math.abs(a - b) <= BIRTH_YEAR_SLACK));
      if (!agree) continue;
      matchedOn.push('birth_year');
    }
    if (subject.countries.some((c) => row.countries.includes(c))) matchedOn.push('country');
    out.push({
      row,
      hit: {
        list: row.list,
        entry_id: row.entry_id,
        listed_name: listed,
        programme: row.programmes.length > 0 ? row.programmes.join('; ') : null,
        match_score: Math.round(best * 1000) / 1000,
        matched_on: matchedOn,
      },
    });
  }
  return out.sort((a, b) => b.hit.match_score - a.hit.match_score || a.hit.entry_id.localeCompare(b.hit.entry_id));
}
