import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two partial indexes for the worker's upkeep of batches:
 * - `batches_retained_idx`: the batches that still keep a `request_hash` (a hash of the whole body:
 *   every item's input) or an `idempotency_key`, which the retention pass erases once a batch is older
 *   than `RESULTS_TTL_DAYS`, as it does a search's;
 * - `batches_open_idx`: the batches not yet completed, which the reconciler completes when none of
 *   their searches is pending any more (a gateway that released the last ones runs no completion check).
 */
export class BatchesUpkeep1820000000000 implements MigrationInterface {
  name = 'BatchesUpkeep1820000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX batches_retained_idx ON batches (created_at)
        WHERE request_hash IS NOT NULL OR idempotency_key IS NOT NULL`,
    );
    await q.query(`CREATE INDEX batches_open_idx ON batches (created_at) WHERE completed_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX batches_open_idx`);
    await q.query(`DROP INDEX batches_retained_idx`);
  }
}
