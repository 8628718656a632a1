import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A grant may carry the operator's reference (`credits:grant … --reference INV-42`), at most one grant per
 * reference: an operator whose command timed out runs it again, and the second run grants nothing
 * instead of granting twice. Only grants carry one; the signup grant and every grant made before carry
 * none (NULLs are distinct, so they never conflict).
 */
export class GrantReferences1930000000000 implements MigrationInterface {
  name = 'GrantReferences1930000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE credit_ledger ADD COLUMN reference text`);
    // Every row there has no reference yet: NOT VALID skips checking them (a scan of the whole ledger under
    // an exclusive lock, which would hold up every lookup's reservation); new rows are checked all the same.
    await q.query(
      `ALTER TABLE credit_ledger ADD CONSTRAINT credit_ledger_reference_check
         CHECK (reference IS NULL OR phase = 'grant') NOT VALID`,
    );
    await q.query(
      `CREATE UNIQUE INDEX credit_ledger_grant_reference ON credit_ledger (reference) WHERE reference IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX credit_ledger_grant_reference`);
    await q.query(`ALTER TABLE credit_ledger DROP COLUMN reference`);
  }
}
