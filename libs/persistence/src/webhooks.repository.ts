import type { DataSource } from 'typeorm';
import { newId, type ApiKeyMode } from '@dossier/domain';
import { inTransaction, queryRows, updateInBatches } from './sql';

export interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  created_at: Date;
}

/** A webhook as its deliveries need it: with the sealed (encrypted) secret. */
export interface WebhookTarget extends WebhookRow {
  account_id: string;
  secret_sealed: string;
}

export interface DeliveryAttempt {
  event_id: string;
  event_type: string;
  attempt: number;
  outcome: 'delivered' | 'retrying' | 'failed';
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export type DeliveryRow = DeliveryAttempt & { attempted_at: Date };

const COLUMNS = 'id, url, events, created_at';

/**
 * The retention pass's statement: up to `$2` delivery attempts made more than `$1` days ago, oldest first,
 * read through `webhook_deliveries_attempted_idx`. Rows another statement holds are skipped, as in the searches'
 * purge (`PURGE_SEARCHES`): an overlapping pass used to wait for them, find them gone and stop.
 */
export const PURGE_DELIVERIES = `DELETE FROM webhook_deliveries
   WHERE id IN (
     SELECT id FROM webhook_deliveries
      WHERE attempted_at < now() - make_interval(days => $1)
      ORDER BY attempted_at
      LIMIT $2
      FOR UPDATE SKIP LOCKED)
  RETURNING id`;

/**
 * Webhook endpoints and their delivery attempts (ADR 0020). Every read and delete is scoped to one account
 * and one mode (ADR 0034): a webhook belongs to the mode of the key that registered it.
 */
export class WebhooksRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * A new webhook of the account in `mode`, unless it has `max` there already (`full`). Creates of one
   * account take turns on an advisory lock, so two at once cannot both take the last place.
   */
  async create(
    accountId: string,
    mode: ApiKeyMode,
    url: string,
    events: readonly string[],
    secretSealed: string,
    max: number,
  ): Promise<WebhookRow | 'full'> {
    return inTransaction(this.db, async (sql) => {
      await sql(`SELECT pg_advisory_xact_lock(hashtext('dossier:webhooks:' || $1))`, [accountId]);
      const [held] = await sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhooks WHERE account_id = $1 AND mode = $2`,
        [accountId, mode],
      );
      if (held!.n >= max) return 'full';
      const rows = await sql<WebhookRow>(
        `INSERT INTO webhooks (id, account_id, mode, url, events, secret_sealed) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING ${COLUMNS}`,
        [newId.webhook(), accountId, mode, url, events, secretSealed],
      );
      return rows[0]!;
    });
  }

  listForAccount(accountId: string, mode: ApiKeyMode): Promise<WebhookRow[]> {
    return queryRows<WebhookRow>(
      this.db,
      `SELECT ${COLUMNS} FROM webhooks WHERE account_id = $1 AND mode = $2 ORDER BY created_at, id`,
      [accountId, mode],
    );
  }

  async findForAccount(id: string, accountId: string, mode: ApiKeyMode): Promise<WebhookRow | null> {
    const rows = await queryRows<WebhookRow>(
      this.db,
      `SELECT ${COLUMNS} FROM webhooks WHERE id = $1 AND account_id = $2 AND mode = $3`,
      [id, accountId, mode],
    );
    return rows[0] ?? null;
  }

  /** Deletes the account's webhook of this mode (its delivery records go with it); false when there is none by this id. */
  async deleteForAccount(id: string, accountId: string, mode: ApiKeyMode): Promise<boolean> {
    const rows = await queryRows<{ id: string }>(
      this.db,
      `DELETE FROM webhooks WHERE id = $1 AND account_id = $2 AND mode = $3 RETURNING id`,
      [id, accountId, mode],
    );
    return rows.length > 0;
  }

  /**
   * For a settled search, in one indexed query: the batch it belongs to (if any) and the webhooks of its
   * account that take this event, of the mode of the key that made it.
   */
  async onSearchSettled(
    searchId: string,
    event: string,
  ): Promise<{ batchId: string | null; subscribers: { id: string; account_id: string }[] }> {
    const rows = await queryRows<{ batch_id: string | null; id: string | null; account_id: string | null }>(
      this.db,
      `SELECT s.batch_id, w.id, w.account_id FROM searches s
         LEFT JOIN api_keys k ON k.id = s.key_id
         LEFT JOIN webhooks w ON w.account_id = s.account_id AND w.mode = COALESCE(k.mode, 'live') AND $2 = ANY(w.events)
        WHERE s.id = $1 ORDER BY w.id`,
      [searchId, event],
    );
    return {
      batchId: rows[0]?.batch_id ?? null,
      subscribers: rows.flatMap((r) => (r.id && r.account_id ? [{ id: r.id, account_id: r.account_id }] : [])),
    };
  }

  /** The webhooks that take this event of the batch: its account's, of the mode of the key that made it. */
  batchSubscribers(batchId: string, event: string): Promise<{ id: string; account_id: string }[]> {
    return queryRows<{ id: string; account_id: string }>(
      this.db,
      `SELECT w.id, w.account_id FROM batches b
         LEFT JOIN api_keys k ON k.id = b.key_id
         JOIN webhooks w ON w.account_id = b.account_id AND w.mode = COALESCE(k.mode, 'live') AND $2 = ANY(w.events)
        WHERE b.id = $1 ORDER BY w.id`,
      [batchId, event],
    );
  }

  async target(id: string): Promise<WebhookTarget | null> {
    const rows = await queryRows<WebhookTarget>(
      this.db,
      `SELECT ${COLUMNS}, account_id, secret_sealed FROM webhooks WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /**
   * Records one attempt of an event, once: an attempt recorded already (its worker died before BullMQ
   * recorded the outcome, and the next worker reports it interrupted) keeps the row it has — except that
   * `failed` (the event ends there) replaces `retrying`, so the event's end stays visible.
   */
  async recordAttempt(webhookId: string, a: DeliveryAttempt): Promise<void> {
    await queryRows(
      this.db,
      `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, attempt, outcome, status_code, error, duration_ms)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = $1)
       ON CONFLICT (webhook_id, event_id, attempt) DO UPDATE SET outcome = 'failed'
        WHERE webhook_deliveries.outcome = 'retrying' AND EXCLUDED.outcome = 'failed'`,
      [webhookId, a.event_id, a.event_type, a.attempt, a.outcome, a.status_code, a.error, a.duration_ms],
    );
  }

  /**
   * Deletes the delivery attempts (of every webhook) made more than `olderThanDays` days ago — the
   * retention pass, with RESULTS_TTL_DAYS (ADR 0020) — `batch` rows per statement; returns how many.
   */
  purgeDeliveries(olderThanDays: number, batch = 1000): Promise<number> {
    return updateInBatches(this.db, PURGE_DELIVERIES, olderThanDays, batch);
  }

  /** The webhook's latest delivery attempts, newest first. */
  deliveries(webhookId: string, limit: number): Promise<DeliveryRow[]> {
    return queryRows<DeliveryRow>(
      this.db,
      `SELECT event_id, event_type, attempt, outcome, status_code, error, duration_ms, attempted_at
         FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id DESC LIMIT $2`,
      [webhookId, limit],
    );
  }
}
