import type { DataSource } from 'typeorm';
import type { ApiKeyMode } from '@dossier/domain';
import type { BatchItemRef, ItemError } from '@dossier/contracts';
import type { CreditObserver } from './credit-metrics';
import { isUniqueViolation, retryingDeadlocks } from './pg-errors';
import { reserveAll, settleAll, type NewSearch, type Settlement } from './searches.repository';
import {
  creditsOf,
  expireIdempotencyKey,
  holdsIdempotencyKey,
  inTransaction,
  madeInMode,
  queryRows,
  updateInBatches,
} from './sql';

export interface NewBatch {
  id: string;
  accountId: string;
  keyId: string;
  idempotencyKey: string | null;
  requestHash: string | null;
  requestId: string;
}

/** An item as planned before anything is reserved: a search to start, or the error it already has. */
export type PlannedItem = { search: NewSearch } | { error: ItemError };

export type CreateBatchOutcome =
  | {
      kind: 'created';
      items: BatchItemRef[];
      /** The searches that were reserved (and must now be queued), in request order. */
      reserved: NewSearch[];
      /** The account's balance after the last reservation. */
      balance: number;
    }
  /** Another request with the same Idempotency-Key won the race: load that batch instead. */
  | { kind: 'idempotency_race' }
  /** A single lookup of the account holds the Idempotency-Key (keys are per account, API.md). */
  | { kind: 'idempotency_conflict' };

export interface BatchView {
  id: string;
  account_id: string;
  items: BatchItemRef[];
  request_hash: string | null;
  created_at: Date;
  completed_at: Date | null;
}

const COLUMNS = 'id, account_id, items, request_hash, created_at, completed_at';

/**
 * One statement of the batches' purge (`BatchesRepository.purgeRequestHashes`): `$1` days, `$2` rows. Rows another
 * statement holds are skipped, as in the searches' purge (`PURGE_SEARCHES`).
 */
export const PURGE_BATCH_HASHES = `UPDATE batches SET request_hash = NULL, idempotency_key = NULL
  WHERE id IN (
    SELECT id FROM batches
     WHERE (request_hash IS NOT NULL OR idempotency_key IS NOT NULL)
       AND created_at < now() - make_interval(days => $1)
     ORDER BY created_at
     LIMIT $2
     FOR NO KEY UPDATE SKIP LOCKED)
  RETURNING id`;

/** Batches (ADR 0019). Every read is scoped to one account. */
export class BatchesRepository {
  constructor(
    private readonly db: DataSource,
    private readonly credits: CreditObserver = () => {},
  ) {}

