import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The suppression list (data-subject opt-outs): one row per subject, keyed by the SHA-256 of its
 * normalised key (libs/domain/src/suppression.ts), with a masked hint for people reading the list.
 * No readable e-mail, number or name is stored (ADR 0015).
 */
export class Suppressions1730000000000 implements MigrationInterface {
  name = 'Suppressions1730000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE suppressions (
        id text PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('email', 'phone', 'name')),
        key_hash text NOT NULL UNIQUE,
        hint text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE suppressions`);
  }
}
