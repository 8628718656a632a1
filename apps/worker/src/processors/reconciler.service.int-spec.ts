import { randomBytes } from 'node:crypto';
import { UnrecoverableError, Worker } from 'bullmq';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { loadWorkerConfig } from '@dossier/config';
import { redisOptionsFromUrl } from '@dossier/runtime';
import { QUEUE_NAMES, type LookupQueues } from '@dossier/contracts';
import {
  AccountsRepository,
  SearchesRepository,
  openDataSource,
  queryRows,
  reserveAll,
  type NewSearch,
} from '@dossier/persistence';
import {
  QueueProbe,
  ledgerState,
  newSearch,
  ownDatabase,
  switchDatabase,
  testEnv,
  uniquePrefix,
  waitFor,
} from '@dossier/testing';
import type { OutboxRelayService } from '../webhooks/outbox-relay.service';
import { ReconcilerService } from './reconciler.service';
import { WorkerMetrics } from './worker-metrics';

/**
 * The reconciler against a backlog (real Postgres of its own, real Redis): more stale searches whose jobs
 * are still queued than one page holds, and behind them — the newest — one whose job was lost; and against
 * jobs in every state.
 */
describe('ReconcilerService (real Postgres and Redis)', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let restore: () => void;
  let db: DataSource;
  let prefix: string;
  let probe: QueueProbe;

  beforeAll(async () => {
    database = await ownDatabase('reconciler');
    restore = switchDatabase(database.url);
    db = await openDataSource({ url: database.url, poolSize: 4, applicationName: 'int-spec' });
    prefix = uniquePrefix('reconciler');
    probe = new QueueProbe(prefix);
  });
  afterAll(async () => {
    await probe?.queue(QUEUE_NAMES.phone).obliterate({ force: true });
    await probe?.queue(QUEUE_NAMES.company).obliterate({ force: true });
    await probe?.close();
    await db?.destroy();
    restore?.();
    await database?.drop();
  });

  const newAccount = () =>
    new AccountsRepository(db).create(`r${randomBytes(6).toString('hex')}@example.com`, 'x', 1000);
  const reserve = (items: NewSearch[]) => reserveAll((text, params) => queryRows(db, text, params), items);
  /** A reconciler over the probe's phone and company queues, every pending search stale at once. */
  const reconcilerOf = () =>
    new ReconcilerService(
      // RECONCILE_AFTER_S is at least 5 when set from the environment.
      { ...loadWorkerConfig({ DATABASE_URL: database.url }), reconcileAfterS: 0 },
      new SearchesRepository(db),
      { phone: probe.queue(QUEUE_NAMES.phone), company: probe.queue(QUEUE_NAMES.company) } as unknown as LookupQueues,
      new WorkerMetrics(new Registry()),
      { wake: () => {} } as OutboxRelayService, // nothing here has a webhook or a batch: no events to send
    );
  const statusOf = async (id: string) =>
    (
      await queryRows<{ status: string; error: { message: string } | null }>(
        db,
        `SELECT status, error FROM searches WHERE id = $1`,
        [id],
      )
    )[0];

  it('pages past a backlog of queued searches to release the lost one behind them, and only that one', async () => {
    const account = await newAccount();
    const search = () => newSearch(account.id);
    const queued = Array.from({ length: 450 }, search);
    await reserve(queued);
    const lost = search();
    await reserve([lost]); // a later transaction: it sorts after every queued one
    const queue = probe.queue(QUEUE_NAMES.phone);
    await queue.addBulk(queued.map((s) => ({ name: 'lookup', data: {}, opts: { jobId: s.id } })));

    const reconciler = reconcilerOf();
    expect(await reconciler.runOnce()).toBe(1);
    const [row] = await queryRows<{ status: string }>(db, `SELECT status FROM searches WHERE id = $1`, [lost.id]);
    expect(row?.status).toBe('failed');
    expect(await ledgerState(account.id)).toMatchObject({ balance: 1000 - 450, releases: 1, pending: 450 });
    expect(await reconciler.runOnce()).toBe(0);
  });
  it('releases the searches whose job is missing, removed or failed, and none whose job exists, however old', async () => {
    const account = await newAccount();
    const names = ['completed', 'failed', 'active', 'waiting', 'delayed', 'removed', 'missing'] as const;
    const searches = Object.fromEntries(names.map((n) => [n, newSearch(account.id, { kind: 'company' })]));
    await reserve(Object.values(searches));
    const queue = probe.queue(QUEUE_NAMES.company);
    const add = (name: (typeof names)[number], opts: { delay?: number } = {}) =>
      queue.add(name, {}, { jobId: searches[name]!.id, attempts: 1, ...opts });
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    // One slot: the `active` job holds it, so the `waiting` one stays queued behind it.
    const worker = new Worker(
      QUEUE_NAMES.company,
      async (job) => {
        if (job.name === 'failed') throw new UnrecoverableError('failed for good');
        if (job.name === 'active') await held;
      },
      { prefix, connection: { ...redisOptionsFromUrl(testEnv.redisUrl), maxRetriesPerRequest: null } },
    );
    try {
      for (const [name, state] of [
        ['completed', 'completed'],
        ['failed', 'failed'],
        ['active', 'active'],
        ['waiting', 'waiting'],
      ] as const) {
        await add(name);
        await waitFor(
          () => probe.state(QUEUE_NAMES.company, searches[name]!.id),
          (s) => s === state,
          { timeoutMs: 10_000, what: `the ${name} job to be ${state}` },
        );
      }
      await add('delayed', { delay: 3_600_000 });
      await add('removed');
      await queue.remove(searches['removed']!.id); // as the Bull board's "remove" does

      const reconciler = reconcilerOf();
      expect(await reconciler.runOnce()).toBe(3);
      const after = Object.fromEntries(
        await Promise.all(names.map(async (n) => [n, (await statusOf(searches[n]!.id))?.status] as const)),
      );
      expect(after).toEqual({
        completed: 'pending', // its job finished: the search is its job's (retention takes it in the end)
        failed: 'failed',
        active: 'pending',
        waiting: 'pending',
        delayed: 'pending',
        removed: 'failed',
        missing: 'failed',
      });
      expect((await statusOf(searches['removed']!.id))?.error?.message).toBe(
        "the lookup's job was lost before it finished (its queue no longer holds it); nothing was charged",
      );
      expect(await ledgerState(account.id)).toEqual({
        balance: 1000 - 4,
        ledger_sum: 1000 - 4,
        reserves: 7,
        captures: 0,
        releases: 3,
        pending: 4,
      });
      expect(await reconciler.runOnce()).toBe(0);
    } finally {
      release();
      await worker.close();
    }
  });
});
