import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { loadWorkerConfig } from '@dossier/config';
import { QUEUE_NAMES, type LookupQueues } from '@dossier/contracts';
import {
  AccountsRepository,
  BatchesRepository,
  SearchesRepository,
  openDataSource,
  queryRows,
  reserveAll,
  type NewSearch,
} from '@dossier/persistence';
import { QueueProbe, ledgerState, newSearch, ownDatabase, switchDatabase, uniquePrefix } from '@dossier/testing';
import type { WebhookDeliveryService } from '../webhooks/webhook-delivery.service';
import { ReconcilerService } from './reconciler.service';
import { WorkerMetrics } from './worker-metrics';

/**
 * The reconciler against a backlog (real Postgres of its own, real Redis): more stale searches whose jobs
 * are still queued than one page holds, and behind them — the newest — one whose job was lost.
 */
describe('ReconcilerService (real Postgres and Redis)', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let restore: () => void;
  let db: DataSource;
  let probe: QueueProbe;

  beforeAll(async () => {
    database = await ownDatabase('reconciler');
    restore = switchDatabase(database.url);
    db = await openDataSource({ url: database.url, poolSize: 4, applicationName: 'int-spec' });
    probe = new QueueProbe(uniquePrefix('reconciler'));
  });
  afterAll(async () => {
    await probe?.queue(QUEUE_NAMES.phone).obliterate({ force: true });
    await probe?.close();
    await db?.destroy();
    restore?.();
    await database?.drop();
  });

  it('pages past a backlog of queued searches to release the lost one behind them, and only that one', async () => {
    const account = await new AccountsRepository(db).create(
      `r${randomBytes(6).toString('hex')}@example.com`,
      'x',
      1000,
    );
    const search = () => newSearch(account.id);
    const queued = Array.from({ length: 450 }, search);
    const reserve = (items: NewSearch[]) => reserveAll((text, params) => queryRows(db, text, params), items);
    await reserve(queued);
    const lost = search();
    await reserve([lost]); // a later transaction: it sorts after every queued one
    const queue = probe.queue(QUEUE_NAMES.phone);
    await queue.addBulk(queued.map((s) => ({ name: 'lookup', data: {}, opts: { jobId: s.id } })));

    // Stale at once (RECONCILE_AFTER_S is at least 5 when set from the environment).
    const config = { ...loadWorkerConfig({ DATABASE_URL: database.url }), reconcileAfterS: 0 };
    const reconciler = new ReconcilerService(
      config,
      new SearchesRepository(db),
      new BatchesRepository(db),
      { phone: queue } as unknown as LookupQueues,
      new WorkerMetrics(new Registry()),
      {} as WebhookDeliveryService, // nothing here has a webhook or a batch: no events to send
    );
    expect(await reconciler.runOnce()).toBe(1);
    const [row] = await queryRows<{ status: string }>(db, `SELECT status FROM searches WHERE id = $1`, [lost.id]);
    expect(row?.status).toBe('failed');
    expect(await ledgerState(account.id)).toMatchObject({ balance: 1000 - 450, releases: 1, pending: 450 });
    expect(await reconciler.runOnce()).toBe(0);
  });
});
