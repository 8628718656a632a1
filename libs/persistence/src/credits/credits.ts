import type { DataSource } from 'typeorm';
import type { LookupKind } from '@dossier/domain';
import type { SourceReport } from '@dossier/contracts';
import { IDEMPOTENCY_TTL_HOURS, creditsOf, inTransaction, type Sql } from '../sql';
import { retryingDeadlocks } from '../pg-errors';
import type { CreditMovement } from './credit-metrics';

/*
 * The credits module (issue 42): reservation, capture and release, each one SQL statement, so each is atomic,
 * and the ledger's unique partial indexes make each phase happen at most once per search. Reservations go
 * through the `dossier_reserve` function (sql-functions.ts); a settle captures or releases and writes the
 * search's outbox row (ADR 0062). SearchesRepository and BatchesRepository call these; nothing else moves
 * credits but grants (AccountsRepository).
 */

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
  /** The batch that starts it (ADR 0019). */
  batchId?: string | null;
}

export interface SettleResult {
  /** This call settled the search (false: it was settled before, e.g. a redelivered job). */
  settled: boolean;
  charged: boolean;
  /** The account's balance right after settling (null when this call did not settle). */
  balance: number | null;
  /**
   * Whether settling it wrote an outbox row (ADR 0062): its account has a webhook, or it belongs to a batch
   * (read in the same statement). The relay sends its events; a caller in the worker wakes the relay at once.
   */
  notify: boolean;
}

/**
 * A search to settle. `announce` false: its `search.failed` is not sent — the gateway that releases it
 * answers it itself (a 503, or its batch's item error) — only its batch's completion is checked.
 */
export interface SettleItem {
  searchId: string;
  outcome: Settlement;
  announce?: boolean;
}

export type Settlement =
  /** `charge`: capture the reservation (it found something); else release it. `total`: see SearchView.result_total. */
  | { status: 'succeeded'; results: unknown[]; sources: SourceReport[]; charge: boolean; total?: number | null }
  | { status: 'failed'; error: { code: string; message: string }; sources: SourceReport[] };

/**
 * One reservation's outcome: `balance` is the account's balance right after it (reserved only).
 * `idempotency_race`: another search holds its Idempotency-Key; `idempotency_conflict`: a batch of the
 * account holds it (keys are per account across lookups and batches, API.md).
 */
export type ReservationResult =
  | { kind: 'reserved'; balance: number }
  | { kind: 'insufficient' }
  | { kind: 'idempotency_race' }
  | { kind: 'idempotency_conflict' };

/**
 * Reserves `items` in the order given, each on its own, in one statement through `sql` (a pooled
 * connection, or a batch's transaction): the `dossier_reserve` function (migrations 1790… and 1810…, ADR 0023)
 * debits the cost only if the balance covers it and records the search and its `reserve` ledger entry.
 */
export async function reserveAll(sql: Sql, items: readonly NewSearch[]): Promise<ReservationResult[]> {
  const rows = await sql<{ o_ord: number; o_outcome: ReservationResult['kind']; o_balance: string | null }>(
    `SELECT o_ord, o_outcome, o_balance FROM dossier_reserve($1, $2, $3, $4, $5::jsonb[], $6, $7, $8, $9, $10, $11, $12)`,
    [
      items.map((s) => s.id),
      items.map((s) => s.accountId),
      items.map((s) => s.keyId),
      items.map((s) => s.kind),
      items.map((s) => JSON.stringify(s.input)),
      items.map((s) => s.cost),
      items.map((s) => s.idempotencyKey),
      items.map((s) => s.requestHash),
      items.map((s) => s.requestId),
      items.map((s) => s.permissiblePurpose),
      items.map((s) => s.batchId ?? null),
      IDEMPOTENCY_TTL_HOURS,
    ],
  );
  const results = new Array<ReservationResult>(items.length);
  for (const r of rows) {
    results[r.o_ord - 1] =
      r.o_outcome === 'reserved' ? { kind: 'reserved', balance: creditsOf(r.o_balance!) } : { kind: r.o_outcome };
  }
  return results;
}

/**
 * Settles many searches in one statement through `sql` (a pooled connection, or a transaction's). Each
 * search is marked done only if still pending, gets one capture or release entry (the unique index is the
 * second guard), and releases are credited per account. A search named twice is settled by its first
 * mention; the others report settled: false. The accounts it credits are locked in id order first
 * (`locked`), the order reservations lock them in: settles on many accounts, and reservations, never hold
 * one another's rows in a cycle (a deadlock). Two settles naming the same searches (a redelivered job
 * beside the reconciler) still can, on the search rows: the caller runs it again (`retryingDeadlocks`).
 * `moved`: what it captured and released, to tell the CreditObserver once it is committed. A search that
 * may send events (its account has a webhook, or it is a batch's) gets its outbox row in the same statement
 * (ADR 0062): committed with the settle, or not at all.
 */
