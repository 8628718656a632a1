import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Test (sandbox) keys (ADR 0021): each key is `live` or `test`; every key made before is live. */
export class ApiKeyMode1770000000000 implements MigrationInterface {
  name = 'ApiKeyMode1770000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE api_keys ADD COLUMN mode text NOT NULL DEFAULT 'live' CONSTRAINT api_keys_mode_check CHECK (mode IN ('live', 'test'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys DROP COLUMN mode`);
  }
}
