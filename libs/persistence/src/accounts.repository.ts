import type { DataSource, Repository } from 'typeorm';
import { DomainError, newId } from '@dossier/domain';
import { AccountEntity } from './entities/account.entity';
import { creditsOf, queryRows } from './sql';
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

/** Accounts: reads through the entity, writes that move credits as one SQL statement with their ledger entry. */
export class AccountsRepository {
  private readonly accounts: Repository<AccountEntity>;

  constructor(private readonly db: DataSource) {
    this.accounts = db.getRepository(AccountEntity);
  }

  /** Creates the account with its signup grant recorded in the ledger, atomically. */
  async create(email: string, passwordHash: string, signupCredits: number): Promise<AccountRow> {
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
         )
         SELECT id, email, created_at, balance FROM a`,
        [id, email, passwordHash, signupCredits],
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

  /** Adds credits by e-mail, recorded in the ledger. Returns the new balance, or null for an unknown e-mail. */
  async grant(email: string, credits: number, note: string): Promise<{ id: string; balance: number } | null> {
    const rows = await queryRows<{ id: string; balance: string }>(
      this.db,
      `WITH a AS (
         UPDATE accounts SET balance = balance + $2 WHERE email_normalized = lower($1) RETURNING id, balance
       ), l AS (
         INSERT INTO credit_ledger (account_id, phase, amount, note) SELECT id, 'grant', $2, $3 FROM a
       )
       SELECT id, balance FROM a`,
      [email, credits, note],
    );
    const row = rows[0];
    return row ? { id: row.id, balance: creditsOf(row.balance) } : null;
  }
}
