import {
  watchlistCountryOf,
  yearsIn,
  type Watchlist,
  type WatchlistEntityType,
  type WatchlistEntry,
} from '@dossier/domain';

/**
 * Each list's published formats, read into entries (ADR 0064, docs/cli.md "watchlists:import"): an entry
 * with the line it starts on, a line that is not one (`reason`; `stopped` when the read could not go on), or
 * a record that is neither a person nor an organisation (a vessel, an aircraft: `other`).
 */
export type ListItem =
  | { line: number; entry: WatchlistEntry }
  | { line: number; reason: string; stopped?: true }
  | { line: number; other: string };

export interface ListFiles {
  file: string;
  /** OFAC's alt.csv (aliases of sdn.csv's entries by ent_num), when given. */
  aliases?: string;
}

export const distinct = (values: (string | null | undefined)[]) => [
  ...new Set(values.map((v) => v?.replace(/\s+/g, ' ').trim()).filter((v): v is string => !!v)),
];
export const countriesOf = (values: (string | null | undefined)[]) =>
  distinct(values.map((v) => watchlistCountryOf(v)));
export const yearsOf = (values: (string | null | undefined)[]) => [...new Set(values.flatMap((v) => yearsIn(v)))];

export type Built = Omit<WatchlistEntry, 'list'> | { other: string } | { reason: string };

export function itemOf(list: Watchlist, line: number, built: Built): ListItem {
  if ('other' in built || 'reason' in built) return { line, ...built };
  if (built.entry_id.trim() === '') return { line, reason: 'no entry id' };
  if (built.name.trim() === '') return { line, reason: `entry ${built.entry_id}: no name` };
  return { line, entry: { list, ...built, entry_id: built.entry_id.trim() } };
}

export function euType(code: string | undefined): WatchlistEntityType | null {
  const c = code?.trim().toLowerCase();
  return c === 'person' || c === 'p' ? 'person' : c === 'enterprise' || c === 'e' ? 'organisation' : null;
}
