import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks (ADR 0020): an account's endpoints, each with its signing secret encrypted (AES-256-GCM under
 * WEBHOOK_SECRET_KEY, never in plain text), and every delivery attempt.
 */
export class Webhooks1760000000000 implements MigrationInterface {
  name = 'Webhooks1760000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        url text NOT NULL,
        events text[] NOT NULL,
        secret_sealed text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhooks_account_idx ON webhooks (account_id)`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id bigserial PRIMARY KEY,
        webhook_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        event_id text NOT NULL,
        event_type text NOT NULL,
        attempt integer NOT NULL,
        outcome text NOT NULL CHECK (outcome IN ('delivered', 'retrying', 'failed')),
        status_code integer,
        error text,
        duration_ms integer NOT NULL,
        attempted_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhooks`);
  }
}
