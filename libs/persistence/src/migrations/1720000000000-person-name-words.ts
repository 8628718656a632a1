import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The words of each searchable name, indexed: the local person search looks for names holding every
 * searched word (any order) before it falls back to trigram similarity (ADR 0012).
 */
export class PersonNameWords1720000000000 implements MigrationInterface {
  name = 'PersonNameWords1720000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX person_names_words_idx ON person_names USING gin (string_to_array(name_key, ' '))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX person_names_words_idx`);
  }
}
