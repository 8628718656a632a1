import { recordCountryOf } from './countries';
import { normalizeCompanyName, normalizePersonName } from './normalize';

/**
 * Sanctions lists the operator imports (`cli watchlists:import <list> FILE`, ADR 0064), and what the
 * `watchlists` provider screens names against. Wire strings: a hit names its list by this id.
 *
 * | id              | list                                                       | formats read           |
 * | --------------- | ---------------------------------------------------------- | ---------------------- |
 * | `ofac-sdn`      | US Treasury OFAC Specially Designated Nationals            | sdn.csv (+ alt.csv), sdn.xml |
 * | `un-sc`         | UN Security Council Consolidated List                      | consolidated XML       |
 * | `eu-fsf`        | EU Consolidated Financial Sanctions List                   | FSF CSV (`;`), FSF XML |
 * | `uk-sanctions`  | UK Sanctions List (FCDO), or OFSI's Consolidated List      | CSV                    |
 * | `opensanctions` | OpenSanctions (licensed), FollowTheMoney entities          | JSON lines             |
 */
export const WATCHLISTS = ['ofac-sdn', 'un-sc', 'eu-fsf', 'uk-sanctions', 'opensanctions'] as const;
export type Watchlist = (typeof WATCHLISTS)[number];

export function isWatchlist(value: string): value is Watchlist {
  return (WATCHLISTS as readonly string[]).includes(value);
}

/** A listed subject: a person, or an organisation (a company, a group, a government body). */
export type WatchlistEntityType = 'person' | 'organisation';

/** One entry of a list as an importer hands it over: its names as the list writes them. */
export interface WatchlistEntry {
  list: Watchlist;
  /** The list's own id of the entry (OFAC's uid, the UN's reference number, the EU's logical id, …). */
  entry_id: string;
  entity_type: WatchlistEntityType;
  /** The primary name. */
  name: string;
  /** Every other name the list gives (a.k.a., f.k.a., spelling variations, original script). */
  aliases: string[];
  /** The sanctions programmes or regimes the entry is listed under. */
  programmes: string[];
  /** Years of birth the list gives (a person may have several, or a range). */
  birth_years: number[];
  /** ISO 3166-1 alpha-2 codes of its nationalities, citizenships and addresses. */
  countries: string[];
}

/** An entry as stored, with each of its names folded as the name matcher reads them. */
export interface WatchlistRow extends WatchlistEntry {
  names: { name: string; name_key: string }[];
}

/** A name as the matcher compares it: a person's as the local person index folds them, an organisation's without its legal form. */
export function watchlistNameKey(entityType: WatchlistEntityType, name: string): string {
  return entityType === 'person' ? normalizePersonName(name) : normalizeCompanyName(name);
}

/** The entry's names, each folded, each key once, none empty; the primary name first. */
export function watchlistRowOf(entry: WatchlistEntry): WatchlistRow {
  const names = new Map<string, string>();
  for (const name of [entry.name, ...entry.aliases]) {
    const key = watchlistNameKey(entry.entity_type, name);
    if (key !== '' && !names.has(key)) names.set(key, name.trim());
  }
  return {
    ...entry,
    name: entry.name.trim(),
    aliases: [...new Set(entry.aliases.map((a) => a.trim()).filter((a) => a !== '' && a !== entry.name.trim()))],
    programmes: [...new Set(entry.programmes.map((p) => p.trim()).filter((p) => p !== ''))],
    birth_years: [...new Set(entry.birth_years)].sort((a, b) => a - b),
    countries: [...new Set(entry.countries)].sort(),
    names: [...names].map(([name_key, name]) => ({ name, name_key })),
  };
}

/** A country as a list writes it ("Iran", "IR", "Russian Federation"): its ISO code, or null. */
export function watchlistCountryOf(value: string | null | undefined): string | null {
  if (!value || value.trim() === '') return null;
  return recordCountryOf(value);
}

/** The years a date or year as lists write them names: `1960`, `1960-04-28`, `28/04/1960`, `28 Apr 1960`, `circa 1960`. */
export function yearsIn(value: string | null | undefined): number[] {
  if (!value) return [];
  const years = [...value.matchAll(/(?<![0-9])(1[89][0-9]{2}|20[0-9]{2})(?![0-9])/g)].map((m) => Number(m[1]));
  // "1960 to 1962": every year of the range.
  const range = /(?<![0-9])(1[89][0-9]{2}|20[0-9]{2})\s*(?:to|-|–)\s*(1[89][0-9]{2}|20[0-9]{2})(?![0-9])/.exec(value);
  if (range) {
    const [from, to] = [Number(range[1]), Number(range[2])];
    for (let y = from; y <= to && to - from <= 10; y++) years.push(y);
  }
  return [...new Set(years)];
}

/** What the watchlists provider asks the lists: names of one entity type holding one of these words. */
export interface WatchlistSearch {
  entity_type: WatchlistEntityType;
  /** The searched name, folded (watchlistNameKey). */
  name_key: string;
  /** Each word of it with the names it may be written as (nicknames): a name holding one of any group is a candidate. */
  words: string[];
}

/** The imported lists as the `watchlists` provider reads them (WatchlistRepository in persistence). */
export interface WatchlistIndex {
  /** The lists imported, by id. */
  lists(): Promise<string[]>;
  /** Candidate entries for a name: sharing a word with it, or like it by trigram similarity; at most `limit`. */
  findEntries(search: WatchlistSearch, limit: number): Promise<WatchlistRow[]>;
  /**
   * findEntries for several names in one statement (ADR 0071): each search's candidates (at most `limit` each),
   * in the searches' order, and whether any list is imported at all.
   */
  findEntriesOfMany(searches: readonly WatchlistSearch[], limit: number): Promise<WatchlistCandidates>;
}

/** What findEntriesOfMany answers: `imported` false when no list is imported (then no search found anything). */
export interface WatchlistCandidates {
  imported: boolean;
  /** The candidates of `searches[i]` at `i`. */
  entries: WatchlistRow[][];
}
