import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The retention pass erases a batch's `request_hash` (a hash of its whole body: every item's input) and
 * its `idempotency_key` once it is older than `RESULTS_TTL_DAYS`, as it does a search's. This index holds
 * the batches that still keep either, so each pass reads only those.
 */
export class BatchesRetention1820000000000 implements MigrationInterface {
  name = 'BatchesRetention1820000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX batches_retained_idx ON batches (created_at)
        WHERE request_hash IS NOT NULL OR idempotency_key IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX batches_retained_idx`);
  }
}
