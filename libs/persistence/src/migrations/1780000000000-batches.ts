import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Batches (ADR 0019): one row per `POST /v1/batch`, its items in request order (each the search it
 * started or the error it got), and each started search pointing back at its batch.
 */
export class Batches1780000000000 implements MigrationInterface {
  name = 'Batches1780000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE batches (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        key_id text NOT NULL,
        items jsonb NOT NULL,
        idempotency_key text,
        request_hash text,
        request_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      )`);
    await q.query(
      `CREATE UNIQUE INDEX batches_idempotency_idx ON batches (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );
    await q.query(`ALTER TABLE searches ADD COLUMN batch_id text`);
    await q.query(`CREATE INDEX searches_batch_idx ON searches (batch_id) WHERE batch_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX searches_batch_idx`);
    await q.query(`ALTER TABLE searches DROP COLUMN batch_id`);
    await q.query(`DROP TABLE batches`);
  }
}
