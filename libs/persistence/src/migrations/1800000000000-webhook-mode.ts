import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks belong to a mode (ADR 0034): the mode of the key that registered them. A webhook takes the
 * events of its mode's searches and batches only, and a key manages only its mode's webhooks. Every
 * webhook made before was taking live events: it stays live.
 */
export class WebhookMode1800000000000 implements MigrationInterface {
  name = 'WebhookMode1800000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhooks ADD COLUMN mode text NOT NULL DEFAULT 'live' CONSTRAINT webhooks_mode_check CHECK (mode IN ('live', 'test'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks DROP COLUMN mode`);
  }
}
