import type { DataSource } from 'typeorm';
import type { LookupKind, SearchStatus } from '@dossier/domain';
import type { SourceReport } from '@dossier/contracts';
import { creditsOf, queryRows } from './sql';
import { isUniqueViolation } from './pg-errors';
import type { CreditObserver } from './credit-metrics';

export interface NewSearch {
  id: string;
  accountId: string;
  keyId: string;
  kind: LookupKind;
  input: object;
  cost: number;
  idempotencyKey: string | null;
  requestHash: string | null;
  requestId: string;
  permissiblePurpose: string | null;
}

export type ReserveOutcome =
  | { kind: 'reserved'; balance: number }
  | { kind: 'insufficient' }
  /** Another request with the same Idempotency-Key won the race: load that search instead. */
  | { kind: 'idempotency_race' };

export interface SearchView {
  id: string;
  account_id: string;
  kind: LookupKind;
  status: SearchStatus;
  cost: number;
  charged: boolean | null;
  results: unknown[] | null;
  sources: SourceReport[] | null;
  error: { code: string; message: string } | null;
  request_hash: string | null;
  created_at: Date;
  completed_at: Date | null;
  /** The account's balance now. */
  balance: number;
}

export interface SettleResult {
  /** This call settled the search (false: it was settled before, e.g. a redelivered job). */
  settled: boolean;
  charged: boolean;
  /** The account's balance right after settling (null when this call did not settle). */
  balance: number | null;
}

export type Settlement =
  /** `charge`: capture the reservation (it found something); else release it. */
  | { status: 'succeeded'; results: unknown[]; sources: SourceReport[]; charge: boolean }
  | { status: 'failed'; error: { code: string; message: string }; sources: SourceReport[] };

const VIEW_COLUMNS = `s.id, s.account_id, s.kind, s.status, s.cost, s.charged, s.results, s.sources, s.error,
  s.request_hash, s.created_at, s.completed_at, a.balance`;

type SearchRow = Omit<SearchView, 'balance'> & { balance: string };
const viewOf = (row: SearchRow): SearchView => ({ ...row, balance: creditsOf(row.balance) });

/**
 * Searches and the credits they move. Every money movement is one SQL statement, so it is atomic,
 * and the ledger's unique partial indexes make each phase happen at most once per search.
 */
export class SearchesRepository {
  /** `credits`: told of each reservation, capture and release this repository commits (metrics). */
  constructor(
    private readonly db: DataSource,
    private readonly credits: CreditObserver = () => {},
  ) {}

  /**
   * Debits the cost (only if the balance covers it), records the search and the `reserve` ledger
   * entry — all or nothing, in one statement. A search that costs nothing (a test key's, ADR 0021)
   * moves no credits and writes no ledger entry, now or when it settles.
   */
  async reserve(s: NewSearch): Promise<ReserveOutcome> {
    try {
      const rows = await queryRows<{ balance: string }>(
        this.db,
        `WITH debit AS (
           UPDATE accounts SET balance = balance - $3 WHERE id = $2 AND balance >= $3 RETURNING id, balance
         ), ins AS (
           INSERT INTO searches (id, account_id, key_id, kind, input, cost, idempotency_key, request_hash, request_id, permissible_purpose)
           SELECT $1, id, $4, $5, $6, $3, $7, $8, $9, $10 FROM debit
         ), led AS (
           INSERT INTO credit_ledger (account_id, search_id, phase, amount) SELECT id, $1, 'reserve', -$3::bigint FROM debit WHERE $3 > 0
         )
         SELECT balance FROM debit`,
        [
          s.id,
          s.accountId,
          s.cost,
          s.keyId,
          s.kind,
          JSON.stringify(s.input),
          s.idempotencyKey,
          s.requestHash,
          s.requestId,
          s.permissiblePurpose,
        ],
      );
      const row = rows[0];
      if (!row) return { kind: 'insufficient' };
      this.credits({ kind: s.kind, phase: 'reserved', credits: s.cost });
      return { kind: 'reserved', balance: creditsOf(row.balance) };
    } catch (err) {
      if (s.idempotencyKey !== null && isUniqueViolation(err)) return { kind: 'idempotency_race' };
      throw err;
    }
  }

