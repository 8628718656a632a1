import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row of `webhook_deliveries` per (webhook, event, attempt) (ADR 0020). A worker that died after
 * recording an attempt and before BullMQ recorded its outcome left the job to be taken again as stalled,
 * and the next worker recorded the same attempt a second time, as interrupted. The rows written so far
 * keep their first of each attempt (the outcome the attempt had), `failed` when a later twin ended the
 * event there, as `recordAttempt` now does.
 */
export class WebhookDeliveryPerAttempt1900000000000 implements MigrationInterface {
  name = 'WebhookDeliveryPerAttempt1900000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE webhook_deliveries d SET outcome = 'failed'
       WHERE d.outcome = 'retrying'
         AND EXISTS (SELECT 1 FROM webhook_deliveries t
                      WHERE t.webhook_id = d.webhook_id AND t.event_id = d.event_id AND t.attempt = d.attempt
                        AND t.id > d.id AND t.outcome = 'failed')
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries t
                          WHERE t.webhook_id = d.webhook_id AND t.event_id = d.event_id AND t.attempt = d.attempt
                            AND t.id < d.id)`);
    await q.query(`
      DELETE FROM webhook_deliveries d
       USING webhook_deliveries t
       WHERE t.webhook_id = d.webhook_id AND t.event_id = d.event_id AND t.attempt = d.attempt AND t.id < d.id`);
    await q.query(
      `CREATE UNIQUE INDEX webhook_deliveries_attempt_key ON webhook_deliveries (webhook_id, event_id, attempt)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_deliveries_attempt_key`);
  }
}
