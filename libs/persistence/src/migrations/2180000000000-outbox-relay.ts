import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbox rows belong to the relay whose process settled them (ADR 0067): `relay` defaults to the connection's
 * `dossier.relay` setting (the process's QUEUE_PREFIX), and a relay claims only its own rows. Rows already
 * waiting take the migrating process's setting — `db:migrate` runs with the deployment's QUEUE_PREFIX — so
 * the deployment's relays send them after the upgrade instead of leaving them to nobody.
 */
export class OutboxRelay2180000000000 implements MigrationInterface {
  name = 'OutboxRelay2180000000000';

  async up(q: QueryRunner): Promise<void> {
    // The default is evaluated once for the rows already there: the migrating connection's setting.
    await q.query(`ALTER TABLE outbox ADD COLUMN relay text DEFAULT current_setting('dossier.relay', true)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox DROP COLUMN relay`);
  }
}
