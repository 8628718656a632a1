import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { WEBHOOK_QUEUE, batchEventId, webhookJobId } from '@dossier/contracts';
import { newId } from '@dossier/domain';
import { QueueProbe, newSearch, ownDatabase, switchDatabase, uniquePrefix } from '@dossier/testing';
import { AccountsRepository } from './accounts.repository';
import { BatchesRepository } from './batches.repository';
import { openDataSource } from './data-source';
import { SearchesRepository } from './searches.repository';
import { queueBatchCompletion } from './batch-completion';
import { WebhooksRepository } from './webhooks.repository';

/**
 * A batch's completion and its `batch.completed` event (ADR 0019) against the real Postgres (a database of its
 * own) and Redis: a batch is only marked completed once its event is queued, so a completer whose queueing
 * fails leaves it to the next completer or the reconciler (`findSettledOpen`), which then sends it.
 */
describe('queueBatchCompletion (real Postgres and Redis)', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let restore: () => void;
  let db: DataSource;
  let probe: QueueProbe;
  let repos: { batches: BatchesRepository; searches: SearchesRepository; webhooks: WebhooksRepository };

  beforeAll(async () => {
    database = await ownDatabase('batch_completion');
    restore = switchDatabase(database.url);
    db = await openDataSource({ url: database.url, poolSize: 4, applicationName: 'int-spec' });
    probe = new QueueProbe(uniquePrefix('batch-completion'));
    repos = {
      batches: new BatchesRepository(db),
      searches: new SearchesRepository(db),
      webhooks: new WebhooksRepository(db),
    };
  });
  afterAll(async () => {
    await probe?.queue(WEBHOOK_QUEUE).obliterate({ force: true });
    await probe?.close();
    await db?.destroy();
    restore?.();
    await database?.drop();
  });

  /** An account's batch of `count` searches, each settled: complete, not yet marked. */
  async function settledBatch(count: number): Promise<{ accountId: string; batchId: string }> {
    const account = await new AccountsRepository(db).create(`b${randomBytes(6).toString('hex')}@example.com`, 'x', 10);
    const searches = Array.from({ length: count }, () => newSearch(account.id));
    const batchId = newId.batch();
    await repos.batches.create(
      {
        id: batchId,
        accountId: account.id,
        keyId: 'key_test',
        idempotencyKey: null,
        requestHash: null,
        requestId: 'r',
      },
      searches.map((search) => ({ search })),
    );
    for (const search of searches) {
      await repos.searches.settle(search.id, { status: 'succeeded', results: [], sources: [], charge: false });
    }
    return { accountId: account.id, batchId };
  }

  it('leaves a settled batch open while its batch.completed cannot be queued, and the next completer sends it', async () => {
    const { accountId, batchId } = await settledBatch(1);
    const hook = await repos.webhooks.create(
      accountId,
      'live',
      'https://hooks.example/in',
      ['batch.completed'],
      'v1.x',
      16,
    );
    if (hook === 'full') throw new Error('no room for a webhook');

    // Redis refuses the event (here: a queue whose connection is closed), after the batch's last search settled.
    const broken = new QueueProbe(uniquePrefix('batch-completion-broken'));
    const refusing = broken.queue(WEBHOOK_QUEUE);
    await broken.close();
    await expect(queueBatchCompletion(repos, refusing, batchId)).rejects.toThrow();
    // Not completed: the reconciler still finds it, and nothing announced it.
    expect(await repos.batches.findSettledOpen(0, 100)).toEqual([batchId]);

    await queueBatchCompletion(repos, probe.queue(WEBHOOK_QUEUE), batchId);
    const job = await probe.queue(WEBHOOK_QUEUE).getJob(webhookJobId(hook.id, batchEventId(batchId)));
    expect(job?.data.event).toMatchObject({ id: batchEventId(batchId), type: 'batch.completed' });
    expect(await repos.batches.findSettledOpen(0, 100)).toEqual([]);
  });

  it('dates a batch by its last search settled, the same for every completer, however late each reads it', async () => {
    const { accountId, batchId } = await settledBatch(2);
    const [last] = (await db.query(`SELECT max(completed_at) AS at FROM searches WHERE batch_id = $1`, [batchId])) as [
      { at: Date },
    ];
    // Two completers reading it a moment apart (a retried job, the reconciler): one time, the last settle's.
    const first = await repos.batches.settledState(batchId);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await repos.batches.settledState(batchId);
    expect(first).toEqual({ account_id: accountId, completed_at: last.at, marked: false });
    expect(second).toEqual(first);
  });
});