  /**
   * Reserves every planned search in request order, each on its own (one that does not fit in the
   * balance gets `insufficient_credits` in its place and costs nothing), and records the batch — all in
   * one transaction, so a crash or an Idempotency-Key race leaves no reservation without its batch.
   */
  async create(batch: NewBatch, planned: readonly PlannedItem[]): Promise<CreateBatchOutcome> {
    try {
      const created = await inTransaction(this.db, async (sql) => {
        if (batch.idempotencyKey !== null) {
          // The account's row lock orders this against a lookup with the same key (dossier_reserve takes
          // it before looking for a batch with the key): whichever commits second sees the other.
          await sql(`SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, [batch.accountId]);
          if (await holdsIdempotencyKey(sql, 'searches', batch.accountId, batch.idempotencyKey)) {
            return { kind: 'idempotency_conflict' as const };
          }
        }
        const searches = planned.flatMap((p) => ('search' in p ? [{ ...p.search, batchId: batch.id }] : []));
        const outcomes = await reserveAll(sql, searches);
        const accountBalance = async () => {
          const [row] = await sql<{ balance: string }>(`SELECT balance FROM accounts WHERE id = $1`, [batch.accountId]);
          return row ? creditsOf(row.balance) : 0;
        };
        // The balance after the last reservation (the account's row is locked: nothing else moves it now)…
        const last = outcomes.findLast((o) => o.kind === 'reserved');
        const balance = last?.kind === 'reserved' ? last.balance : await accountBalance();
        // …and, walking the items in order, the balance at each one's turn: a refused item names that one,
        // not what is left after later, cheaper items were reserved.
        let atTurn = balance + outcomes.reduce((sum, o, k) => sum + (o.kind === 'reserved' ? searches[k]!.cost : 0), 0);
        const items: BatchItemRef[] = [];
        const reserved: NewSearch[] = [];
        let next = 0;
        for (const item of planned) {
          if ('error' in item) {
            items.push({ error: item.error });
            continue;
          }
          const search = searches[next]!;
          const outcome = outcomes[next++]!;
          if (outcome.kind === 'reserved') {
            atTurn -= search.cost;
            reserved.push(search);
            items.push({ search_id: search.id });
            continue;
          }
          // No Idempotency-Key on a batch's searches: the only other outcome is the balance.
          items.push({
            error: {
              code: 'insufficient_credits',
              message: `this lookup costs ${search.cost} credit(s) and the balance is ${atTurn}; nothing was charged`,
            },
          });
        }
        await sql(
          `INSERT INTO batches (id, account_id, key_id, items, idempotency_key, request_hash, request_id, completed_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $8 THEN now() END)`,
          [
            batch.id,
            batch.accountId,
            batch.keyId,
            JSON.stringify(items),
            batch.idempotencyKey,
            batch.requestHash,
            batch.requestId,
            reserved.length === 0,
          ],
        );
        return { kind: 'created' as const, items, reserved, balance };
      });
      if (created.kind === 'created') {
        for (const s of created.reserved) this.credits({ kind: s.kind, phase: 'reserved', credits: s.cost });
      }
      return created;
    } catch (err) {
      if (batch.idempotencyKey !== null && isUniqueViolation(err)) return { kind: 'idempotency_race' };
      throw err;
    }
  }

  /** A batch of this account made with a key of this mode (another mode's is not found; null: any mode). */
  async findForAccount(id: string, accountId: string, mode: ApiKeyMode | null): Promise<BatchView | null> {
    const rows = await queryRows<BatchView>(
      this.db,
      `SELECT ${COLUMNS} FROM batches b WHERE b.id = $1 AND b.account_id = $2 AND ${madeInMode('b', '$3')}`,
      [id, accountId, mode],
    );
    return rows[0] ?? null;
  }

  /** The batch that holds this Idempotency-Key, if any (keys older than `IDEMPOTENCY_TTL_HOURS` are expired first). */
  async findByIdempotencyKey(accountId: string, key: string): Promise<BatchView | null> {
    await expireIdempotencyKey(this.db, 'batches', accountId, key);
    const rows = await queryRows<BatchView>(
      this.db,
      `SELECT ${COLUMNS} FROM batches WHERE account_id = $1 AND idempotency_key = $2`,
      [accountId, key],
    );
    return rows[0] ?? null;
  }

  /**
   * Releases searches of a batch whose jobs could not be queued (each settled failed with `error`, nothing
   * charged) and, when they are all of its searches (`whole`) and every one was released here, deletes the
   * batch — in one transaction. The client is then answered 503 without the batch's id: its Idempotency-Key
   * is free, so a retry with the key runs it again, and nothing completes it or sends its `batch.completed`.
   * The delete commits with the releases: a job whose add did reach Redis (and that the gateway could not
   * take back: Redis unreachable) settles, or checks the batch's completion, either before them (its search
   * still pending among the others: not complete) or after (no batch row). A delete after the releases'
   * commit left a moment in which such a job found the batch settled and announced it. The failed searches
   * stay, naming the batch, as a refused lookup's search does. `released`: per search, whether this call
   * released it (not: its job had settled it first; then the batch stays, `voided` false). `whole` false:
   * some of the batch's searches are left to the jobs running them, and the batch stays.
   */
  async releaseUnqueued(
    id: string,
    searchIds: readonly string[],
    error: { code: string; message: string },
    whole: boolean,
  ): Promise<{ released: boolean[]; voided: boolean }> {
    const outcome: Settlement = { status: 'failed', error, sources: [] };
    const { results, moved, voided } = await retryingDeadlocks(() =>
      inTransaction(this.db, async (sql) => {
        const settled = await settleAll(
          sql,
          searchIds.map((searchId) => ({ searchId, outcome })),
        );
        const all = whole && settled.results.every((r) => r.settled);
        if (all) await sql(`DELETE FROM batches WHERE id = $1`, [id]);
        return { ...settled, voided: all };
      }),
    );
    for (const m of moved) this.credits(m);
    return { released: results.map((r) => r.settled), voided };
  }

  /**
   * The batch's account and completion time when none of its searches is pending any more — the time it was
   * marked completed (`marked`), or when it is not yet, the time its last search settled (now for a batch of
   * no searches): the same for every completer however late it reads, so the `batch.completed` one queues
   * and the time another marks agree — or null while some run (or when there is no such batch). Read after each of its searches settles (and again on a redelivery): the read made after the last
   * settle commits sees every search settled. The batch is marked (markCompleted) only once its
   * `batch.completed` is queued (queueBatchCompletion): until then the reconciler still finds it.
   */
  async settledState(id: string): Promise<{ account_id: string; completed_at: Date; marked: boolean } | null> {
    const rows = await queryRows<{ account_id: string; completed_at: Date; marked: boolean }>(
      this.db,
      `SELECT b.account_id,
              COALESCE(b.completed_at, (SELECT max(s.completed_at) FROM searches s WHERE s.batch_id = $1), now())
                AS completed_at,
              b.completed_at IS NOT NULL AS marked
         FROM batches b
        WHERE b.id = $1 AND NOT EXISTS (SELECT 1 FROM searches s WHERE s.batch_id = $1 AND s.status = 'pending')`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Marks the batch completed at `at` (settledState's time), unless it already is. */
  async markCompleted(id: string, at: Date): Promise<void> {
    await queryRows(this.db, `UPDATE batches SET completed_at = COALESCE(completed_at, $2) WHERE id = $1`, [id, at]);
  }

  /**
   * Batches older than `olderThanS` seconds, not completed, none of whose searches is pending any more
   * (at most `limit`, oldest first): their last searches were settled without a completion check after
   * them (a gateway that released them when queueing failed), so the reconciler completes them.
   */
  async findSettledOpen(olderThanS: number, limit: number): Promise<string[]> {
    const rows = await queryRows<{ id: string }>(
      this.db,
      `SELECT b.id FROM batches b
        WHERE b.completed_at IS NULL AND b.created_at < now() - make_interval(secs => $1)
          AND NOT EXISTS (SELECT 1 FROM searches s WHERE s.batch_id = b.id AND s.status = 'pending')
        ORDER BY b.created_at
        LIMIT $2`,
      [olderThanS, limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Erases the request hash (of the whole body: every item's input) and the Idempotency-Key of batches
   * created more than `olderThanDays` days ago, `batch` rows per statement, through the index of batches
   * that keep either (`batches_retained_idx`); returns how many batches it erased them from.
   */
  async purgeRequestHashes(olderThanDays: number, batch = 1000): Promise<number> {
    return updateInBatches(this.db, PURGE_BATCH_HASHES, olderThanDays, batch);
  }
}
