import type { MigrationInterface } from 'typeorm';

/**
 * Batched reservations (ADR 0023): `dossier_reserve` reserves many lookups in one call. Its definition lives in
 * `libs/persistence/src/credits/sql-functions.ts`, applied by migration 2151 (issue 42); this step, which
 * created an earlier version, is kept by name for the databases that ran it.
 */
export class BatchedReservations1790000000000 implements MigrationInterface {
  name = 'BatchedReservations1790000000000';

  async up(): Promise<void> {}

  async down(): Promise<void> {}
}