export async function settleAll(
  sql: Sql,
  items: readonly SettleItem[],
): Promise<{ results: SettleResult[]; moved: CreditMovement[] }> {
  const first = new Map<string, number>();
  items.forEach((item, k) => {
    if (!first.has(item.searchId)) first.set(item.searchId, k);
  });
  const unique = [...first.values()].map((k) => items[k]!);
  const capture = (o: Settlement) => o.status === 'succeeded' && o.charge;
  const rows = await sql<{
    id: string;
    kind: LookupKind;
    cost: number;
    capture: boolean;
    balance: string | null;
    notify: boolean;
  }>(
    `WITH i AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::int[], $8::bool[])
                  AS t(id, status, results, sources, error, capture, total, announce)
     ), s AS (
       UPDATE searches x
          SET status = i.status, results = i.results::json, result_count = json_array_length(i.results::json),
              result_total = i.total,
              sources = i.sources::json, error = i.error::jsonb, charged = i.capture, completed_at = now(),
              progress = NULL
         FROM i
        WHERE x.id = i.id AND x.status = 'pending'
        RETURNING x.id, x.account_id, x.kind, x.cost, x.batch_id, i.status, i.capture, i.announce
     ), n AS (
       SELECT s.*, s.batch_id IS NOT NULL OR EXISTS (SELECT 1 FROM webhooks w WHERE w.account_id = s.account_id) AS notify
         FROM s
     ), ob AS (
       INSERT INTO outbox (search_id, event, announce)
       SELECT id, CASE WHEN status = 'succeeded' THEN 'search.completed' ELSE 'search.failed' END, announce
         FROM n WHERE notify AND (announce OR batch_id IS NOT NULL)
     ), led AS (
       INSERT INTO credit_ledger (account_id, search_id, phase, amount)
       SELECT account_id, id, CASE WHEN capture THEN 'capture' ELSE 'release' END, CASE WHEN capture THEN 0 ELSE cost END
         FROM s WHERE cost > 0
       ON CONFLICT (search_id) WHERE phase IN ('capture', 'release') DO NOTHING
       RETURNING account_id, amount
     ), locked AS (
       SELECT a.id FROM accounts a WHERE a.id IN (SELECT account_id FROM led WHERE amount <> 0)
        ORDER BY a.id COLLATE "C" FOR UPDATE
     ), credit AS (
       UPDATE accounts a SET balance = a.balance + t.total
         FROM (SELECT account_id, sum(amount) AS total FROM led WHERE amount <> 0 GROUP BY account_id) t
        WHERE a.id = t.account_id AND a.id IN (SELECT id FROM locked)
        RETURNING a.id, a.balance
     )
     SELECT n.id, n.kind, n.cost, n.capture,
            COALESCE((SELECT balance FROM credit c WHERE c.id = n.account_id),
                     (SELECT balance FROM accounts WHERE id = n.account_id)) AS balance,
            n.notify AND (n.announce OR n.batch_id IS NOT NULL) AS notify
       FROM n`,
    [
      unique.map((u) => u.searchId),
      unique.map((u) => u.outcome.status),
      unique.map((u) => (u.outcome.status === 'succeeded' ? JSON.stringify(u.outcome.results) : null)),
      unique.map((u) => JSON.stringify(u.outcome.sources)),
      unique.map((u) => (u.outcome.status === 'failed' ? JSON.stringify(u.outcome.error) : null)),
      unique.map((u) => capture(u.outcome)),
      unique.map((u) => (u.outcome.status === 'succeeded' ? (u.outcome.total ?? null) : null)),
      unique.map((u) => u.announce ?? true),
    ],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const results = items.map((item, k) => {
    const row = first.get(item.searchId) === k ? byId.get(item.searchId) : undefined;
    return {
      settled: row !== undefined,
      charged: row !== undefined && capture(item.outcome),
      balance: row === undefined || row.balance === null ? null : creditsOf(row.balance),
      notify: row?.notify ?? false,
    };
  });
  const moved = rows.map((r) => ({
    kind: r.kind,
    phase: r.capture ? ('captured' as const) : ('released' as const),
    credits: r.cost,
  }));
  return { results, moved };
}

/**
 * Releases searches whose jobs could not be queued (each settled failed with `error`, nothing charged, no
 * `search.failed` sent: the gateway answers them itself) and, when they are all of a batch's searches
 * (`whole`) and every one was released here, deletes the batch — in one transaction. The client is then
 * answered 503 without the batch's id: its Idempotency-Key is free, so a retry with the key runs it again,
 * and nothing completes it or sends its `batch.completed`. The delete commits with the releases: a job whose
 * add did reach Redis (and that the gateway could not take back: Redis unreachable) settles, or checks the
 * batch's completion, either before them (its search still pending among the others: not complete) or after
 * (no batch row). The failed searches stay, naming the batch, as a refused lookup's search does. `voided`:
 * every search was released here (not: a job had settled one first), and with `batchId`, its batch is gone.
 */
export async function releaseUnqueued(
  db: DataSource,
  searchIds: readonly string[],
  error: { code: string; message: string },
  whole: boolean,
  batchId: string | null,
): Promise<{ voided: boolean; moved: CreditMovement[] }> {
  const outcome: Settlement = { status: 'failed', error, sources: [] };
  return retryingDeadlocks(() =>
    inTransaction(db, async (sql) => {
      const settled = await settleAll(
        sql,
        searchIds.map((searchId) => ({ searchId, outcome, announce: false })),
      );
      const voided = whole && settled.results.every((r) => r.settled);
      if (voided && batchId !== null) await sql(`DELETE FROM batches WHERE id = $1`, [batchId]);
      return { voided, moved: settled.moved };
    }),
  );
}
