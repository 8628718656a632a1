import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The transactional outbox (ADR 0062): a row per settled search that may send events (its account has a
 * webhook, or it belongs to a batch), written by the statement that settles it; the worker's relay queues
 * the events and deletes the row.
 */
export class Outbox2150000000000 implements MigrationInterface {
  name = 'Outbox2150000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE outbox (
        id bigserial PRIMARY KEY,
        search_id text NOT NULL,
        event text NOT NULL CONSTRAINT outbox_event_check CHECK (event IN ('search.completed', 'search.failed')),
        announce boolean NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE outbox`);
  }
}
