import type { DataSource } from 'typeorm';
import { queryRows } from './sql';
import { DomainError, newId } from '@dossier/domain';
import { isUniqueViolation } from './pg-errors';

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

export class AccountsRepository {
  constructor(private readonly db: DataSource) {}

  /** Creates the account with its signup grant recorded in the ledger, atomically. */
  async create(email: string, passwordHash: string, signupCredits: number): Promise<AccountRow> {
    const id = newId.account();
    try {
      const rows = await queryRows<AccountRow>(
        this.db,
        `WITH a AS (
           INSERT INTO accounts (id, email, email_normalized, password_hash, balance)
           VALUES ($1, $2, lower($2), $3, $4) RETURNING id, email, created_at, balance
         ), l AS (
           INSERT INTO credit_ledger (account_id, phase, amount, note)
           SELECT id, 'grant', balance, 'signup' FROM a
         )
         SELECT id, email, created_at, balance::int AS balance FROM a`,
        [id, email, passwordHash, signupCredits],
      );
      return rows[0]!;
    } catch (err) {
      if (isUniqueViolation(err)) throw new DomainError('email_taken', 'an account with this email already exists');
      throw err;
    }
  }

  async findCredentials(email: string): Promise<CredentialRow | null> {
    const rows = await queryRows<CredentialRow>(
      this.db,
      `SELECT id, password_hash FROM accounts WHERE email_normalized = lower($1)`,
      [email],
    );
    return rows[0] ?? null;
  }

  async findById(id: string): Promise<AccountRow | null> {
    const rows = await queryRows<AccountRow>(
      this.db,
      `SELECT id, email, created_at, balance::int AS balance FROM accounts WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Adds credits by e-mail, recorded in the ledger. Returns the new balance, or null for an unknown e-mail. */
  async grant(email: string, credits: number, note: string): Promise<{ id: string; balance: number } | null> {
    const rows = await queryRows<{ id: string; balance: number }>(
      this.db,
      `WITH a AS (
         UPDATE accounts SET balance = balance + $2 WHERE email_normalized = lower($1) RETURNING id, balance
       ), l AS (
         INSERT INTO credit_ledger (account_id, phase, amount, note) SELECT id, 'grant', $2, $3 FROM a
       )
       SELECT id, balance::int AS balance FROM a`,
      [email, credits, note],
    );
    return rows[0] ?? null;
  }
}
