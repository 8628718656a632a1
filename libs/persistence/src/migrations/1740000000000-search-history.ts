import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search history and the audit export (ADR 0018): both read searches in (created_at, id) order, one
 * account's newest first (`GET /v1/searches`), everyone's oldest first (`cli audit:export`), in keyset
 * pages. `result_count` is written when a search settles, so the history keeps it after the retention
 * purge has cleared `results`.
 */
export class SearchHistory1740000000000 implements MigrationInterface {
  name = 'SearchHistory1740000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE searches ADD COLUMN result_count integer`);
    await q.query(`UPDATE searches SET result_count = json_array_length(results) WHERE results IS NOT NULL`);
    await q.query(`CREATE INDEX searches_account_created_idx ON searches (account_id, created_at, id)`);
    await q.query(`CREATE INDEX searches_created_idx ON searches (created_at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX searches_created_idx`);
    await q.query(`DROP INDEX searches_account_created_idx`);
    await q.query(`ALTER TABLE searches DROP COLUMN result_count`);
  }
}
