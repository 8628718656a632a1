import type { DataSource } from 'typeorm';
import type { Watchlist, WatchlistCandidates, WatchlistIndex, WatchlistRow, WatchlistSearch } from '@dossier/domain';
import { inTransaction, queryRows, type Sql } from './sql';

/**
 * Candidate entries for a searched name (ADR 0064), every path through an index: the listed words like each
 * searched word of three letters or more ($5, pg_trgm similarity on watchlist_words: transliterations —
 * "aleksandr" and "alexander", "lukashenko" and "lukashenka"), then the names holding one of those or of the
 * searched words and their nicknames ($3: GIN on the words — word order, a missing middle name), the most like
 * the whole name first. Scoring is the provider's.
 */
export const FIND_WATCHLIST_ENTRIES = `
  WITH alike AS MATERIALIZED (
    SELECT coalesce(array_agg(DISTINCT w.word), '{}') AS words
      FROM unnest($5::text[]) AS q(word) JOIN watchlist_words w ON w.word % q.word
  ),
  named AS MATERIALIZED (
    SELECT list, entry_id, max(similarity(name_key, $2)) AS sim FROM watchlist_names
     WHERE entity_type = $1 AND string_to_array(name_key, ' ') && ($3::text[] || (SELECT words FROM alike))
     GROUP BY list, entry_id
     ORDER BY sim DESC
     LIMIT $4
  )
  SELECT e.list, e.entry_id, e.entity_type, e.name, e.aliases, e.programmes, e.birth_years, e.countries,
         (SELECT jsonb_agg(jsonb_build_object('name', n.name, 'name_key', n.name_key))
            FROM watchlist_names n WHERE n.list = e.list AND n.entry_id = e.entry_id) AS names
    FROM named h JOIN watchlist_entries e ON e.list = h.list AND e.entry_id = h.entry_id`;

/**
 * FIND_WATCHLIST_ENTRIES for several names in one statement (ADR 0071): the same two steps, per search ($1: a
 * JSON array of {i, entity_type, name_key, words, alike}, $2 the limit of each), each entry once with the searches
 * that found it, and whether any list is imported — one row (no list: no search runs).
 */
export const FIND_WATCHLIST_ENTRIES_OF_MANY = `
  WITH q AS MATERIALIZED (
    SELECT s.i, s.entity_type, s.name_key,
           ARRAY(SELECT jsonb_array_elements_text(s.words)) AS words,
           ARRAY(SELECT jsonb_array_elements_text(s.alike)) AS alike
      FROM jsonb_to_recordset($1::jsonb) AS s(i int, entity_type text, name_key text, words jsonb, alike jsonb)
     WHERE EXISTS (SELECT 1 FROM watchlists)
  ),
  found AS MATERIALIZED (
    SELECT h.list, h.entry_id, array_agg(DISTINCT q.i) AS searches
      FROM q CROSS JOIN LATERAL (
        SELECT n.list, n.entry_id, max(similarity(n.name_key, q.name_key)) AS sim FROM watchlist_names n
         WHERE n.entity_type = q.entity_type
           AND string_to_array(n.name_key, ' ') && (q.words || (
             SELECT coalesce(array_agg(DISTINCT w.word), '{}')
               FROM unnest(q.alike) AS l(word) JOIN watchlist_words w ON w.word % l.word))
         GROUP BY n.list, n.entry_id
         ORDER BY sim DESC
         LIMIT $2
      ) h
     GROUP BY h.list, h.entry_id
  )
  SELECT EXISTS (SELECT 1 FROM watchlists) AS imported,
         coalesce(jsonb_agg(jsonb_build_object(
           'list', e.list, 'entry_id', e.entry_id, 'entity_type', e.entity_type, 'name', e.name,
           'aliases', e.aliases, 'programmes', e.programmes, 'birth_years', e.birth_years, 'countries', e.countries,
           'names', (SELECT jsonb_agg(jsonb_build_object('name', n.name, 'name_key', n.name_key))
                       FROM watchlist_names n WHERE n.list = e.list AND n.entry_id = e.entry_id),
           'searches', f.searches)), '[]') AS entries
    FROM found f JOIN watchlist_entries e ON e.list = f.list AND e.entry_id = f.entry_id`;

/** Words shorter than this are found as written only: their trigrams say little. */
const MIN_ALIKE = 3;

const LISTS = `SELECT list FROM watchlists ORDER BY list`;

export class WatchlistRepository implements WatchlistIndex {
  constructor(private readonly db: DataSource) {}

  async lists(): Promise<string[]> {
    return (await queryRows<{ list: string }>(this.db, LISTS)).map((r) => r.list);
  }

  findEntries(search: WatchlistSearch, limit: number): Promise<WatchlistRow[]> {
    return queryRows<WatchlistRow>(this.db, FIND_WATCHLIST_ENTRIES, [
      search.entity_type,
      search.name_key,
      search.words,
      limit,
      likeWordsOf(search),
    ]);
  }

