import type { MigrationInterface, QueryRunner } from 'typeorm';
import { applySqlFunctions } from '../credits/sql-functions';

/**
 * The credits module's SQL functions from their one definition (`libs/persistence/src/credits/sql-functions.ts`),
 * each marked with its version. A later change to a definition ships with a migration like this one.
 */
export class SqlFunctions2151000000000 implements MigrationInterface {
  name = 'SqlFunctions2151000000000';

  async up(q: QueryRunner): Promise<void> {
    await applySqlFunctions(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP FUNCTION dossier_reserve(text[], text[], text[], text[], jsonb[], integer[], text[], text[], text[], text[], text[], integer)`,
    );
  }
}
