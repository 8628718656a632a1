import type { DataSource } from 'typeorm';
import { Coalescer, type ApiKeyMode, type LookupKind, type SearchStatus } from '@dossier/domain';
import type { SearchProgress, SourceReport } from '@dossier/contracts';
import { creditsOf, expireIdempotencyKey, madeInMode, queryRows, updateInBatches } from './sql';
import { retryingDeadlocks } from './pg-errors';
import type { SearchPosition } from './search-history.repository';
import type { CreditObserver } from './credits/credit-metrics';
import {
  releaseUnqueued,
  reserveAll,
  settleAll,
  type NewSearch,
  type ReservationResult,
  type SettleItem,
  type SettleResult,
  type Settlement,
} from './credits/credits';

/** `idempotency_race`: another request with the same Idempotency-Key won the race; load that search instead. */
export type ReserveOutcome = ReservationResult;

export interface SearchView {
  id: string;
  account_id: string;
  kind: LookupKind;
  status: SearchStatus;
  cost: number;
  charged: boolean | null;
  results: unknown[] | null;
  /** A person search: how many items passed its min_score before its limit; null otherwise (ADR 0047). */
  result_total: number | null;
  sources: SourceReport[] | null;
  error: { code: string; message: string } | null;
  /** What it has found so far while pending (ADR 0049); null when nothing was written, and once settled. */
  progress: SearchProgress | null;
  request_hash: string | null;
  created_at: Date;
  completed_at: Date | null;
  /** The account's balance now. */
  balance: number;
}

/** Concurrent reservations of one process share a statement: at most this many per batch… */
const RESERVE_BATCH_MAX = 64;
/** …and this many batches (connections) at once. */
const RESERVE_BATCHES_IN_FLIGHT = 2;
/** Settles of one `settleCoalescer()` share a statement: at most this many per batch… */
const SETTLE_BATCH_MAX = 100;
/** …and this many statements at once; calls made meanwhile wait and go together. */
const SETTLE_BATCHES_IN_FLIGHT = 2;

const VIEW_COLUMNS = `s.id, s.account_id, s.kind, s.status, s.cost, s.charged, s.results, s.result_total, s.sources, s.error,
  s.progress, s.request_hash, s.created_at, s.completed_at, a.balance`;

type SearchRow = Omit<SearchView, 'balance'> & { balance: string };
const viewOf = (row: SearchRow): SearchView => ({ ...row, balance: creditsOf(row.balance) });

/**
 * One statement of the searches purge (`SearchesRepository.purgeResults`): `$1` days, `$2` rows. A row another
 * statement holds is skipped, not waited for: an overlapping retention pass (ADR 0016) purges other rows and
 * counts none twice (it used to wait, then write the first pass's rows again and count them again).
 */
export const PURGE_SEARCHES = `UPDATE searches
    SET input = NULL, results = NULL, sources = NULL, request_hash = NULL, idempotency_key = NULL
  WHERE id IN (
    SELECT id FROM searches
     WHERE input IS NOT NULL AND created_at < now() - make_interval(days => $1) AND status <> 'pending'
     ORDER BY created_at
     LIMIT $2
     FOR NO KEY UPDATE SKIP LOCKED)
  RETURNING id`;

/**
 * Searches and the credits they move. Every money movement is one SQL statement, so it is atomic,
 * and the ledger's unique partial indexes make each phase happen at most once per search.
 */