  async findEntriesOfMany(searches: readonly WatchlistSearch[], limit: number): Promise<WatchlistCandidates> {
    const entries: WatchlistRow[][] = searches.map(() => []);
    const json = searches.map((s, i) => ({ i, ...s, alike: likeWordsOf(s) }));
    const [row] = await queryRows<{ imported: boolean; entries: (WatchlistRow & { searches: number[] })[] }>(
      this.db,
      FIND_WATCHLIST_ENTRIES_OF_MANY,
      [JSON.stringify(json), limit],
    );
    for (const { searches: found, ...entry } of row?.entries ?? []) for (const i of found) entries[i]?.push(entry);
    return { imported: row?.imported ?? false, entries };
  }
}

/** The searched words long enough to be looked for by their trigrams. */
function likeWordsOf(search: WatchlistSearch): string[] {
  return [...new Set(search.name_key.split(' ').filter((w) => w.length >= MIN_ALIKE))];
}

/** What a list's import left: how many entries it has now, and how many it had before. */
export interface WatchlistReplaced {
  entries: number;
  previous: number;
}

/** Writes one list's entries, a batch at a time, inside the transaction that replaces the list. */
export type WatchlistWriter = (rows: readonly WatchlistRow[]) => Promise<void>;

const UPSERT_LIST = `
  INSERT INTO watchlists (list, entries, file_sha256, imported_at) VALUES ($1, 0, $2, now())
  ON CONFLICT (list) DO UPDATE SET file_sha256 = EXCLUDED.file_sha256, imported_at = now()`;
const PREVIOUS = `SELECT count(*)::int AS n FROM watchlist_entries WHERE list = $1`;
const DELETE_ENTRIES = `DELETE FROM watchlist_entries WHERE list = $1`;
const INSERT_ENTRIES = `
  INSERT INTO watchlist_entries (list, entry_id, entity_type, name, aliases, programmes, birth_years, countries)
  SELECT $1, e.entry_id, e.entity_type, e.name,
         ARRAY(SELECT jsonb_array_elements_text(e.aliases)), ARRAY(SELECT jsonb_array_elements_text(e.programmes)),
         ARRAY(SELECT (jsonb_array_elements_text(e.birth_years))::int), ARRAY(SELECT jsonb_array_elements_text(e.countries))
    FROM jsonb_to_recordset($2::jsonb) AS e(entry_id text, entity_type text, name text, aliases jsonb,
                                            programmes jsonb, birth_years jsonb, countries jsonb)
  ON CONFLICT (list, entry_id) DO NOTHING`;
const INSERT_NAMES = `
  INSERT INTO watchlist_names (list, entry_id, name_key, name, entity_type)
  SELECT $1, n.entry_id, n.name_key, n.name, n.entity_type
    FROM jsonb_to_recordset($2::jsonb) AS n(entry_id text, name_key text, name text, entity_type text)
  ON CONFLICT DO NOTHING`;
/** The words of the names, for the search's like-word step; a word no list holds any more finds nothing. */
const INSERT_WORDS = `
  INSERT INTO watchlist_words (word)
  SELECT DISTINCT w FROM unnest($1::text[]) AS n(name_key), unnest(string_to_array(n.name_key, ' ')) AS w
   WHERE length(w) >= ${MIN_ALIKE}
  ON CONFLICT DO NOTHING`;
const COUNT_LIST = `
  UPDATE watchlists SET entries = (SELECT count(*) FROM watchlist_entries WHERE list = $1) WHERE list = $1
  RETURNING entries`;

/**
 * Replaces every entry of `list` with what `write` is handed, in one transaction: readers see the old list
 * until the new one is complete, and a failed import (a write that fails, `fill` throwing) leaves the old
 * one as it was. An entry id given twice keeps its first entry.
 */
export async function replaceWatchlist(
  db: DataSource,
  list: Watchlist,
  fileSha256: string,
  fill: (write: WatchlistWriter) => Promise<void>,
): Promise<WatchlistReplaced> {
  return inTransaction(db, async (sql) => {
    await sql(UPSERT_LIST, [list, fileSha256]);
    const [{ n: previous } = { n: 0 }] = await sql<{ n: number }>(PREVIOUS, [list]);
    await sql(DELETE_ENTRIES, [list]);
    await fill((rows) => writeRows(sql, list, rows));
    const [counted] = await sql<{ entries: number }>(COUNT_LIST, [list]);
    return { entries: counted?.entries ?? 0, previous };
  });
}

async function writeRows(sql: Sql, list: Watchlist, rows: readonly WatchlistRow[]): Promise<void> {
  if (rows.length === 0) return;
  const entries = rows.map((r) => ({
    entry_id: r.entry_id,
    entity_type: r.entity_type,
    name: r.name,
    aliases: r.aliases,
    programmes: r.programmes,
    birth_years: r.birth_years,
    countries: r.countries,
  }));
  const names = rows.flatMap((r) =>
    r.names.map((n) => ({ entry_id: r.entry_id, name_key: n.name_key, name: n.name, entity_type: r.entity_type })),
  );
  await sql(INSERT_ENTRIES, [list, JSON.stringify(entries)]);
  await sql(INSERT_NAMES, [list, JSON.stringify(names)]);
  await sql(INSERT_WORDS, [names.map((n) => n.name_key)]);
}

/** The lists imported, with their sizes: for `cli watchlists:list`. */
export function watchlistsImported(
  db: DataSource,
): Promise<{ list: string; entries: number; file_sha256: string; imported_at: Date }[]> {
  return queryRows(db, `SELECT list, entries, file_sha256, imported_at FROM watchlists ORDER BY list`);
}
