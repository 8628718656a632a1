import type { DataSource } from 'typeorm';
import { inTransaction } from './sql';

/** An outbox row (ADR 0062): a settled search whose events are still to be queued. */
export interface OutboxRow {
  id: string;
  search_id: string;
  event: 'search.completed' | 'search.failed';
  /** False: no search event (the gateway answered the search itself), only its batch's completion. */
  announce: boolean;
}

/** This connection's rows (ADR 0067): those settled by processes of the same relay (QUEUE_PREFIX). */
const OWN_ROWS = `relay IS NOT DISTINCT FROM current_setting('dossier.relay', true)`;

/**
 * The transactional outbox (ADR 0062). Rows are written by the statement that settles a search (settleAll),
 * each carrying its process's relay name (ADR 0067); `relay` hands this relay's rows to a publisher and
 * deletes those it published, in one transaction.
 */
export class OutboxRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * Claims up to `limit` rows, oldest first (rows another relay holds are skipped, not waited for), calls
   * `publish` for each and deletes the published ones, all in one transaction: a relay that dies mid-way
   * (SIGKILL) holds nothing once its connection is gone, and its rows are claimed again. A row whose publish
   * throws stays for the next pass. Publishing twice is harmless: events carry ids derived from the search's
   * and the batch's ids. Returns how many rows were claimed and how many published.
   */
  async relay(
    limit: number,
    publish: (row: OutboxRow) => Promise<void>,
  ): Promise<{ claimed: number; published: number; failures: unknown[] }> {
    return inTransaction(this.db, async (sql) => {
      const rows = await sql<OutboxRow>(
        `SELECT id, search_id, event, announce FROM outbox WHERE ${OWN_ROWS}
         ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      const outcomes = await Promise.allSettled(rows.map((row) => publish(row)));
      const published = rows.filter((_, k) => outcomes[k]!.status === 'fulfilled').map((r) => r.id);
      if (published.length > 0) await sql(`DELETE FROM outbox WHERE id = ANY($1::bigint[])`, [published]);
      const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
      return { claimed: rows.length, published: published.length, failures };
    });
  }

  /** How many of this relay's rows wait (its backlog, for metrics and tests). */
  async backlog(): Promise<number> {
    const rows = await inTransaction(this.db, (sql) =>
      sql<{ n: string }>(`SELECT count(*) AS n FROM outbox WHERE ${OWN_ROWS}`),
    );
    return Number(rows[0]!.n);
  }
}
