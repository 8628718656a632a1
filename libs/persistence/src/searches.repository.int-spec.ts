import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { newId } from '@dossier/domain';
import { besideHeldRows, ledgerState, newSearch, testEnv, waitFor } from '@dossier/testing';
import { openDataSource } from './data-source';
import { isDatabaseUnavailable } from './pg-errors';
import { AccountsRepository } from './accounts.repository';
import { BatchesRepository, PURGE_BATCH_HASHES } from './batches.repository';
import { PURGE_SEARCHES, SearchesRepository } from './searches.repository';
import { reserveAll, type NewSearch } from './credits/credits';
import { holdsIdempotencyKey, queryRows } from './sql';

describe('SearchesRepository against the real Postgres', () => {
  let db: DataSource;
  let accounts: AccountsRepository;
  let searches: SearchesRepository;

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 20, applicationName: 'int-spec' });
    accounts = new AccountsRepository(db);
    searches = new SearchesRepository(db);
  });
  afterAll(async () => {
    await db?.destroy();
  });

  async function account(credits: number): Promise<string> {
    const a = await accounts.create(`r${randomBytes(6).toString('hex')}@example.com`, 'x', credits);
    return a.id;
  }

  const search = newSearch;

  /** Until some session waits for a lock the backend `pid` holds (polled, not timed). */
  const untilBlocking = (pid: number, what: string) =>
    waitFor(
      () =>
        queryRows<{ n: number }>(
          db,
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`,
          [pid],
        ),
      (rows) => rows[0]!.n > 0,
      { timeoutMs: 10_000, what },
    );

  it('never lets 50 parallel reservations take more than the balance', async () => {
    const id = await account(17);
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => searches.reserve(search(id))));
    expect(outcomes.filter((o) => o.kind === 'reserved')).toHaveLength(17);
    expect(outcomes.filter((o) => o.kind === 'insufficient')).toHaveLength(33);
    expect(await ledgerState(id)).toMatchObject({ balance: 0, ledger_sum: 0, reserves: 17, pending: 17 });
  });

  describe('one batch of reservations (dossier_reserve)', () => {
    const reserveBatch = (items: NewSearch[]) => reserveAll((text, params) => queryRows(db, text, params), items);
    const balanceOf = async (id: string) => (await searches.balanceOf(id))!;

    it('reserves every item when each account covers its items: per-item balances in order, one ledger entry per paid item', async () => {
      const [a, b] = [await account(10), await account(5)];
      const items = [
        search(a, { cost: 2 }),
        search(b, { cost: 1 }),
        search(a, { cost: 3 }),
        search(b, { cost: 1 }),
        search(a, { cost: 0 }),
      ];
      expect(await reserveBatch(items)).toEqual([
        { kind: 'reserved', balance: 8 },
        { kind: 'reserved', balance: 4 },
        { kind: 'reserved', balance: 5 },
        { kind: 'reserved', balance: 3 },
        { kind: 'reserved', balance: 5 },
      ]);
      expect(await ledgerState(a)).toMatchObject({ balance: 5, ledger_sum: 5, reserves: 2, pending: 3 });
      expect(await ledgerState(b)).toMatchObject({ balance: 3, ledger_sum: 3, reserves: 2, pending: 2 });
      const stored = await queryRows<{ id: string; cost: number }>(
        db,
        `SELECT id, cost FROM searches WHERE id = ANY($1)`,
        [items.map((i) => i.id)],
      );
      expect(stored).toHaveLength(5);
    });

    it('goes item by item when an account runs short: earlier items reserved, the one that does not fit refused, later ones that fit reserved', async () => {
      const [a, b] = [await account(3), await account(4)];
      expect(
        await reserveBatch([search(a, { cost: 2 }), search(b), search(a, { cost: 2 }), search(a, { cost: 1 })]),
      ).toEqual([
        { kind: 'reserved', balance: 1 },
        { kind: 'reserved', balance: 3 },
        { kind: 'insufficient' },
        { kind: 'reserved', balance: 0 },
      ]);
      expect([await balanceOf(a), await balanceOf(b)]).toEqual([0, 3]);
      expect(await ledgerState(a)).toMatchObject({ balance: 0, ledger_sum: 0, reserves: 2 });
      // An account that does not exist is refused on its own; the others still reserve.
      expect(await reserveBatch([search('acct_nobody'), search(b)])).toEqual([
        { kind: 'insufficient' },
        { kind: 'reserved', balance: 2 },
      ]);
    });

    it('goes item by item with an Idempotency-Key in the batch: a key used twice reserves once', async () => {
      const a = await account(5);
      const key = `idem-${randomBytes(4).toString('hex')}`;
      expect(
        await reserveBatch([search(a, { idempotencyKey: key }), search(a, { idempotencyKey: key }), search(a)]),
      ).toEqual([{ kind: 'reserved', balance: 4 }, { kind: 'idempotency_race' }, { kind: 'reserved', balance: 3 }]);
      expect(await ledgerState(a)).toMatchObject({ balance: 3, ledger_sum: 3, reserves: 2, pending: 2 });
    });
  });

  it("reserves and settles a search that costs nothing (a test key's) without a ledger entry, on 0 credits too", async () => {
    const id = await account(0);
    const before = await ledgerState(id);
    const free = [search(id, { cost: 0 }), search(id, { cost: 0 })];
    for (const s of free) expect(await searches.reserve(s)).toEqual({ kind: 'reserved', balance: 0 });
    expect(await ledgerState(id)).toEqual({ ...before, pending: 2 });
    const [found, empty] = await searches.settleMany([
      {
        searchId: free[0]!.id,
        outcome: { status: 'succeeded', results: [{ e164: '+15555550100' }], sources: [], charge: false },
      },
      {
        searchId: free[1]!.id,
        outcome: { status: 'failed', error: { code: 'unavailable', message: 'x' }, sources: [] },
      },
    ]);
    expect([found, empty]).toEqual([
      { settled: true, charged: false, balance: 0, notify: false },
      { settled: true, charged: false, balance: 0, notify: false },
    ]);
    expect(await ledgerState(id)).toEqual(before);
    expect(await searches.statusOf(free[0]!.id)).toBe('succeeded');
  });

  it('settles once: capture keeps the charge, a second settle (redelivery) changes nothing', async () => {
    const id = await account(3);
    const s = search(id);
    await searches.reserve(s);
    const results = [{ e164: '+14155552671' }];
    const settles = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        searches.settle(
          s.id,
          i % 2
            ? { status: 'succeeded', results, sources: [], charge: true }
            : { status: 'failed', error: { code: 'unavailable', message: 'x' }, sources: [] },
        ),
      ),
    );
    expect(settles.filter((r) => r.settled)).toHaveLength(1);
    const winner = settles.find((r) => r.settled)!;
    expect(winner.balance).toBe(winner.charged ? 2 : 3);
    const state = await ledgerState(id);
    expect(state.captures + state.releases).toBe(1);
    expect(state.balance).toBe(state.captures ? 2 : 3);
    expect(state.ledger_sum).toBe(state.balance);
    expect(state.pending).toBe(0);
  });

  it("keeps a pending search's progress until it settles (ADR 0049): gone then, and never written on a settled search", async () => {
    const id = await account(3);
    const s = search(id);
    await searches.reserve(s);
    const progress = {
      results: [],
      source_summary: {
        found: 1,
        not_found: 2,
        unknown: 0,
        rate_limited: 0,
        blocked: 0,
        timeout: 0,
        error: 0,
        skipped: 0,
      },
      sources_pending: 7,
      updated_at: '2026-12-06T23:00:00.000Z',
    };
    await searches.recordProgress(s.id, progress);
    expect((await searches.findForAccount(s.id, id, null))?.progress).toEqual(progress);
    await searches.settle(s.id, { status: 'succeeded', results: [], sources: [], charge: false });
    expect((await searches.findForAccount(s.id, id, null))?.progress).toBeNull();
    // A write that comes late (a progress under way while the job settled) leaves the answer alone.
    await searches.recordProgress(s.id, progress);
    expect((await searches.findForAccount(s.id, id, null))?.progress).toBeNull();
  });

  it('settles a batch in one statement: captures, releases credited per account, repeats and strangers untouched', async () => {
    const a = await account(5);
    const b = await account(5);
    const [a1, a2, a3, b1] = [search(a), search(a), search(a), search(b)];
    for (const s of [a1, a2, a3, b1]) await searches.reserve(s);
    await searches.settle(a3.id, { status: 'succeeded', results: [], sources: [], charge: false }); // settled before the batch
    const found = { status: 'succeeded' as const, results: [{ e164: '+14155552671' }], sources: [], charge: true };
    const nothing = { status: 'succeeded' as const, results: [], sources: [], charge: false };
    const results = await searches.settleMany([
      { searchId: a1.id, outcome: found },
      { searchId: a2.id, outcome: nothing },
      { searchId: a3.id, outcome: found },
      { searchId: b1.id, outcome: { status: 'failed', error: { code: 'unavailable', message: 'x' }, sources: [] } },
      { searchId: a1.id, outcome: nothing },
      { searchId: 'srch_unknown', outcome: found },
    ]);
    expect(results).toEqual([
      { settled: true, charged: true, balance: 4, notify: false },
      { settled: true, charged: false, balance: 4, notify: false },
      { settled: false, charged: false, balance: null, notify: false },
      { settled: true, charged: false, balance: 5, notify: false },
      { settled: false, charged: false, balance: null, notify: false },
      { settled: false, charged: false, balance: null, notify: false },
    ]);
    expect(await ledgerState(a)).toEqual({
      balance: 4,
      ledger_sum: 4,
      reserves: 3,
      captures: 1,
      releases: 2,
      pending: 0,
    });
    expect(await ledgerState(b)).toEqual({
      balance: 5,
      ledger_sum: 5,
      reserves: 1,
      captures: 0,
      releases: 1,
      pending: 0,
    });
  });

  it('settles releases on many accounts while a reservation holds them, in the order it takes them: no deadlock', async () => {
    // A batched reservation locks its accounts in id order (dossier_reserve). The settle used to credit its
    // releases in whatever order its plan visited the accounts: holding one the reservation wanted next
    // while it waited for one the reservation held, so Postgres aborted one of them as a deadlock (a
    // worker's whole coalesced settle — up to 100 jobs, every account's — failed and ran again).
    const ids = (await Promise.all(Array.from({ length: 12 }, () => account(10)))).sort(compareC);
    const pending = ids.map((id) => search(id));
    for (const s of pending) await searches.reserve(s);
    const reservation = db.createQueryRunner();
    await reservation.startTransaction();
    try {
      const [{ pid }] = (await reservation.query(`SELECT pg_backend_pid() AS pid`)) as [{ pid: number }];
      await reservation.query(`SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, [ids[0]]);
      const settled = searches.settleMany(
        pending.map((s) => ({
          searchId: s.id,
          outcome: { status: 'failed', error: { code: 'unavailable', message: 'x' }, sources: [] },
        })),
      );
      await untilBlocking(pid, 'the settle to wait for the reservation');
      // The rest of the reservation's accounts, in its order, then its commit.
      await reserveAll(
        (text, params) => reservation.query(text, params),
        ids.map((id) => search(id)),
      );
      await reservation.commitTransaction();
      expect((await settled).map((r) => r.settled)).toEqual(ids.map(() => true));
    } finally {
      if (reservation.isTransactionActive) await reservation.rollbackTransaction();
      await reservation.release();
    }
    for (const id of ids) expect(await ledgerState(id)).toMatchObject({ balance: 9, ledger_sum: 9, pending: 1 });
  });

  it('runs a settle again that Postgres aborted to break a deadlock on its search rows, and settles each once', async () => {
    // Two settles naming the same searches (a redelivered job beside the reconciler) can lock them in a
    // cycle. Here a transaction holds the second search, the settle takes the first and waits, and the
    // transaction then wants the first. Postgres aborts whichever waiter checks for a deadlock first, once
    // it has waited deadlock_timeout: the settle's connections check after 5 s, the transaction's after 60,
    // so the settle is the one aborted even when a loaded machine takes seconds between the two waits (with
    // both at the default 1 s, the settle could check before the cycle formed, and the transaction was aborted).
    const settling = await openDataSource({
      url: withDeadlockTimeout(testEnv.databaseUrl, '5s'),
      poolSize: 2,
      applicationName: 'int-spec-deadlock',
    });
    const id = await account(5);
    const [a, b] = [search(id), search(id)];
    await searches.reserve(a);
    await searches.reserve(b);
    const other = db.createQueryRunner();
    await other.startTransaction();
    try {
      await other.query(`SET LOCAL deadlock_timeout = '60s'`);
      // It waits for the settle's deadlock check (5 s) and the settle's abort: past the pool's 10 s statement
      // timeout on a loaded machine, which would end the wait as a timeout instead of the deadlock under test.
      await other.query(`SET LOCAL statement_timeout = '120s'`);
      const [{ pid }] = (await other.query(`SELECT pg_backend_pid() AS pid`)) as [{ pid: number }];
      await other.query(`SELECT 1 FROM searches WHERE id = $1 FOR UPDATE`, [b.id]);
      const failed = { status: 'failed' as const, error: { code: 'unavailable', message: 'x' }, sources: [] };
      const settled = new SearchesRepository(settling).settleMany([
        { searchId: a.id, outcome: failed },
        { searchId: b.id, outcome: failed },
      ]);
      await untilBlocking(pid, 'the settle to wait for the other transaction');
      const [{ deadlocks: before }] = (await other.query(
        `SELECT deadlocks::int FROM pg_stat_database WHERE datname = current_database()`,
      )) as [{ deadlocks: number }];
      await other.query(`SELECT 1 FROM searches WHERE id = $1 FOR UPDATE`, [a.id]);
      await other.commitTransaction();
      expect((await settled).map((r) => r.settled)).toEqual([true, true]);
      // Postgres counted the deadlock: a backend reports its counters when it goes idle, at most once a second
      // (and within 10 s otherwise), so the count is polled, not read once.
      await waitFor(
        () =>
          queryRows<{ deadlocks: number }>(
            db,
            `SELECT deadlocks::int FROM pg_stat_database WHERE datname = current_database()`,
          ),
        ([stats]) => stats!.deadlocks > before,
        { timeoutMs: 15_000, what: `pg_stat_database.deadlocks above ${before}` },
      );
    } finally {
      if (other.isTransactionActive) await other.rollbackTransaction();
      await other.release();
      await settling.destroy();
    }
    expect(await ledgerState(id)).toMatchObject({ balance: 5, ledger_sum: 5, releases: 2, pending: 0 });
  });

  it('cancels a reservation on the server when it waits past the query timeout: the caller told "nothing charged" is right', async () => {
    const id = await account(5);
    const impatient = await openDataSource({
      url: testEnv.databaseUrl,
      poolSize: 2,
      applicationName: 'int-spec-timeout',
      queryTimeoutMs: 1500,
    });
    const holder = db.createQueryRunner();
    await holder.startTransaction();
    const waiting = search(id);
    try {
      await holder.query(`SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, [id]);
      const failure = await new SearchesRepository(impatient).reserve(waiting).catch((e: unknown) => e);
      // A 503 for the caller, which says nothing was charged …
      expect(isDatabaseUnavailable(failure)).toBe(true);
      await holder.commitTransaction();
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
      await impatient.destroy();
    }
    // … and nothing is: once the lock is gone, no reservation of it commits late.
    await new Promise((r) => setTimeout(r, 300));
    expect(await queryRows(db, `SELECT id FROM searches WHERE id = $1`, [waiting.id])).toEqual([]);
    expect(await ledgerState(id)).toMatchObject({ balance: 5, ledger_sum: 5, reserves: 0 });
  });

  it('releases when a lookup finds nothing or fails', async () => {
    const id = await account(2);
    const a = search(id);
    const b = search(id);
    await searches.reserve(a);
    await searches.reserve(b);
    expect(await searches.settle(a.id, { status: 'succeeded', results: [], sources: [], charge: false })).toEqual({
      settled: true,
      charged: false,
      balance: 1,
      notify: false,
    });
    expect(
      await searches.settle(b.id, { status: 'failed', error: { code: 'unavailable', message: 'x' }, sources: [] }),
    ).toEqual({ settled: true, charged: false, balance: 2, notify: false });
    expect(await ledgerState(id)).toMatchObject({ balance: 2, ledger_sum: 2, releases: 2, captures: 0 });
  });

  it('lets only one of many parallel requests with the same Idempotency-Key reserve', async () => {
    const id = await account(10);
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, () => searches.reserve(search(id, { idempotencyKey: 'same-key', requestHash: 'h' }))),
    );
    expect(outcomes.filter((o) => o.kind === 'reserved')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'idempotency_race')).toHaveLength(11);
    expect(await ledgerState(id)).toMatchObject({ balance: 9, reserves: 1 });
    const existing = await searches.findByIdempotencyKey(id, 'same-key');
    expect(existing?.balance).toBe(9);
  });

  it('gives an Idempotency-Key to exactly one of a lookup and a batch of the account that race for it', async () => {
    const id = await account(100);
    const batches = new BatchesRepository(db);
    const rounds = await Promise.all(
      Array.from({ length: 20 }, async (_, r) => {
        const key = `race-${r}`;
        const [lookup, batch] = await Promise.all([
          searches.reserve(search(id, { idempotencyKey: key, requestHash: 'h' })),
          batches.create(
            { id: newId.batch(), accountId: id, keyId: 'k', idempotencyKey: key, requestHash: 'b', requestId: 'r' },
            [{ search: search(id) }, { search: search(id) }],
          ),
        ]);
        return [lookup.kind, batch.kind].join(' ');
      }),
    );
    for (const round of rounds)
      expect(['reserved idempotency_conflict', 'idempotency_conflict created']).toContain(round);
    const lookups = rounds.filter((r) => r.startsWith('reserved')).length;
    const spent = lookups + 2 * (rounds.length - lookups);
    expect(await ledgerState(id)).toMatchObject({ balance: 100 - spent, ledger_sum: 100 - spent, reserves: spent });
    // A key held past its window is no conflict: the other kind takes it.
    await db.query(`UPDATE batches SET created_at = now() - interval '25 hours' WHERE account_id = $1`, [id]);
    await db.query(`UPDATE searches SET created_at = now() - interval '25 hours' WHERE account_id = $1`, [id]);
    expect((await searches.reserve(search(id, { idempotencyKey: 'race-0' }))).kind).not.toBe('idempotency_conflict');
    const batchAfter = await batches.create(
      { id: newId.batch(), accountId: id, keyId: 'k', idempotencyKey: 'race-1', requestHash: 'b', requestId: 'r' },
      [],
    );
    expect(batchAfter.kind).not.toBe('idempotency_conflict');
  });

  it('expires an Idempotency-Key after its window', async () => {
    const id = await account(5);
    const first = search(id, { idempotencyKey: 'old-key', requestHash: 'h' });
    await searches.reserve(first);
    const held = () => holdsIdempotencyKey((text, params) => queryRows(db, text, params), 'searches', id, 'old-key');
    expect(await held()).toBe(true);
    await db.query(`UPDATE searches SET created_at = now() - interval '25 hours' WHERE id = $1`, [first.id]);
    // A batch asking about the key (one read) sees no holder, as the key's own lookup frees it.
    expect(await held()).toBe(false);
    expect(await searches.findByIdempotencyKey(id, 'old-key')).toBeNull();
    expect((await searches.reserve(search(id, { idempotencyKey: 'old-key', requestHash: 'h2' }))).kind).toBe(
      'reserved',
    );
  });

  it('keeps the balance from going negative at the database level too', async () => {
    const id = await account(0);
    await expect(db.query(`UPDATE accounts SET balance = balance - 1 WHERE id = $1`, [id])).rejects.toThrow(/check/i);
  });

  it('pages through stale pending searches in (created_at, id) order, each once, also when they share created_at', async () => {
    const id = await account(1000);
    // One statement: all 450 share the transaction's created_at, so the id breaks every tie.
    const ours = Array.from({ length: 450 }, () => search(id));
    await reserveAll((text, params) => queryRows(db, text, params), ours);
    const seen: { id: string; position: { at: string; id: string } }[] = [];
    let after: { at: string; id: string } | null = null;
    for (;;) {
      const page = await searches.findStalePending(0, 200, after);
      seen.push(...page);
      if (page.length < 200) break;
      after = page.at(-1)!.position;
    }
    const ids = seen.map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(ours.map((s) => s.id)));
    // Oldest first (the ids' own order is the database's collation).
    const times = seen.map((s) => s.position.at);
    expect(times).toEqual([...times].sort());
    await searches.settleMany(
      ours.map((s) => ({
        searchId: s.id,
        outcome: { status: 'failed', error: { code: 'x', message: 'x' }, sources: [] },
      })),
    );
  });

  it('purges past the retention period in batches, keeping pending and recent searches and every audit column', async () => {
    const id = await account(10);
    const [old1, old2, old3, recent, pending] = Array.from({ length: 5 }, () =>
      search(id, {
        idempotencyKey: `k-${randomBytes(4).toString('hex')}`,
        requestHash: 'h',
        permissiblePurpose: 'kyc',
      }),
    );
    for (const s of [old1!, old2!, old3!, recent!, pending!]) await searches.reserve(s);
    for (const s of [old1!, old2!, old3!, recent!]) {
      await searches.settle(s.id, {
        status: 'succeeded',
        results: [{ e164: '+14155552671' }],
        sources: [],
        charge: true,
      });
    }
    const ids = [old1!.id, old2!.id, old3!.id, pending!.id];
    await db.query(`UPDATE searches SET created_at = created_at - interval '3 days' WHERE id = ANY($1)`, [ids]);
    const audit = `SELECT id, account_id, key_id, kind, permissible_purpose, request_id, created_at, completed_at,
                          status, cost, charged FROM searches WHERE account_id = $1 ORDER BY id`;
    const before = (await db.query(audit, [id])) as unknown[];

    // Batches of two: three old searches take two batches.
    expect(await searches.purgeResults(2, 2)).toBeGreaterThanOrEqual(3);

    const rows = (await db.query(
      `SELECT id, input, results, sources, request_hash, idempotency_key FROM searches WHERE account_id = $1`,
      [id],
    )) as {
      id: string;
      input: unknown;
      results: unknown;
      sources: unknown;
      request_hash: unknown;
      idempotency_key: unknown;
    }[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const s of [old1!, old2!, old3!]) {
      expect(byId.get(s.id)).toEqual({
        id: s.id,
        input: null,
        results: null,
        sources: null,
        request_hash: null,
        idempotency_key: null,
      });
    }
    expect(byId.get(recent!.id)?.input).toEqual(recent!.input);
    expect(byId.get(pending!.id)?.input).toEqual(pending!.input);
    expect((await db.query(audit, [id])) as unknown[]).toEqual(before);
    expect(await searches.purgeResults(2, 2)).toBe(0);
  });

  /**
   * Two retention passes can overlap: BullMQ's scheduler queues the next pass when one starts, and a pass
   * longer than RETENTION_INTERVAL_MS meets the next on another worker. The first pass is held here
   * between one statement and its commit, its rows locked.
   */
  it('lets a second purge run beside one that holds rows: it skips them, waits for nothing and counts none twice', async () => {
    const id = await account(10);
    const ours = Array.from({ length: 4 }, () => search(id));
    for (const s of ours) {
      await searches.reserve(s);
      await searches.settle(s.id, {
        status: 'succeeded',
        results: [{ e164: '+14155552671' }],
        sources: [],
        charge: true,
      });
    }
    const ids = ours.map((s) => s.id);
    await db.query(`UPDATE searches SET created_at = created_at - interval '3 days' WHERE id = ANY($1)`, [ids]);

    // The first pass's statement holds two of the four; the second pass takes the other two.
    expect(await besideHeldRows(PURGE_SEARCHES, [2, 2], () => searches.purgeResults(2, 2))).toEqual({
      outcome: 'finished',
      result: 2,
    });
    const kept = (await db.query(`SELECT id FROM searches WHERE id = ANY($1) AND input IS NOT NULL`, [ids])) as [];
    expect(kept).toEqual([]);
  });

  it("lets a second purge of batches' request hashes run beside one that holds rows, as the searches' does", async () => {
    const id = await account(0);
    const batches = new BatchesRepository(db);
    const ids = Array.from({ length: 4 }, () => newId.batch());
    for (const [i, batchId] of ids.entries()) {
      const batch = {
        id: batchId,
        accountId: id,
        keyId: 'k',
        idempotencyKey: `purge-${i}`,
        requestHash: 'b',
        requestId: 'r',
      };
      expect((await batches.create(batch, [])).kind).toBe('created');
    }
    await db.query(`UPDATE batches SET created_at = created_at - interval '3 days' WHERE id = ANY($1)`, [ids]);

    expect(await besideHeldRows(PURGE_BATCH_HASHES, [2, 2], () => batches.purgeRequestHashes(2, 2))).toEqual({
      outcome: 'finished',
      result: 2,
    });
    const kept = (await db.query(
      `SELECT id FROM batches WHERE id = ANY($1) AND (request_hash IS NOT NULL OR idempotency_key IS NOT NULL)`,
      [ids],
    )) as [];
    expect(kept).toEqual([]);
  });
});

/** Code-unit order, as Postgres's "C" collation sorts ids. */
function compareC(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `url` with every session's deadlock_timeout set (a libpq `options` parameter, which node-postgres passes on). */
function withDeadlockTimeout(url: string, timeout: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c deadlock_timeout=${timeout}`);
  return u.toString();
}
