import type { DataSource } from 'typeorm';
import { queryRows } from './sql';

export interface LedgerSummary {
  balance: number;
  ledger_sum: number;
  reserves: number;
  captures: number;
  releases: number;
}

/** Read side of the ledger: used by the CLI and by the invariant checks in tests. */
export class LedgerRepository {
  constructor(private readonly db: DataSource) {}

  async summary(accountId: string): Promise<LedgerSummary | null> {
    const rows = await queryRows<LedgerSummary>(
      this.db,
      `SELECT a.balance::int AS balance,
              COALESCE(SUM(l.amount), 0)::int AS ledger_sum,
              COUNT(*) FILTER (WHERE l.phase = 'reserve')::int AS reserves,
              COUNT(*) FILTER (WHERE l.phase = 'capture')::int AS captures,
              COUNT(*) FILTER (WHERE l.phase = 'release')::int AS releases
         FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id
        WHERE a.id = $1 GROUP BY a.id`,
      [accountId],
    );
    return rows[0] ?? null;
  }

  /** Accounts whose balance differs from their ledger sum (should always be empty). */
  async mismatches(): Promise<{ account_id: string; balance: number; ledger_sum: number }[]> {
    return queryRows(
      this.db,
      `SELECT a.id AS account_id, a.balance::int AS balance, COALESCE(SUM(l.amount), 0)::int AS ledger_sum
         FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id
        GROUP BY a.id HAVING a.balance <> COALESCE(SUM(l.amount), 0)`,
    );
  }
}
