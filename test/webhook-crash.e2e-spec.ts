import { WEBHOOK_QUEUE, searchEventId, webhookJobId } from '@dossier/contracts';
import {
  CRASH_PHONE,
  CrashStack,
  RedisServer,
  receiver,
  sql,
  waitFor,
  type Api,
  type QueueProbe,
  type Stack,
} from '@dossier/testing';

type Delivery = {
  event_id: string;
  attempt: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
};

/** Fast stalled-job redelivery: a dead worker's lock expires in 2 s, checked every second. */
const FAST_STALL = { WORKER_LOCK_MS: '2000', WORKER_STALLED_INTERVAL_MS: '1000' };
/** A receiver that hangs holds the attempt until the test kills the worker (the timeout is far off). */
const HOLD = { WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_RETRY_BASE_MS: '100' };
const INTERRUPTED = 'interrupted: the worker stopped during the attempt';

describe('webhook deliveries whose worker dies mid-attempt (gateway + worker processes, real Redis and Postgres)', () => {
  let fixture: CrashStack;
  let stack: Stack;
  let api: Api;
  let queues: QueueProbe;

  beforeAll(async () => {
    fixture = await CrashStack.start({
      label: 'webhook-crash',
      env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
      workerEnv: { ...FAST_STALL, ...HOLD },
    });
    ({ stack, api, queues } = fixture);
  });
  afterEach(() => fixture.killWorkers());
  afterAll(() => fixture?.close());

  /** An account with a webhook at `url` and one settled lookup (a worker must run): the webhook, the event id. */
  async function settledEvent(url: string): Promise<{ key: string; webhookId: string; eventId: string }> {
    const { key } = await api.register();
    const webhookId = await api.webhook(key, url);
    const search = await api.post<{ search_id: string }>('/v1/verify/phone', CRASH_PHONE, { key });
    expect(search.status).toBe(200);
    return { key, webhookId, eventId: searchEventId(search.body.search_id) };
  }

  const deliveries = async (key: string, webhookId: string) =>
    (await api.get<{ deliveries: Delivery[] }>(`/v1/webhooks/${webhookId}/deliveries`, { key })).body.deliveries;

  /** Waits until the receiver holds its `n`th request, then SIGKILLs every worker (the one holding it). */
  async function killDuring(hook: Awaited<ReturnType<typeof receiver>>, n: number): Promise<void> {
    await hook.events(n, `attempt ${n} to reach the receiver`);
    await fixture.killWorkers();
  }

  it('retries attempts their worker died in, records each once, and sends the same event id every time', async () => {
    // Attempt 1 and 3 hang until their worker is killed; 2 fails as usual; 4 is delivered.
    const hook = await receiver(['hang', 500, 'hang', 200]);
    try {
      await stack.startWorker();
      const { key, webhookId, eventId } = await settledEvent(hook.url);
      await killDuring(hook, 1);
      await stack.startWorker();
      await killDuring(hook, 3);

      await stack.startWorker();
      const rows = await waitFor(
        () => deliveries(key, webhookId),
        (d) => d.some((x) => x.outcome === 'delivered'),
        { timeoutMs: 30_000, what: 'the event delivered by the last worker' },
      );
      expect(rows.map((d) => [d.event_id, d.attempt, d.outcome, d.status_code, d.error])).toEqual([
        [eventId, 4, 'delivered', 200, null],
        [eventId, 3, 'retrying', null, INTERRUPTED],
        [eventId, 2, 'retrying', 500, 'answered 500'],
        [eventId, 1, 'retrying', null, INTERRUPTED],
      ]);
      // At least once: every attempt sent the event, with one id to dedupe on.
      expect(hook.received.map((r) => (JSON.parse(r.raw) as { id: string }).id)).toEqual(Array(4).fill(eventId));
    } finally {
      await hook.close();
    }
  });

  it('ends an event failed, visibly, when its worker died in three attempts, and sends it no more', async () => {
    const hook = await receiver(['hang', 'hang', 'hang', 200]);
    try {
      await stack.startWorker();
      const { key, webhookId, eventId } = await settledEvent(hook.url);
      await killDuring(hook, 1);
      for (let n = 2; n <= 3; n++) {
        await stack.startWorker();
        await killDuring(hook, n);
      }

      await stack.startWorker();
      const rows = await waitFor(
        () => deliveries(key, webhookId),
        (d) => d.some((x) => x.outcome === 'failed'),
        { timeoutMs: 30_000, what: 'the event recorded failed' },
      );
      expect(rows.map((d) => [d.event_id, d.attempt, d.outcome, d.status_code])).toEqual([
        [eventId, 3, 'failed', null],
        [eventId, 2, 'retrying', null],
        [eventId, 1, 'retrying', null],
      ]);
      expect(rows[0]!.error).toBe(`${INTERRUPTED} (3 times for this event): given up`);
      await waitFor(
        () => queues.job(WEBHOOK_QUEUE, webhookJobId(webhookId, eventId)),
        (j) => j.state === 'failed',
        { timeoutMs: 15_000, what: 'the delivery job to fail' },
      );
      expect(hook.received).toHaveLength(3);
    } finally {
      await hook.close();
    }
  });
});

describe('a webhook attempt whose worker dies after recording it, before BullMQ records its outcome (its own Redis)', () => {
  let redis: RedisServer;
  let fixture: CrashStack;

  beforeAll(async () => {
    redis = await RedisServer.start();
    fixture = await CrashStack.start({
      label: 'webhook-crash-row',
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', REDIS_URL: redis.url },
      workerEnv: { ...FAST_STALL, ...HOLD },
    });
  });
  afterAll(async () => {
    await fixture?.close();
    await redis?.stop();
  });

  it('keeps one row for that attempt, the outcome it recorded, and goes on with the next', async () => {
    const { stack, api } = fixture;
    const hook = await receiver(['hang']);
    try {
      await stack.startWorker();
      const { key } = await api.register();
      const webhookId = await api.webhook(key, hook.url);
      const search = await api.post<{ search_id: string }>('/v1/verify/phone', CRASH_PHONE, { key });
      expect(search.status).toBe(200);
      const eventId = searchEventId(search.body.search_id);
      await hook.events(1, 'attempt 1 to reach the receiver');
      // Redis takes no write from here on: the worker records the attempt in Postgres, then cannot tell BullMQ.
      expect(await redis.command('CLIENT PAUSE 60000 WRITE')).toMatch(/^\+OK/);
      hook.answerHung(500);
      const rows = () =>
        sql<{ attempt: number; outcome: string; status_code: number | null; error: string | null }>(
          `SELECT attempt, outcome, status_code, error FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id`,
          [webhookId],
        );
      await waitFor(rows, (r) => r.length === 1, { timeoutMs: 15_000, what: 'attempt 1 recorded' });
      await fixture.killWorkers();
      expect(await redis.command('CLIENT UNPAUSE')).toMatch(/^\+OK/);

      await stack.startWorker();
      const after = await waitFor(rows, (r) => r.some((x) => x.outcome === 'delivered'), {
        timeoutMs: 30_000,
        what: 'the event delivered by the next worker',
      });
      expect(after.map((r) => [r.attempt, r.outcome, r.status_code, r.error])).toEqual([
        [1, 'retrying', 500, 'answered 500'],
        [2, 'delivered', 200, null],
      ]);
      expect(hook.received.map((r) => (JSON.parse(r.raw) as { id: string }).id)).toEqual([eventId, eventId]);
    } finally {
      await fixture.killWorkers();
      await hook.close();
    }
  });
});
