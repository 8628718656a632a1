import type { MigrationInterface } from 'typeorm';

/**
 * One Idempotency-Key per account across lookups and batches (ADR 0019): `dossier_reserve` answers
 * `idempotency_conflict`. Its definition lives in `libs/persistence/src/credits/sql-functions.ts`, applied by
 * migration 2151 (issue 42); this step, which replaced an earlier version, is kept by name for the databases
 * that ran it.
 */
export class IdempotencyAcrossKinds1810000000000 implements MigrationInterface {
  name = 'IdempotencyAcrossKinds1810000000000';

  async up(): Promise<void> {}

  async down(): Promise<void> {}
}
