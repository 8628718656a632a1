import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which keys a login issued (ADR 0036): an account keeps its 20 most recently used, and a login past that
 * revokes the least recently used. Every key made before counts as not issued by a login (a key named
 * "login" may be one its owner named so): none of them is ever revoked by this rule.
 */
export class LoginKeys1920000000000 implements MigrationInterface {
  name = 'LoginKeys1920000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys ADD COLUMN issued_by_login boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys DROP COLUMN issued_by_login`);
  }
}
