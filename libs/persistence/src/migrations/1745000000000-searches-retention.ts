import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention (ADR 0016): the searches whose input is still kept, by age, so that each batch of the
 * purge reads only rows it will purge (purged rows leave the index). Searches purged before the
 * purge also cleared sources, request hash and Idempotency-Key get those cleared now.
 */
export class SearchesRetention1745000000000 implements MigrationInterface {
  name = 'SearchesRetention1745000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX searches_retained_idx ON searches (created_at) WHERE input IS NOT NULL`);
    await q.query(
      `UPDATE searches SET sources = NULL, request_hash = NULL, idempotency_key = NULL
        WHERE input IS NULL AND (sources IS NOT NULL OR request_hash IS NOT NULL OR idempotency_key IS NOT NULL)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX searches_retained_idx`);
  }
}
