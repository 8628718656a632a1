import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { besideHeldRows, testEnv } from '@dossier/testing';
import { openDataSource } from './data-source';
import { AccountsRepository } from './accounts.repository';
import { PURGE_DELIVERIES, WebhooksRepository, type DeliveryAttempt } from './webhooks.repository';

describe('WebhooksRepository against the real Postgres', () => {
  let db: DataSource;
  let accounts: AccountsRepository;
  let webhooks: WebhooksRepository;

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 4, applicationName: 'int-spec' });
    accounts = new AccountsRepository(db);
    webhooks = new WebhooksRepository(db);
  });
  afterAll(async () => {
    await db?.destroy();
  });

  /** A new account's webhook (its secret is never opened here). */
  async function webhook(): Promise<string> {
    const account = await accounts.create(`w${randomBytes(6).toString('hex')}@example.com`, 'x', 0);
    const row = await webhooks.create(account.id, 'live', 'https://hooks.example/in', ['search.completed'], 'v1.x', 16);
    if (row === 'full') throw new Error('no room for a webhook');
    return row.id;
  }

  const attempt = (eventId: string): DeliveryAttempt => ({
    event_id: eventId,
    event_type: 'search.completed',
    attempt: 1,
    outcome: 'delivered',
    status_code: 204,
    error: null,
    duration_ms: 3,
  });

  it('records an attempt once: a second report of it keeps the first, unless it ends the event failed', async () => {
    const hook = await webhook();
    const retrying = { ...attempt('evt_twice'), outcome: 'retrying' as const, status_code: 500, error: 'answered 500' };
    await webhooks.recordAttempt(hook, retrying);
    await webhooks.recordAttempt(hook, { ...retrying, status_code: null, error: 'interrupted' });
    expect((await webhooks.deliveries(hook, 10)).map((d) => [d.attempt, d.outcome, d.status_code, d.error])).toEqual([
      [1, 'retrying', 500, 'answered 500'],
    ]);
    await webhooks.recordAttempt(hook, { ...retrying, outcome: 'failed', status_code: null, error: 'given up' });
    await webhooks.recordAttempt(hook, {
      ...retrying,
      attempt: 2,
      outcome: 'delivered',
      status_code: 204,
      error: null,
    });
    await webhooks.recordAttempt(hook, { ...retrying, attempt: 2, outcome: 'failed', status_code: null, error: 'x' });
    expect((await webhooks.deliveries(hook, 10)).map((d) => [d.attempt, d.outcome, d.status_code])).toEqual([
      [2, 'delivered', 204],
      [1, 'failed', 500],
    ]);
  });

  it('deletes the delivery attempts older than the retention period, of every webhook, in batches, and keeps the recent ones', async () => {
    const [a, b] = [await webhook(), await webhook()];
    for (const [hook, event] of [
      [a, 'evt_old1'],
      [a, 'evt_old2'],
      [b, 'evt_old3'],
      [a, 'evt_new1'],
      [b, 'evt_new2'],
    ] as const) {
      await webhooks.recordAttempt(hook, attempt(event));
    }
    await db.query(
      `UPDATE webhook_deliveries SET attempted_at = attempted_at - interval '3 days'
        WHERE webhook_id = ANY($1) AND event_id LIKE 'evt_old%'`,
      [[a, b]],
    );

    // Batches of two: the three old attempts take two statements (other tests' rows may be purged too).
    expect(await webhooks.purgeDeliveries(2, 2)).toBeGreaterThanOrEqual(3);

    expect((await webhooks.deliveries(a, 100)).map((d) => d.event_id)).toEqual(['evt_new1']);
    expect((await webhooks.deliveries(b, 100)).map((d) => d.event_id)).toEqual(['evt_new2']);
    expect(await webhooks.purgeDeliveries(2, 2)).toBe(0);
  });

  /** Two retention passes can overlap (ADR 0016): one pass's statement holds two old attempts, uncommitted. */
  it('lets a second purge of delivery attempts run beside one that holds rows: it deletes the others without waiting', async () => {
    const hook = await webhook();
    for (const event of ['evt_held1', 'evt_held2', 'evt_held3', 'evt_held4'])
      await webhooks.recordAttempt(hook, attempt(event));
    await db.query(
      `UPDATE webhook_deliveries SET attempted_at = attempted_at - interval '3 days' WHERE webhook_id = $1`,
      [hook],
    );

    expect(await besideHeldRows(PURGE_DELIVERIES, [2, 2], () => webhooks.purgeDeliveries(2, 2))).toEqual({
      outcome: 'finished',
      result: 2,
    });
    expect(await webhooks.deliveries(hook, 100)).toEqual([]);
  });

  /**
   * The purge's plan, read on 50,000 attempts written (and analysed) inside a transaction that is rolled back;
   * on a few rows a scan is the cheaper plan. Without an index on attempted_at every batch scanned and sorted
   * the whole table to pick its rows. (The DELETE then finds those rows by id: on a table this small through
   * a hash of them over one scan; on millions of rows, by primary key.)
   */
  it('reads each batch of the purge through the attempted_at index, not a scan of every attempt', async () => {
    const hook = await webhook();
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, attempt, outcome, duration_ms, attempted_at)
         SELECT $1, 'evt_plan' || i, 'search.completed', 1, 'delivered', 1, now() - make_interval(mins => i)
           FROM generate_series(1, 50000) AS i`,
        [hook],
      );
      await runner.query('ANALYZE webhook_deliveries');
      const rows = (await runner.query(`EXPLAIN ${PURGE_DELIVERIES}`, [30, 1000])) as { 'QUERY PLAN': string }[];
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toContain('Index Scan using webhook_deliveries_attempted_idx');
      expect(plan).toMatch(/Index Cond: \(attempted_at < /);
      expect(plan).not.toMatch(/Sort|Filter: \(attempted_at/);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
