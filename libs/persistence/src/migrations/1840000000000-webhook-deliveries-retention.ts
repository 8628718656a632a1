import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention of webhook delivery attempts (ADR 0020): the retention pass deletes the rows of
 * `webhook_deliveries` attempted more than `RESULTS_TTL_DAYS` ago, oldest first, a batch at a time;
 * `webhook_deliveries_attempted_idx` lets each batch read only rows it deletes instead of scanning the
 * table (one row per attempt: the largest of the webhook tables).
 */
export class WebhookDeliveriesRetention1840000000000 implements MigrationInterface {
  name = 'WebhookDeliveriesRetention1840000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX webhook_deliveries_attempted_idx ON webhook_deliveries (attempted_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_deliveries_attempted_idx`);
  }
}
