import { searchEventId } from '@dossier/contracts';
import {
  CRASH_PHONE,
  CrashStack,
  ledgerState,
  receiver,
  sql,
  waitFor,
  withFaults,
  type Api,
  type Stack,
} from '@dossier/testing';

/**
 * The transactional outbox (ADR 0062) under a crash: a worker SIGKILLed after its settle committed and before
 * its relay queued the events loses none of them. The settle wrote the search's outbox row in its own
 * statement; the next worker's relay sends each event once.
 */
describe('outbox: events survive a SIGKILL between the settle and the publish (gateway + worker processes)', () => {
  let fixture: CrashStack;
  let stack: Stack;
  let api: Api;

  beforeAll(async () => {
    fixture = await CrashStack.start({
      label: 'outbox',
      env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
      // A job its dead worker held is handed on within seconds.
      workerEnv: { WORKER_LOCK_MS: '2000', WORKER_STALLED_INTERVAL_MS: '1000' },
    });
    ({ stack, api } = fixture);
  });
  afterEach(() => fixture.killWorkers());
  afterAll(() => fixture?.close());

  it('sends the search.completed and batch.completed of searches settled by a worker killed before it queued them, once each', async () => {
    const { key, accountId } = await api.register();
    const hook = await receiver([]);
    try {
      await api.webhook(key, hook.url, ['search.completed', 'batch.completed']);
      // This worker settles, commits, and dies at its first add to the webhook-delivery queue.
      const dying = await stack.startWorker({
        LOOKUP_QUEUES: 'phone',
        ...withFaults({ killBeforeWebhookEvents: true }),
      });
      const async = { prefer: 'respond-async' };
      const [single, batch] = await Promise.all([
        api.post<{ search_id: string }>('/v1/verify/phone', CRASH_PHONE, { key, headers: async }),
        api.post<{ batch_id: string; items: { search_id: string }[] }>(
          '/v1/batch',
          { requests: [{ kind: 'phone', input: CRASH_PHONE }] },
          { key, headers: async },
        ),
      ]);
      expect([single.status, batch.status]).toEqual([202, 202]);
      await dying.exited;
      expect(dying.logs).toContain('test fault: killed at an add to webhook-delivery');

      // Every search it settled has its row; nothing was sent.
      const settled = await sql<{ id: string }>(
        `SELECT id FROM searches WHERE account_id = $1 AND status = 'succeeded' ORDER BY id`,
        [accountId],
      );
      expect(settled.length).toBeGreaterThan(0);
      // This stack's rows (ADR 0067: other stacks on the database have their own relays).
      const relay = stack.env['QUEUE_PREFIX']!;
      const waiting = await sql<{ search_id: string }>(
        `SELECT search_id FROM outbox WHERE relay = $1 ORDER BY search_id`,
        [relay],
      );
      expect(waiting.map((r) => r.search_id)).toEqual(settled.map((r) => r.id));
      expect(hook.received).toHaveLength(0);

      // A worker that can: every event once, the outbox empty, each search charged once.
      await stack.startWorker({ LOOKUP_QUEUES: 'phone' });
      const events = await hook.events<{ search_id?: string; batch_id?: string }>(3, 'the three events');
      await waitFor(
        () => sql<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE relay = $1`, [relay]),
        ([r]) => r!.n === 0,
        { timeoutMs: 10_000, what: 'an empty outbox' },
      );
      await new Promise((resolve) => setTimeout(resolve, 1500)); // a second relay pass would send any twice
      expect(hook.received).toHaveLength(3);
      const batchSearch = batch.body.items[0]!.search_id;
      const searchEvents = events.filter((e) => e.type === 'search.completed');
      expect(searchEvents.map((e) => e.id).sort()).toEqual(
        [searchEventId(single.body.search_id), searchEventId(batchSearch)].sort(),
      );
      expect(events.filter((e) => e.type === 'batch.completed').map((e) => e.data.batch_id)).toEqual([
        batch.body.batch_id,
      ]);
      expect(await ledgerState(accountId)).toMatchObject({ captures: 2, releases: 0, pending: 0 });
    } finally {
      await hook.close();
    }
  });
});
