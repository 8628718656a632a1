import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sanctions lists the operator imports (ADR 0064): one row per list imported, its entries, each entry's names
 * folded for the name matcher (found by their words: GIN), and every word of them (of three letters or more)
 * once, with a trigram index: a searched word finds the listed words like it ("lukashenka" for "lukashenko"),
 * then the names holding them. An import replaces a list's entries in one transaction.
 */
export class Watchlists2164000000000 implements MigrationInterface {
  name = 'Watchlists2164000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE watchlists (
        list text PRIMARY KEY,
        entries integer NOT NULL,
        file_sha256 text NOT NULL,
        imported_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE watchlist_entries (
        list text NOT NULL CONSTRAINT watchlist_entries_list_fkey REFERENCES watchlists (list) ON DELETE CASCADE,
        entry_id text NOT NULL,
        entity_type text NOT NULL
          CONSTRAINT watchlist_entries_entity_type_check CHECK (entity_type IN ('person', 'organisation')),
        name text NOT NULL,
        aliases text[] NOT NULL DEFAULT '{}',
        programmes text[] NOT NULL DEFAULT '{}',
        birth_years integer[] NOT NULL DEFAULT '{}',
        countries text[] NOT NULL DEFAULT '{}',
        CONSTRAINT watchlist_entries_pkey PRIMARY KEY (list, entry_id)
      )`);
    await q.query(`
      CREATE TABLE watchlist_names (
        list text NOT NULL,
        entry_id text NOT NULL,
        name_key text NOT NULL,
        name text NOT NULL,
        entity_type text NOT NULL,
        CONSTRAINT watchlist_names_pkey PRIMARY KEY (list, entry_id, name_key),
        CONSTRAINT watchlist_names_entry_fkey FOREIGN KEY (list, entry_id)
          REFERENCES watchlist_entries (list, entry_id) ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX watchlist_names_words_idx ON watchlist_names USING gin (string_to_array(name_key, ' '))`,
    );
    await q.query(`CREATE TABLE watchlist_words (word text CONSTRAINT watchlist_words_pkey PRIMARY KEY)`);
    await q.query(`CREATE INDEX watchlist_words_trgm_idx ON watchlist_words USING gin (word gin_trgm_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE watchlist_words`);
    await q.query(`DROP TABLE watchlist_names`);
    await q.query(`DROP TABLE watchlist_entries`);
    await q.query(`DROP TABLE watchlists`);
  }
}
