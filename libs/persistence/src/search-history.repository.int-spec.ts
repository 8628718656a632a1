import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { newId, type LookupKind } from '@dossier/domain';
import { testEnv } from '@dossier/testing';
import { openDataSource } from './data-source';
import { AccountsRepository } from './accounts.repository';
import { SearchesRepository } from './searches.repository';
import { AUDIT_PAGE, HISTORY_PAGE, SearchHistoryRepository, type SearchPosition } from './search-history.repository';

describe('SearchHistoryRepository against the real Postgres', () => {
  let db: DataSource;
  let accounts: AccountsRepository;
  let searches: SearchesRepository;
  let history: SearchHistoryRepository;

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 4, applicationName: 'history-spec' });
    accounts = new AccountsRepository(db);
    searches = new SearchesRepository(db);
    history = new SearchHistoryRepository(db);
  });
  afterAll(async () => {
    await db?.destroy();
  });

  const account = async (credits = 1000) =>
    (await accounts.create(`h${randomBytes(6).toString('hex')}@example.com`, 'x', credits)).id;

  /** One search reserved through the real statement (created_at = now()). */
  async function reserve(accountId: string, kind: LookupKind = 'phone', purpose: string | null = null) {
    const id = newId.search();
    const r = await searches.reserve({
      id,
      accountId,
      keyId: 'key_hist',
      kind,
      input: { q: 1 },
      cost: 2,
      idempotencyKey: null,
      requestHash: null,
      requestId: 'req_hist',
      permissiblePurpose: purpose,
    });
    expect(r.kind).toBe('reserved');
    return id;
  }

  /** Each call's ids end in its own number, so two calls never make the same id. */
  let calls = 0;
  /** `count` searches with the same created_at to the microsecond: only the id orders them. */
  async function sameInstant(accountId: string, count: number, at: string): Promise<string[]> {
    const rows = (await db.query(
      `INSERT INTO searches (id, account_id, key_id, kind, input, cost, request_id, created_at)
       SELECT 'srch_t' || lpad(i::text, 23, '0') || $3, $1, 'key_hist', 'email', '{}', 1, 'req_hist', $2::timestamptz
         FROM generate_series(1, $4::int) AS i
       RETURNING id`,
      [accountId, at, String(++calls).padStart(4, '0'), count],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  const all = async (
    accountId: string,
    limit: number,
    filter: Partial<Parameters<SearchHistoryRepository['page']>[1]> = {},
    between?: (page: number) => Promise<void>,
  ) => {
    const seen: string[] = [];
    let before: SearchPosition | null = null;
    for (let page = 0; ; page++) {
      const rows = await history.page(
        accountId,
        { kind: null, since: null, until: null, mode: null, ...filter },
        before,
        limit,
      );
      expect(rows.length).toBeLessThanOrEqual(limit);
      seen.push(...rows.map((r) => r.id));
      if (rows.length < limit) return seen;
      before = rows[rows.length - 1]!.position;
      await between?.(page);
    }
  };

  it('pages one account newest first, with no repeats or gaps while new searches arrive', async () => {
    const a = await account();
    const older: string[] = [];
    for (let i = 0; i < 23; i++) older.push(await reserve(a));
    const added: string[] = [];
    const seen = await all(a, 5, {}, async () => {
      added.push(await reserve(a)); // newer than every page: never in the pages still to come
    });
    expect(seen).toEqual([...older].reverse());
    expect(added).toHaveLength(4);
    // A fresh walk sees everything, the additions first.
    expect(await all(a, 7)).toEqual([...older, ...added].reverse());
  });

  it('orders searches with the same created_at by id, across page boundaries', async () => {
    const a = await account();
    const ids = await sameInstant(a, 12, '2026-03-01T10:00:00.123456Z');
    const later = await sameInstant(a, 3, '2026-03-01T10:00:00.123457Z'); // one microsecond later
    const seen = await all(a, 4);
    expect(seen).toEqual([...[...later].sort().reverse(), ...[...ids].sort().reverse()]);
    const [first] = await history.page(a, { kind: null, since: null, until: null, mode: null }, null, 1);
    expect(first!.position).toEqual({ at: '2026-03-01T10:00:00.123457Z', id: first!.id });
  });

  it('filters by kind and by a half-open time window, and never shows another account', async () => {
    const a = await account();
    const b = await account();
    const phone = await reserve(a, 'phone');
    const person = await reserve(a, 'person', 'employment');
    const theirs = await reserve(b, 'person');
    expect(await all(a, 10, { kind: 'person' })).toEqual([person]);
    expect(await all(a, 10, { kind: 'company' })).toEqual([]);
    expect(await all(b, 10)).toEqual([theirs]);

    const instants = await sameInstant(a, 1, '2026-01-01T00:00:00Z');
    const window = (since: string | null, until: string | null) =>
      all(a, 10, { since: since ? new Date(since) : null, until: until ? new Date(until) : null });
    expect(await window('2026-01-01T00:00:00Z', '2026-01-01T00:00:00.001Z')).toEqual(instants); // since is inclusive
    expect(await window(null, '2026-01-01T00:00:00Z')).toEqual([]); // until is exclusive
    expect(await window('2026-01-01T00:00:00.001Z', null)).toEqual([person, phone]);
  });

  it('lists the audit columns: status, cost, charge and the result count kept when results are purged', async () => {
    const a = await account();
    const found = await reserve(a, 'phone', 'fraud_prevention');
    const nothing = await reserve(a, 'email');
    const failed = await reserve(a, 'company');
    const pending = await reserve(a, 'person');
    await searches.settle(found, { status: 'succeeded', results: [{}, {}], sources: [], charge: true });
    await searches.settle(nothing, { status: 'succeeded', results: [], sources: [], charge: false });
    await searches.settle(failed, { status: 'failed', error: { code: 'unavailable', message: 'x' }, sources: [] });
    await db.query(`UPDATE searches SET created_at = created_at - interval '90 days' WHERE id = $1`, [found]);
    await searches.purgeResults(30);

    const rows = await history.page(a, { kind: null, since: null, until: null, mode: null }, null, 10);
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(found)).toMatchObject({
      kind: 'phone',
      status: 'succeeded',
      charged: true,
      cost: 2,
      result_count: 2,
      permissible_purpose: 'fraud_prevention',
      completed_at: expect.any(Date),
    });
    expect(byId.get(nothing)).toMatchObject({ status: 'succeeded', charged: false, result_count: 0 });
    expect(byId.get(failed)).toMatchObject({ status: 'failed', charged: false, result_count: null });
    expect(byId.get(pending)).toMatchObject({
      status: 'pending',
      charged: null,
      result_count: null,
      completed_at: null,
    });
    expect((await db.query(`SELECT results FROM searches WHERE id = $1`, [found]))[0]).toEqual({ results: null });
  });

  it('pages the audit trail oldest first, for everyone or one account, with the account e-mail', async () => {
    const a = await account();
    const email = (await db.query(`SELECT email FROM accounts WHERE id = $1`, [a]))[0].email as string;
    const ids = await sameInstant(a, 7, '2020-05-05T05:05:05.5Z');
    const filter = { accountId: a, since: null, until: null };
    expect(await history.auditCount(filter)).toBe(7);
    const seen: string[] = [];
    let after: SearchPosition | null = null;
    for (;;) {
      const rows = await history.auditPage(filter, after, 3);
      seen.push(...rows.map((r) => r.id));
      if (rows.length < 3) break;
      after = rows[rows.length - 1]!.position;
    }
    expect(seen).toEqual([...ids].sort());
    const [first] = await history.auditPage(
      { accountId: null, since: new Date('2020-05-05T05:05:05.5Z'), until: new Date('2020-05-05T05:05:05.501Z') },
      null,
      1,
    );
    expect(first).toMatchObject({
      id: [...ids].sort()[0],
      account_email: email,
      key_id: 'key_hist',
      request_id: 'req_hist',
    });
  });

  /**
   * The plans, read on 50,000 searches across 50 accounts written (and analysed) inside a transaction that is
   * rolled back; on a few rows a scan is the cheaper plan.
   */
  describe('plans', () => {
    const plan = async (sql: string, params: unknown[]) => {
      const runner = db.createQueryRunner();
      await runner.startTransaction();
      try {
        await runner.query(
          `INSERT INTO searches (id, account_id, key_id, kind, input, cost, request_id, created_at)
           SELECT 'srch_plan' || lpad(i::text, 20, '0'), 'acct_plan' || (i % 50), 'key_plan',
                  (ARRAY['person','company','email','phone'])[1 + i % 4], '{}', 1, 'req_plan',
                  now() - make_interval(secs => i)
             FROM generate_series(1, 50000) AS i`,
        );
        await runner.query('ANALYZE searches');
        // As the repository runs them: an unnamed statement, planned for its values.
        const rows = (await runner.query(`EXPLAIN ${sql}`, params)) as { 'QUERY PLAN': string }[];
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    };
    const deep: SearchPosition = { at: new Date(Date.now() - 40_000_000).toISOString(), id: 'srch_x' };

    it("reads one account's page through its index, bounded by the cursor", async () => {
      for (const params of [
        ['acct_plan7', null, null, null, null, null, 20, null],
        ['acct_plan7', '2020-01-01T00:00:00Z', null, deep.at, deep.id, 'phone', 20, null],
        // A key's mode (GET /v1/searches): each row's key is looked up by its primary key, the page is not sorted.
        ['acct_plan7', null, null, null, null, null, 20, 'live'],
      ]) {
        const text = await plan(HISTORY_PAGE, params);
        expect(text).toContain('searches_account_created_idx');
        expect(text).toMatch(/Index Cond: .*account_id = .*ROW\(created_at, id\) < ROW/s);
        expect(text).not.toMatch(/Seq Scan on searches|Sort/);
      }
    });

    it("reads the audit export's batches through the created_at index", async () => {
      const all = await plan(AUDIT_PAGE.all, [null, null, null, deep.at, deep.id, 1000]);
      expect(all).toContain('searches_created_idx');
      expect(all).not.toMatch(/Seq Scan on searches|Sort/);
      // An account with more searches than a batch (1,000 each here, 100 a batch) is read in index order; one
      // with fewer left than a batch may be fetched whole and sorted, which is as cheap.
      const one = await plan(AUDIT_PAGE.account, ['acct_plan7', null, null, deep.at, deep.id, 100]);
      expect(one).toContain('searches_account_created_idx');
      expect(one).toMatch(/Index Cond: .*ROW\(created_at, id\) > ROW/s);
      expect(one).not.toMatch(/Seq Scan on searches|Sort/);
    });
  });
});
