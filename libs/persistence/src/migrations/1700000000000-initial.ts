import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1700000000000 implements MigrationInterface {
  name = 'Initial1700000000000';

  // searches and credit_ledger carry account_id without a foreign key on purpose: every insert would
  // take a key-share lock on the account's row, which each lookup also updates (the balance), and on
  // the hot path that costs a multixact per request. Accounts are never deleted; the reserve and
  // grant statements only write rows for an account they have just read or updated.
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE accounts (
        id text PRIMARY KEY,
        email text NOT NULL,
        email_normalized text NOT NULL UNIQUE,
        password_hash text NOT NULL,
        balance bigint NOT NULL CHECK (balance >= 0),
        created_at timestamptz NOT NULL DEFAULT now()
      ) WITH (fillfactor = 50)`);
    await q.query(`
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        prefix text NOT NULL,
        key_hash text NOT NULL UNIQUE,
        name text,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX api_keys_account_idx ON api_keys (account_id)`);
    await q.query(`
      CREATE TABLE searches (
        id text PRIMARY KEY,
        account_id text NOT NULL,
        key_id text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('person', 'company', 'email', 'phone')),
        input jsonb,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
        cost integer NOT NULL CHECK (cost >= 0),
        charged boolean,
        results json,
        sources json,
        error jsonb,
        idempotency_key text,
        request_hash text,
        request_id text NOT NULL,
        permissible_purpose text,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      )`);
    await q.query(
      `CREATE UNIQUE INDEX searches_idempotency_idx ON searches (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );
    await q.query(`CREATE INDEX searches_pending_idx ON searches (created_at) WHERE status = 'pending'`);
    await q.query(`
      CREATE TABLE credit_ledger (
        id bigserial PRIMARY KEY,
        account_id text NOT NULL,
        search_id text,
        phase text NOT NULL CHECK (phase IN ('grant', 'reserve', 'capture', 'release')),
        amount bigint NOT NULL,
        note text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK (search_id IS NOT NULL OR phase = 'grant')
      )`);
    await q.query(`CREATE INDEX credit_ledger_account_idx ON credit_ledger (account_id)`);
    await q.query(
      `CREATE UNIQUE INDEX credit_ledger_reserve_once ON credit_ledger (search_id) WHERE phase = 'reserve'`,
    );
    await q.query(
      `CREATE UNIQUE INDEX credit_ledger_settle_once ON credit_ledger (search_id) WHERE phase IN ('capture', 'release')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE credit_ledger`);
    await q.query(`DROP TABLE searches`);
    await q.query(`DROP TABLE api_keys`);
    await q.query(`DROP TABLE accounts`);
  }
}
