import type { DataSource, Repository } from 'typeorm';
import { DomainError, newId } from '@dossier/domain';
import { AccountEntity } from './entities/account.entity';
import { creditsOf, queryRows } from './sql';
import { isUniqueViolation } from './pg-errors';
import { newApiKeyRow, type NewApiKey } from './api-keys.repository';

export interface AccountRow {
  id: string;
  email: string;
  created_at: Date;
  balance: number;
}

export interface CredentialRow {
  id: string;
  password_hash: string;
}

/** Accounts: reads through the entity, writes that move credits as one SQL statement with their ledger entry. */
export class AccountsRepository {
  private readonly accounts: Repository<AccountEntity>;

  constructor(private readonly db: DataSource) {
    this.accounts = db.getRepository(AccountEntity);
  }

  /** Creates the account with its signup grant recorded in the ledger, atomically. */
  async create(email: string, passwordHash: string, signupCredits: number): Promise<AccountRow> {
    return this.insert(email, passwordHash, signupCredits, null);
  }

  /**
   * Creates the account, its signup grant and its first (live) key named `keyName` in one statement: all
   * of them or, when any insert fails, none (an account without a key would answer every retry 409).
   */
  async register(
    email: string,
    passwordHash: string,
    signupCredits: number,
    keyName: string,
  ): Promise<AccountRow & { key: { apiKey: string; keyId: string } }> {
    const key = newApiKeyRow('live');
    const account = await this.insert(email, passwordHash, signupCredits, { ...key, name: keyName });
    return { ...account, key: { apiKey: key.apiKey, keyId: key.keyId } };
  }

  private async insert(
    email: string,
    passwordHash: string,
    signupCredits: number,
    key: (NewApiKey & { name: string }) | null,
  ): Promise<AccountRow> {
    const id = newId.account();
    try {
      const rows = await queryRows<Omit<AccountRow, 'balance'> & { balance: string }>(
        this.db,
        `WITH a AS (
           INSERT INTO accounts (id, email, email_normalized, password_hash, balance)
           VALUES ($1, $2, lower($2), $3, $4) RETURNING id, email, created_at, balance
         ), l AS (
           INSERT INTO credit_ledger (account_id, phase, amount, note)
           SELECT id, 'grant', balance, 'signup' FROM a
         ), k AS (
           INSERT INTO api_keys (id, account_id, prefix, key_hash, name, mode)
           SELECT $5::text, id, $6::text, $7::text, $8::text, $9::text FROM a WHERE $5::text IS NOT NULL
         )
         SELECT id, email, created_at, balance FROM a`,
        [id, email, passwordHash, signupCredits, key?.keyId, key?.prefix, key?.keyHash, key?.name, key?.mode],
      );
      const row = rows[0]!;
      return { ...row, balance: creditsOf(row.balance) };
    } catch (err) {
      if (isUniqueViolation(err)) throw new DomainError('email_taken', 'an account with this email already exists');
      throw err;
    }
  }

  async findCredentials(email: string): Promise<CredentialRow | null> {
    // lower() in SQL, as when the account was created: JavaScript's toLowerCase differs for some letters.
    const account = await this.accounts
      .createQueryBuilder('a')
      .select(['a.id', 'a.passwordHash'])
      .where('a.emailNormalized = lower(:email)', { email })
      .getOne();
    return account ? { id: account.id, password_hash: account.passwordHash } : null;
  }

  async findById(id: string): Promise<AccountRow | null> {
    const account = await this.accounts.findOneBy({ id });
    return account
      ? { id: account.id, email: account.email, created_at: account.createdAt, balance: account.balance }
      : null;
  }

  /**
   * Adds credits by e-mail, recorded in the ledger: `granted` with the new balance, or null for an unknown
   * e-mail. With a `reference`, at most once: when a grant carries that reference already (a re-run, or two
   * runs at once), nothing is granted and the answer is that earlier grant (`earlier`), with the account's
   * balance. Without one, every call grants.
   */
  async grant(
    email: string,
    credits: number,
    note: string,
    reference: string | null = null,
  ): Promise<GrantResult | null> {
    // The ledger entry first: a reference taken already (or being taken by a run not yet committed, which
    // ON CONFLICT waits for) inserts nothing, and then the balance is not touched either.
    const rows = await queryRows<{ id: string; balance: string | null }>(
      this.db,
      `WITH acct AS (
         SELECT id FROM accounts WHERE email_normalized = lower($1)
       ), l AS (
         INSERT INTO credit_ledger (account_id, phase, amount, note, reference) SELECT id, 'grant', $2, $3, $4 FROM acct
         ON CONFLICT (reference) WHERE reference IS NOT NULL DO NOTHING
         RETURNING account_id
       ), a AS (
         UPDATE accounts SET balance = balance + $2 WHERE id IN (SELECT account_id FROM l) RETURNING id, balance
       )
       SELECT acct.id, a.balance FROM acct LEFT JOIN a ON a.id = acct.id`,
      [email, credits, note, reference],
    );
    const row = rows[0];
    if (!row) return null;
    if (row.balance !== null) return { granted: true, id: row.id, balance: creditsOf(row.balance) };
    // A statement of its own: it sees the earlier grant even when that committed while this one waited.
    const [earlier] = await queryRows<{
      account_id: string;
      email: string;
      amount: string;
      created_at: Date;
      balance: string;
    }>(
      this.db,
      `SELECT l.account_id, x.email, l.amount, l.created_at, (SELECT balance FROM accounts WHERE id = $2) AS balance
         FROM credit_ledger l JOIN accounts x ON x.id = l.account_id
        WHERE l.reference = $1`,
      [reference, row.id],
    );
    if (!earlier) throw new Error(`credit_ledger: no grant with reference ${String(reference)} after a conflict on it`);
    return {
      granted: false,
      id: row.id,
      balance: creditsOf(earlier.balance),
      earlier: {
        accountId: earlier.account_id,
        email: earlier.email,
        credits: creditsOf(earlier.amount),
        at: earlier.created_at,
      },
    };
  }
}

/** What `grant` did: granted (the new balance), or nothing, as a grant with the same reference was there. */
export type GrantResult =
  | { granted: true; id: string; balance: number }
  | {
      granted: false;
      id: string;
      /** The account's balance now. */
      balance: number;
      /** The grant that carries the reference. */
      earlier: { accountId: string; email: string; credits: number; at: Date };
    };
