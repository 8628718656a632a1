import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbox rows belong to the relay whose process settled them (ADR 0067): `relay` defaults to the connection's
 * `dossier.relay` setting (the process's QUEUE_PREFIX), and a relay claims only its own rows. Rows already
 * waiting keep NULL, which a process without the setting claims, as before.
 */
export class OutboxRelay2180000000000 implements MigrationInterface {
  name = 'OutboxRelay2180000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox ADD COLUMN relay text DEFAULT current_setting('dossier.relay', true)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox DROP COLUMN relay`);
  }
}
