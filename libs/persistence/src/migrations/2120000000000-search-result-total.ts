import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How many items a person search found that passed its `min_score` before its `limit` cut them (ADR 0047):
 * null for other kinds and for searches settled before.
 */
export class SearchResultTotal2120000000000 implements MigrationInterface {
  name = 'SearchResultTotal2120000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE searches ADD COLUMN result_total integer CHECK (result_total >= 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE searches DROP COLUMN result_total`);
  }
}
