import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { WEBHOOK_QUEUE, batchEventId, searchEventId, webhookJobId, type WebhookJob } from '@dossier/contracts';
import { newId } from '@dossier/domain';
import {
  AccountsRepository,
  BatchesRepository,
  OutboxRepository,
  SearchesRepository,
  WebhooksRepository,
  inTransaction,
  openDataSource,
  queryRows,
  settleAll,
} from '@dossier/persistence';
import { QueueProbe, newSearch, ownDatabase, switchDatabase, uniquePrefix } from '@dossier/testing';
import type { Queue } from 'bullmq';
import { OutboxRelayService } from './outbox-relay.service';
import type { WebhookDeliveryService } from './webhook-delivery.service';

/**
 * The transactional outbox (ADR 0062) against the real Postgres (a database of its own) and Redis: a settle
 * writes its row in its own statement (committed with it, or not at all), the relay queues the events and
 * deletes the rows it published, a publish that fails leaves its row (and the batch open) for the next pass,
 * and two relays at once never claim the same row.
 */
describe('outbox and relay (real Postgres and Redis)', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let restore: () => void;
  let db: DataSource;
  let probe: QueueProbe;
  let searches: SearchesRepository;
  let batches: BatchesRepository;
  let webhooks: WebhooksRepository;
  let outbox: OutboxRepository;

  beforeAll(async () => {
    database = await ownDatabase('outbox');
    restore = switchDatabase(database.url);
    db = await openDataSource({ url: database.url, poolSize: 6, applicationName: 'int-spec' });
    probe = new QueueProbe(uniquePrefix('outbox'));
    searches = new SearchesRepository(db);
    batches = new BatchesRepository(db);
    webhooks = new WebhooksRepository(db);
    outbox = new OutboxRepository(db);
  });
  afterAll(async () => {
    await probe?.queue(WEBHOOK_QUEUE).obliterate({ force: true });
    await probe?.close();
    await db?.destroy();
    restore?.();
    await database?.drop();
  });
  beforeEach(async () => {
    await queryRows(db, `DELETE FROM outbox`);
  });

  const relayOn = (queue: Queue<WebhookJob>) =>
    new OutboxRelayService(db, searches, { queue } as unknown as WebhookDeliveryService);
  const rows = () => queryRows<{ search_id: string; event: string; announce: boolean }>(db, `SELECT * FROM outbox`);
  const succeeded = { status: 'succeeded' as const, results: [], sources: [], charge: false };

  async function account(events: string[] = []): Promise<{ accountId: string; hookId: string | null }> {
    const a = await new AccountsRepository(db).create(`o${randomBytes(6).toString('hex')}@example.com`, 'x', 1000);
    if (events.length === 0) return { accountId: a.id, hookId: null };
    const hook = await webhooks.create(a.id, 'live', 'https://hooks.example/in', events, 'v1.x', 16);
    if (hook === 'full') throw new Error('no room for a webhook');
    return { accountId: a.id, hookId: hook.id };
  }

  /** A batch of `count` pending searches of the account. */
  async function batchOf(accountId: string, count: number): Promise<{ batchId: string; ids: string[] }> {
    const planned = Array.from({ length: count }, () => ({ search: newSearch(accountId) }));
    const batchId = newId.batch();
    await batches.create(
      { id: batchId, accountId, keyId: 'key_test', idempotencyKey: null, requestHash: null, requestId: 'r' },
      planned,
    );
    return { batchId, ids: planned.map((p) => p.search.id) };
  }

  async function reserved(accountId: string): Promise<string> {
    const search = newSearch(accountId);
    await searches.reserve(search);
    return search.id;
  }

  it('writes a row with the settle that may send events, none for a lookup nobody listens to', async () => {
    const quiet = await account();
    const heard = await account(['search.completed']);
    const [q, h] = [await reserved(quiet.accountId), await reserved(heard.accountId)];
    expect((await searches.settle(q, succeeded)).notify).toBe(false);
    expect((await searches.settle(h, succeeded)).notify).toBe(true);
    // A second settle (a redelivered job) settles nothing and writes nothing.
    expect((await searches.settle(h, succeeded)).notify).toBe(false);
    expect(await rows()).toEqual([
      expect.objectContaining({ search_id: h, event: 'search.completed', announce: true }),
    ]);
  });

  it('commits the row with the settle, or not at all: a settle rolled back leaves neither', async () => {
    const { accountId } = await account(['search.completed']);
    const id = await reserved(accountId);
    await expect(
      inTransaction(db, async (sql) => {
        await settleAll(sql, [{ searchId: id, outcome: succeeded }]);
        throw new Error('crash before commit');
      }),
    ).rejects.toThrow('crash before commit');
    expect(await searches.statusOf(id)).toBe('pending');
    expect(await rows()).toEqual([]);
  });

  it('queues the search event once per webhook, deletes the row, and queues nothing twice when relayed again', async () => {
    const { accountId, hookId } = await account(['search.completed']);
    const id = await reserved(accountId);
    await searches.settle(id, succeeded);
    const queue = probe.queue(WEBHOOK_QUEUE);
    expect(await relayOn(queue).drain()).toBe(1);
    const job = await queue.getJob(webhookJobId(hookId!, searchEventId(id)));
    expect(job?.data.event).toMatchObject({ id: searchEventId(id), type: 'search.completed' });
    expect(await rows()).toEqual([]);
    // The same search relayed again (a relay that died after queueing, before its commit): the same job id.
    await queryRows(db, `INSERT INTO outbox (search_id, event, announce) VALUES ($1, 'search.completed', true)`, [id]);
    expect(await relayOn(queue).drain()).toBe(1);
    const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized']);
    expect(jobs.filter((j) => j.data.event.id === searchEventId(id))).toHaveLength(1);
  });

  it('keeps the row, and the batch open, while the events cannot be queued; the next pass sends them', async () => {
    const { accountId, hookId } = await account(['batch.completed', 'search.failed']);
    const { batchId, ids } = await batchOf(accountId, 1);
    // Released by a gateway that answered it itself: no search.failed, only the batch's completion.
    await searches.settle(
      ids[0]!,
      { status: 'failed', error: { code: 'unavailable', message: 'x' }, sources: [] },
      false,
    );
    expect(await rows()).toEqual([expect.objectContaining({ search_id: ids[0], announce: false })]);

    // Redis refuses the event (here: a queue whose connection is closed).
    const broken = new QueueProbe(uniquePrefix('outbox-broken'));
    const refusing = broken.queue(WEBHOOK_QUEUE);
    await broken.close();
    expect(await relayOn(refusing).drain()).toBe(0);
    expect(await rows()).toHaveLength(1);
    expect((await batches.settledState(batchId))?.marked).toBe(false);

    const queue = probe.queue(WEBHOOK_QUEUE);
    expect(await relayOn(queue).drain()).toBe(1);
    const job = await queue.getJob(webhookJobId(hookId!, batchEventId(batchId)));
    expect(job?.data.event).toMatchObject({ id: batchEventId(batchId), type: 'batch.completed' });
    expect(await queue.getJob(webhookJobId(hookId!, searchEventId(ids[0]!)))).toBeUndefined();
    expect(await rows()).toEqual([]);
    expect((await batches.settledState(batchId))?.marked).toBe(true);
  });

  it('completes a batch only after its last search settles', async () => {
    const { accountId, hookId } = await account(['batch.completed']);
    const { batchId, ids } = await batchOf(accountId, 2);
    const queue = probe.queue(WEBHOOK_QUEUE);
    await searches.settle(ids[0]!, succeeded);
    await relayOn(queue).drain();
    expect(await queue.getJob(webhookJobId(hookId!, batchEventId(batchId)))).toBeUndefined();
    await searches.settle(ids[1]!, succeeded);
    await relayOn(queue).drain();
    expect(await queue.getJob(webhookJobId(hookId!, batchEventId(batchId)))).toBeDefined();
  });

  it('lets two relays at once claim disjoint rows: every row published once, none left', async () => {
    const { accountId } = await account(['search.completed']);
    const ids = await Promise.all(Array.from({ length: 250 }, () => reserved(accountId)));
    await searches.settleMany(ids.map((searchId) => ({ searchId, outcome: succeeded })));
    const queue = probe.queue(WEBHOOK_QUEUE);
    const [a, b] = await Promise.all([relayOn(queue).drain(), relayOn(queue).drain()]);
    expect(a + b).toBe(250);
    expect(await outbox.backlog()).toBe(0);
  });

  it("claims only its own relay's rows: two stacks on one database never queue each other's events", async () => {
    const open = (relay: string) => openDataSource({ url: database.url, poolSize: 2, applicationName: relay, relay });
    const [a, b] = [await open('stack-a'), await open('stack-b')];
    try {
      const { accountId } = await account(['search.completed']);
      const [ofA, ofB, ofNone] = [await reserved(accountId), await reserved(accountId), await reserved(accountId)];
      await new SearchesRepository(a).settle(ofA, succeeded);
      await new SearchesRepository(b).settle(ofB, succeeded);
      await searches.settle(ofNone, succeeded);
      const owners = await queryRows<{ search_id: string; relay: string | null }>(
        db,
        `SELECT search_id, relay FROM outbox ORDER BY id`,
      );
      expect(owners).toEqual([
        { search_id: ofA, relay: 'stack-a' },
        { search_id: ofB, relay: 'stack-b' },
        { search_id: ofNone, relay: null },
      ]);
      const claimed = async (source: DataSource) => {
        const seen: string[] = [];
        await new OutboxRepository(source).relay(100, async (row) => void seen.push(row.search_id));
        return seen;
      };
      expect(await new OutboxRepository(b).backlog()).toBe(1);
      expect(await claimed(b)).toEqual([ofB]);
      expect(await claimed(a)).toEqual([ofA]);
      expect(await claimed(db)).toEqual([ofNone]);
      expect(await rows()).toEqual([]);
    } finally {
      await Promise.all([a.destroy(), b.destroy()]);
    }
  });

  it('dates a batch by its last search settled, the same for every completer, however late each reads it', async () => {
    const { accountId } = await account();
    const { batchId, ids } = await batchOf(accountId, 2);
    for (const id of ids) await searches.settle(id, succeeded);
    const [last] = (await db.query(`SELECT max(completed_at) AS at FROM searches WHERE batch_id = $1`, [batchId])) as [
      { at: Date },
    ];
    const first = await batches.settledState(batchId);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await batches.settledState(batchId);
    expect(first).toEqual({ account_id: accountId, completed_at: last.at, marked: false });
    expect(second).toEqual(first);
  });
});
