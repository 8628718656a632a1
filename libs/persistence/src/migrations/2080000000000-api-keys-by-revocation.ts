import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An account's keys indexed by account and revocation (ADR 0042), in place of the account alone: its live
 * keys (the key list, a login's retiring of old login keys) and its most recently revoked ones are each
 * one range of the index, however many keys the account has revoked over the years.
 */
export class ApiKeysByRevocation2080000000000 implements MigrationInterface {
  name = 'ApiKeysByRevocation2080000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX api_keys_account_revoked_idx ON api_keys (account_id, revoked_at)`);
    await q.query(`DROP INDEX api_keys_account_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX api_keys_account_idx ON api_keys (account_id)`);
    await q.query(`DROP INDEX api_keys_account_revoked_idx`);
  }
}
