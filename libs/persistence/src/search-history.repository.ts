import type { DataSource } from 'typeorm';
import type { ApiKeyMode, LookupKind, SearchStatus } from '@dossier/domain';
import { madeInMode } from './sql';

/**
 * A place in (created_at, id) order. `at` is created_at to the microsecond as RFC 3339 text (a JavaScript
 * Date keeps milliseconds only, and a page boundary must not drop rows that share one).
 */
export interface SearchPosition {
  at: string;
  id: string;
}

/**
 * Half-open time window: created_at >= since and < until; null is unbounded. A bound from a client is text to
 * the microsecond (`microsecondInstant`): a Date keeps milliseconds only, and created_at has microseconds.
 */
export interface TimeWindow {
  since: Date | string | null;
  until: Date | string | null;
}

/** One search as the history lists it: the audit columns, never the input or the results. */
export interface HistoryEntry {
  id: string;
  kind: LookupKind;
  status: SearchStatus;
  cost: number;
  charged: boolean | null;
  permissible_purpose: string | null;
  result_count: number | null;
  created_at: Date;
  completed_at: Date | null;
  position: SearchPosition;
}

/** One search as the audit export writes it: who (account e-mail, key), what, why, when, and how it ended. */
export interface AuditEntry extends Omit<HistoryEntry, 'result_count'> {
  account_email: string;
  key_id: string;
  request_id: string;
}

/** created_at as exact text, in UTC, for the next page's bound. */
const POSITION_AT = `to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position_at`;

/**
 * Every bound is a plain comparison on the indexed columns (COALESCE to ±infinity instead of `$n IS NULL
 * OR …`), so each one is an index condition. These statements are planned for their values every time, not
 * kept as named prepared statements: a generic plan cannot tell an open-ended page from a narrow window and
 * estimates one row, so it would fetch an account's every search by bitmap and sort them.
 */
export const HISTORY_PAGE = `
  SELECT s.id, s.kind, s.status, s.cost, s.charged, s.permissible_purpose, s.result_count, s.created_at,
         s.completed_at, ${POSITION_AT}
    FROM searches s
   WHERE s.account_id = $1
     AND s.created_at >= COALESCE($2::timestamptz, '-infinity')
     AND s.created_at < COALESCE($3::timestamptz, 'infinity')
     AND (s.created_at, s.id) < (COALESCE($4::timestamptz, 'infinity'), COALESCE($5::text, ''))
     AND ($6::text IS NULL OR s.kind = $6)
     AND ${madeInMode('s', '$8')}
   ORDER BY s.created_at DESC, s.id DESC
   LIMIT $7`;

const auditQuery = (select: string, byAccount: boolean, page: boolean) => `
  SELECT ${select}
    FROM searches s JOIN accounts a ON a.id = s.account_id
   WHERE ${byAccount ? 's.account_id = $1' : '$1::text IS NULL'}
     AND s.created_at >= COALESCE($2::timestamptz, '-infinity')
     AND s.created_at < COALESCE($3::timestamptz, 'infinity')
     ${page ? `AND (s.created_at, s.id) > (COALESCE($4::timestamptz, '-infinity'), COALESCE($5::text, '')) ORDER BY s.created_at, s.id LIMIT $6` : ''}`;

const AUDIT_COLUMNS = `s.id, a.email AS account_email, s.key_id, s.kind, s.status, s.cost, s.charged,
  s.permissible_purpose, s.request_id, s.created_at, s.completed_at, ${POSITION_AT}`;

/** The statements by whether they are narrowed to one account: each gets a plan on its own index. */
export const AUDIT_PAGE = {
  all: auditQuery(AUDIT_COLUMNS, false, true),
  account: auditQuery(AUDIT_COLUMNS, true, true),
};
const AUDIT_COUNT = {
  all: auditQuery('count(*) AS n', false, false),
  account: auditQuery('count(*) AS n', true, false),
};

type Positioned<T> = Omit<T, 'position'> & { position_at: string };
const positioned = <T extends { id: string }>({ position_at, ...row }: Positioned<T>): T =>
  ({ ...row, position: { at: position_at, id: row.id } }) as unknown as T;

/**
 * Reads of searches in (created_at, id) order, a page at a time: keyset pagination (`after` a position),
 * so a page costs the same however deep it is and rows added meanwhile neither repeat nor shift a page.
 */
export class SearchHistoryRepository {
  constructor(private readonly db: DataSource) {}

  /** One account's searches made with keys of one mode (null: any), newest first, strictly older than `before`, optionally of one kind. */
  async page(
    accountId: string,
    filter: TimeWindow & { kind: LookupKind | null; mode: ApiKeyMode | null },
    before: SearchPosition | null,
    limit: number,
  ): Promise<HistoryEntry[]> {
    const rows = await this.rows<Positioned<HistoryEntry>>(HISTORY_PAGE, [
      accountId,
      filter.since,
      filter.until,
      before?.at ?? null,
      before?.id ?? null,
      filter.kind,
      limit,
      filter.mode,
    ]);
    return rows.map((r) => positioned<HistoryEntry>(r));
  }

  /** Everyone's searches (or one account's), oldest first, strictly after `after`: the audit export's batches. */
  async auditPage(
    filter: TimeWindow & { accountId: string | null },
    after: SearchPosition | null,
    limit: number,
  ): Promise<AuditEntry[]> {
    const rows = await this.rows<Positioned<AuditEntry>>(
      filter.accountId === null ? AUDIT_PAGE.all : AUDIT_PAGE.account,
      [filter.accountId, filter.since, filter.until, after?.at ?? null, after?.id ?? null, limit],
    );
    return rows.map((r) => positioned<AuditEntry>(r));
  }

  private async rows<T>(sql: string, params: unknown[]): Promise<T[]> {
    return (await this.db.query(sql, params)) as T[];
  }

  /** How many searches the audit export will write (for its progress bar). */
  async auditCount(filter: TimeWindow & { accountId: string | null }): Promise<number> {
    const rows = await this.rows<{ n: string }>(filter.accountId === null ? AUDIT_COUNT.all : AUDIT_COUNT.account, [
      filter.accountId,
      filter.since,
      filter.until,
    ]);
    return Number(rows[0]?.n ?? 0);
  }
}