  /**
   * Records the outcome and settles the reservation: capture when it succeeded with results,
   * release otherwise. A second call for the same search (redelivered job) changes nothing.
   * Returns whether this call did the settling, whether it charged, and the account's balance after.
   */
  async settle(searchId: string, outcome: Settlement): Promise<SettleResult> {
    const [result] = await this.settleMany([{ searchId, outcome }]);
    return result!;
  }

  /**
   * settle() for many searches in one statement (the worker batches the jobs that finish within a
   * couple of milliseconds). Each search is marked done only if still pending, gets one capture or
   * release entry (the unique index is the second guard), and releases are credited per account.
   * A search named twice in one call is settled by its first mention; the others report settled: false.
   */
  async settleMany(items: { searchId: string; outcome: Settlement }[]): Promise<SettleResult[]> {
    const first = new Map<string, number>();
    items.forEach((item, k) => {
      if (!first.has(item.searchId)) first.set(item.searchId, k);
    });
    const unique = [...first.values()].map((k) => items[k]!);
    const capture = (o: Settlement) => o.status === 'succeeded' && o.charge;
    const rows = await queryRows<{
      id: string;
      kind: LookupKind;
      cost: number;
      capture: boolean;
      balance: string | null;
    }>(
      this.db,
      `WITH i AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[])
                    AS t(id, status, results, sources, error, capture)
       ), s AS (
         UPDATE searches x
            SET status = i.status, results = i.results::json, result_count = json_array_length(i.results::json),
                sources = i.sources::json, error = i.error::jsonb, charged = i.capture, completed_at = now()
           FROM i
          WHERE x.id = i.id AND x.status = 'pending'
          RETURNING x.id, x.account_id, x.kind, x.cost, i.capture
       ), led AS (
         INSERT INTO credit_ledger (account_id, search_id, phase, amount)
         SELECT account_id, id, CASE WHEN capture THEN 'capture' ELSE 'release' END, CASE WHEN capture THEN 0 ELSE cost END
           FROM s WHERE cost > 0
         ON CONFLICT (search_id) WHERE phase IN ('capture', 'release') DO NOTHING
         RETURNING account_id, amount
       ), credit AS (
         UPDATE accounts a SET balance = a.balance + t.total
           FROM (SELECT account_id, sum(amount) AS total FROM led WHERE amount <> 0 GROUP BY account_id) t
          WHERE a.id = t.account_id
          RETURNING a.id, a.balance
       )
       SELECT s.id, s.kind, s.cost, s.capture,
              COALESCE((SELECT balance FROM credit c WHERE c.id = s.account_id),
                       (SELECT balance FROM accounts WHERE id = s.account_id)) AS balance
         FROM s`,
      [
        unique.map((u) => u.searchId),
        unique.map((u) => u.outcome.status),
        unique.map((u) => (u.outcome.status === 'succeeded' ? JSON.stringify(u.outcome.results) : null)),
        unique.map((u) => JSON.stringify(u.outcome.sources)),
        unique.map((u) => (u.outcome.status === 'failed' ? JSON.stringify(u.outcome.error) : null)),
        unique.map((u) => capture(u.outcome)),
      ],
    );
    for (const r of rows) this.credits({ kind: r.kind, phase: r.capture ? 'captured' : 'released', credits: r.cost });
    const balances = new Map(rows.map((r) => [r.id, r.balance === null ? null : creditsOf(r.balance)]));
    return items.map((item, k) => {
      const settled = first.get(item.searchId) === k && balances.has(item.searchId);
      return {
        settled,
        charged: settled && capture(item.outcome),
        balance: settled ? (balances.get(item.searchId) ?? null) : null,
      };
    });
  }

