import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A name entry also holds the hash of its key in the local index's fold (`alias_hash`: O'Brien as
 * "obrien", 王小明 as "wang xiaoming"), where that differs from its key, and a lookup's checks match
 * either column: an opt-out written "O'Brien" then covers a record written "OBrien". Entries made before
 * have none — a key is a hash and cannot be folded again — so they match as they always did (ADR 0015).
 */
export class SuppressionNameAliases2040000000000 implements MigrationInterface {
  name = 'SuppressionNameAliases2040000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE suppressions ADD COLUMN alias_hash text`);
    await q.query(`CREATE INDEX suppressions_alias_hash ON suppressions (alias_hash) WHERE alias_hash IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX suppressions_alias_hash`);
    await q.query(`ALTER TABLE suppressions DROP COLUMN alias_hash`);
  }
}