export class SearchesRepository {
  /** `credits`: told of each reservation, capture and release this repository commits (metrics). */
  private readonly reservations = new Coalescer<NewSearch, ReserveOutcome>(
    (items) => this.reserveMany(items),
    RESERVE_BATCH_MAX,
    RESERVE_BATCHES_IN_FLIGHT,
  );

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
    return this.reservations.submit(s);
  }

  /**
   * The reservations made while others were running, as one statement: sorted by account (a stable
   * sort: each account's in arrival order), so concurrent batches lock account rows in one order.
   */
  private async reserveMany(items: NewSearch[]): Promise<ReserveOutcome[]> {
    const order = items.map((_, k) => k).sort((a, b) => compare(items[a]!.accountId, items[b]!.accountId) || a - b);
    const sorted = order.map((k) => items[k]!);
    const results = await retryingDeadlocks(() =>
      reserveAll((text, params) => queryRows(this.db, text, params), sorted),
    );
    const byItem = new Array<ReserveOutcome>(items.length);
    order.forEach((k, j) => (byItem[k] = results[j]!));
    for (const [k, r] of byItem.entries()) {
      if (r.kind === 'reserved') this.credits({ kind: items[k]!.kind, phase: 'reserved', credits: items[k]!.cost });
    }
    return byItem;
  }

  /**
   * Records the outcome and settles the reservation: capture when it succeeded with results,
   * release otherwise. A second call for the same search (redelivered job) changes nothing.
   * Returns whether this call did the settling, whether it charged, and the account's balance after.
   */
  async settle(searchId: string, outcome: Settlement, announce = true): Promise<SettleResult> {
    const [result] = await this.settleMany([{ searchId, outcome, announce }]);
    return result!;
  }

  /**
   * settle() for many searches in one statement (the worker batches the jobs that finish within a
   * couple of milliseconds): `settleAll`, run again when Postgres aborts it as a deadlock (it rolled back
   * whole: a search settles once either way).
   */
  async settleMany(items: SettleItem[]): Promise<SettleResult[]> {
    const { results, moved } = await retryingDeadlocks(() =>
      settleAll((text, params) => queryRows(this.db, text, params), items),
    );
    for (const m of moved) this.credits(m);
    return results;
  }

  /**
   * settleMany() for calls made one at a time: those made while SETTLE_BATCHES_IN_FLIGHT statements run go
   * together in the next (no window: idle, a settle goes at once). The worker has one per lookup kind.
   */
  settleCoalescer(): Coalescer<SettleItem, SettleResult> {
    return new Coalescer((items) => this.settleMany(items), SETTLE_BATCH_MAX, SETTLE_BATCHES_IN_FLIGHT);
  }

  /** Releases searches whose jobs could not be queued, and voids their batch when that was all of it (credits.ts). */
  async releaseUnqueued(
    searchIds: readonly string[],
    error: { code: string; message: string },
    whole: boolean,
    batchId: string | null,
  ): Promise<{ voided: boolean }> {
    const { voided, moved } = await releaseUnqueued(this.db, searchIds, error, whole, batchId);
    for (const m of moved) this.credits(m);
    return { voided };
  }

  /**
   * Writes what a pending search has found so far (ADR 0049); a search settled meanwhile keeps its answer
   * alone (settling clears it). One statement, on the search's row only.
   */
  async recordProgress(id: string, progress: SearchProgress): Promise<void> {
    await queryRows(this.db, `UPDATE searches SET progress = $2::json WHERE id = $1 AND status = 'pending'`, [
      id,
      JSON.stringify(progress),
    ]);
  }

  /** A search of this account made with a key of this mode (another mode's is not found; null: any mode). */
  async findForAccount(id: string, accountId: string, mode: ApiKeyMode | null): Promise<SearchView | null> {
    const rows = await queryRows<SearchRow>(
      this.db,
      `SELECT ${VIEW_COLUMNS} FROM searches s JOIN accounts a ON a.id = s.account_id
        WHERE s.id = $1 AND s.account_id = $2 AND ${madeInMode('s', '$3')}`,
      [id, accountId, mode],
    );
    return rows[0] ? viewOf(rows[0]) : null;
  }

  /** These searches of this account, as stored (ids of other accounts or none are left out). */
  async findManyForAccount(ids: readonly string[], accountId: string): Promise<SearchView[]> {
    if (ids.length === 0) return [];
    const rows = await queryRows<SearchRow>(
      this.db,
      `SELECT ${VIEW_COLUMNS} FROM searches s JOIN accounts a ON a.id = s.account_id WHERE s.id = ANY($1) AND s.account_id = $2`,
      [ids, accountId],
    );
    return rows.map(viewOf);
  }

  /** The search that holds this Idempotency-Key, if any (keys older than `IDEMPOTENCY_TTL_HOURS` are expired first). */
  async findByIdempotencyKey(accountId: string, key: string): Promise<SearchView | null> {
    await expireIdempotencyKey(this.db, 'searches', accountId, key);
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

  /**
   * Pending searches older than `olderThanS` seconds, oldest first, strictly after `after` in (created_at,
   * id) order: the reconciler's candidates, a page at a time.
   */
  async findStalePending(
    olderThanS: number,
    limit: number,
    after: SearchPosition | null = null,
  ): Promise<{ id: string; kind: LookupKind; position: SearchPosition }[]> {
    const rows = await queryRows<{ id: string; kind: LookupKind; at: string }>(
      this.db,
      `SELECT id, kind, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at FROM searches
        WHERE status = 'pending' AND created_at < now() - make_interval(secs => $1)
          AND (created_at, id) > (COALESCE($3::timestamptz, '-infinity'), COALESCE($4::text, ''))
        ORDER BY created_at, id LIMIT $2`,
      [olderThanS, limit, after?.at ?? null, after?.id ?? null],
    );
    return rows.map((r) => ({ id: r.id, kind: r.kind, position: { at: r.at, id: r.id } }));
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
    return updateInBatches(this.db, PURGE_SEARCHES, olderThanDays, batch);
  }
}

/** Plain code-unit order (the same whatever the locale): the order account rows are locked in. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