  async findForAccount(id: string, accountId: string): Promise<SearchView | null> {
    const rows = await queryRows<SearchRow>(
      this.db,
      `SELECT ${VIEW_COLUMNS} FROM searches s JOIN accounts a ON a.id = s.account_id WHERE s.id = $1 AND s.account_id = $2`,
      [id, accountId],
    );
    return rows[0] ? viewOf(rows[0]) : null;
  }

  /** The live search that holds this Idempotency-Key, if any (keys older than `ttlHours` are expired first). */
  async findByIdempotencyKey(accountId: string, key: string, ttlHours: number): Promise<SearchView | null> {
    await queryRows(
      this.db,
      `UPDATE searches SET idempotency_key = NULL
        WHERE account_id = $1 AND idempotency_key = $2 AND created_at < now() - make_interval(hours => $3)`,
      [accountId, key, ttlHours],
    );
    const rows = await queryRows<SearchRow>(
      this.db,
      `SELECT ${VIEW_COLUMNS} FROM searches s JOIN accounts a ON a.id = s.account_id
        WHERE s.account_id = $1 AND s.idempotency_key = $2`,
      [accountId, key],
    );
    return rows[0] ? viewOf(rows[0]) : null;
  }

  async statusOf(id: string): Promise<SearchStatus | null> {
    const rows = await queryRows<{ status: SearchStatus }>(this.db, `SELECT status FROM searches WHERE id = $1`, [id]);
    return rows[0]?.status ?? null;
  }

  /** Frees a failed search's Idempotency-Key so a retry with the same key runs the lookup again. */
  async forgetIdempotencyKey(id: string): Promise<void> {
    await queryRows(this.db, `UPDATE searches SET idempotency_key = NULL WHERE id = $1 AND status = 'failed'`, [id]);
  }

  async balanceOf(accountId: string): Promise<number | null> {
    const rows = await queryRows<{ balance: string }>(this.db, `SELECT balance FROM accounts WHERE id = $1`, [
      accountId,
    ]);
    return rows[0] ? creditsOf(rows[0].balance) : null;
  }

  /** Which of these searches are no longer pending (the waiter's fallback when an event is missed). */
  async findSettled(ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await queryRows<{ id: string }>(
      this.db,
      `SELECT id FROM searches WHERE id = ANY($1) AND status <> 'pending'`,
      [ids],
    );
    return rows.map((r) => r.id);
  }

  /** Pending searches older than `olderThanS` seconds: candidates for the reconciler. */
  async findStalePending(olderThanS: number, limit: number): Promise<{ id: string; kind: LookupKind }[]> {
    return queryRows<{ id: string; kind: LookupKind }>(
      this.db,
      `SELECT id, kind FROM searches
        WHERE status = 'pending' AND created_at < now() - make_interval(secs => $1)
        ORDER BY created_at LIMIT $2`,
      [olderThanS, limit],
    );
  }

  /**
   * Erases what a settled search older than `olderThanDays` said about its subject — input, results,
   * per-provider sources, the request hash (a hash of the input) and the Idempotency-Key — and keeps
   * the audit row: account, key id, kind, purpose, request id, times, status, cost and charge.
   * Works in batches of `batch` rows (short transactions, no long lock on a large backlog), each read
   * through the index of kept inputs (`searches_retained_idx`; a purged row has no input and leaves
   * it); returns how many searches it purged.
   */
  async purgeResults(olderThanDays: number, batch = 1000): Promise<number> {
    let purged = 0;
    for (;;) {
      const rows = await queryRows<{ id: string }>(
        this.db,
        `UPDATE searches
            SET input = NULL, results = NULL, sources = NULL, request_hash = NULL, idempotency_key = NULL
          WHERE id IN (
            SELECT id FROM searches
             WHERE input IS NOT NULL AND created_at < now() - make_interval(days => $1) AND status <> 'pending'
             ORDER BY created_at
             LIMIT $2)
        RETURNING id`,
        [olderThanDays, batch],
      );
      purged += rows.length;
      if (rows.length < batch) return purged;
    }
  }
}
