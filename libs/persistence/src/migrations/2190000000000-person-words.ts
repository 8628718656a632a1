import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every word of the searchable person names, once (ADR 0070): a searched word no name holds (a typo) is
 * widened to the stored words nearest it — trigram similarity through this table's index, then at most two
 * edits (fuzzystrmatch's levenshtein) — before the words lookup, instead of trigram similarity over every
 * name. Filled here from person_names, then by the importer's writes.
 */
export class PersonWords2190000000000 implements MigrationInterface {
  name = 'PersonWords2190000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS fuzzystrmatch`);
    await q.query(`CREATE TABLE person_words (word text PRIMARY KEY)`);
    await q.query(`
      INSERT INTO person_words (word)
      SELECT DISTINCT w FROM person_names, unnest(string_to_array(name_key, ' ')) AS w WHERE w <> ''`);
    await q.query(`CREATE INDEX person_words_trgm_idx ON person_words USING gin (word gin_trgm_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE person_words`);
  }
}
