import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { redisOptionsFromUrl } from '@dossier/runtime';
import {
  MAINTENANCE_QUEUE,
  QUEUE_NAMES,
  RETENTION_JOB_NAME,
  RETENTION_SCHEDULER_ID,
  WEBHOOK_QUEUE,
  searchEventId,
  webhookJobId,
} from '@dossier/contracts';
import {
  Api,
  CrashStack,
  QueueProbe,
  Stack,
  ledgerState,
  receiver,
  settled,
  sql,
  testEnv,
  waitFor,
} from '@dossier/testing';

const PHONE = { phone: '+14155552671' };
/** Tiny ages so that removal is seen in a second; the failed age asks for more than RESULTS_TTL_DAYS allows. */
const RETENTION_ENV = {
  RESULTS_TTL_DAYS: '1',
  JOB_KEEP_COMPLETED_S: '1',
  JOB_KEEP_COMPLETED_COUNT: '40',
  JOB_KEEP_FAILED_S: '99999999',
  JOB_KEEP_FAILED_COUNT: '60',
  RETENTION_INTERVAL_MS: '300',
  WEBHOOK_ALLOW_PRIVATE: 'true',
};
/** What the purge must leave as it was: the audit trail. */
const AUDIT_COLUMNS = `account_id, key_id, kind, permissible_purpose, request_id, created_at, completed_at, status, cost, charged, result_count`;

/** How to read a key of each type BullMQ writes (a key gone meanwhile reads as `none`). */
const READ_KEY: Record<string, (redis: IORedis, key: string) => Promise<unknown>> = {
  string: (r, k) => r.get(k),
  hash: (r, k) => r.hgetall(k),
  list: (r, k) => r.lrange(k, 0, -1),
  set: (r, k) => r.smembers(k),
  zset: (r, k) => r.zrange(k, 0, -1),
  stream: (r, k) => r.xrange(k, '-', '+'),
};

interface Envelope {
  status: string;
  search_id: string;
  results: unknown[];
}

describe('retention: one job scheduler for all workers, searches purged, finished jobs removed (real Redis and Postgres)', () => {
  let stack: Stack;
  let api: Api;
  let probe: QueueProbe;
  let maintenance: Queue;
  let redis: IORedis;

  beforeAll(async () => {
    stack = await Stack.start({ label: 'retention', noWorker: true, env: RETENTION_ENV });
    api = new Api(stack.baseUrl);
    const prefix = stack.env['QUEUE_PREFIX']!;
    probe = new QueueProbe(prefix);
    maintenance = new Queue(MAINTENANCE_QUEUE, {
      prefix,
      connection: { ...redisOptionsFromUrl(testEnv.redisUrl), maxRetriesPerRequest: null },
    });
    redis = new IORedis(testEnv.redisUrl);
  });
  afterAll(async () => {
    await probe?.close();
    await maintenance?.close();
    redis?.disconnect();
    await stack?.stop();
  });

  it('enqueues lookup jobs kept by age and count, the ages capped at RESULTS_TTL_DAYS', async () => {
    const { key } = await api.register();
    // No worker yet: the job waits, as the gateway enqueued it.
    const res = await api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'respond-async' } });
    expect(res.status).toBe(202);
    const job = await probe.queue(QUEUE_NAMES.phone).getJob(res.body.search_id);
    expect(job?.opts).toMatchObject({
      removeOnComplete: { age: 1, count: 40 },
      removeOnFail: { age: 86_400, count: 60 },
      attempts: 5,
    });
  });

  it('leaves one scheduler however many workers start, and every one of them may run the pass', async () => {
    await Promise.all([stack.startWorker(), stack.startWorker(), stack.startWorker()]);
    const schedulers = await maintenance.getJobSchedulers();
    expect(schedulers).toHaveLength(1);
    expect(schedulers[0]).toMatchObject({ key: RETENTION_SCHEDULER_ID, name: RETENTION_JOB_NAME, every: 300 });
    // The scheduler keeps producing passes, one after another.
    await waitFor(
      () => maintenance.getCompletedCount(),
      (n) => n >= 3,
      { timeoutMs: 15_000, what: 'three retention passes' },
    );
    expect(await maintenance.getJobSchedulersCount()).toBe(1);
  });

  it("removes a completed job's payload from Redis once its age has passed, with nothing else finishing", async () => {
    const { key } = await api.register();
    const res = await api.post<Envelope>('/v1/verify/phone', PHONE, { key });
    expect(res.status).toBe(200);
    const jobKey = `${stack.env['QUEUE_PREFIX']!}:${QUEUE_NAMES.phone}:${res.body.search_id}`;
    // Gone, with the job, once its 1 s age has passed and a retention pass has run.
    await waitFor(
      () => redis.exists(jobKey),
      (n) => n === 0,
      { timeoutMs: 15_000, what: `the completed job ${jobKey} to be removed` },
    );
    expect(await probe.state(QUEUE_NAMES.phone, res.body.search_id)).toBe('missing');
  });

  it("removes a delivered webhook event's job (it holds the lookup's envelope) once its age has passed", async () => {
    const { key } = await api.register();
    const hook = await receiver([]);
    try {
      await api.webhook(key, hook.url, ['search.completed']);
      expect((await api.post<Envelope>('/v1/verify/phone', PHONE, { key })).status).toBe(200);
      await hook.events(1, 'the event to be delivered');
      // The only job of its queue: nothing else finishing there would ever remove it.
      const deliveries = probe.queue(WEBHOOK_QUEUE);
      await waitFor(
        async () => await deliveries.getJobCounts('completed', 'failed', 'active', 'wait', 'delayed'),
        (c) => Object.values(c).every((n) => n === 0),
        { timeoutMs: 15_000, what: 'the delivered job to be removed' },
      );
    } finally {
      await hook.close();
    }
  });

  it("deletes a webhook's delivery attempts older than RESULTS_TTL_DAYS and keeps the recent ones", async () => {
    const { key } = await api.register();
    const hook = await receiver([]);
    try {
      const webhookId = await api.webhook(key, hook.url, ['search.completed']);
      const attempts = () =>
        sql<{ event_id: string }>(`SELECT event_id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id`, [
          webhookId,
        ]);
      const eventOf = (searchId: string) => `evt_${searchId.slice('srch_'.length)}`;

      const old = await api.post<Envelope>('/v1/verify/phone', PHONE, { key });
      expect(old.status).toBe(200);
      await waitFor(attempts, (rows) => rows.length === 1, { timeoutMs: 15_000, what: 'the first delivery recorded' });
      // Move the clock: the first attempt is now two days old (RESULTS_TTL_DAYS is 1).
      await sql(`UPDATE webhook_deliveries SET attempted_at = attempted_at - interval '2 days' WHERE webhook_id = $1`, [
        webhookId,
      ]);
      const recent = await api.post<Envelope>('/v1/verify/phone', PHONE, { key });
      expect(recent.status).toBe(200);

      const left = await waitFor(
        attempts,
        (rows) => rows.length === 1 && rows[0]!.event_id === eventOf(recent.body.search_id),
        { timeoutMs: 15_000, what: 'the retention pass to delete the old attempt, and the recent one recorded' },
      );
      expect(left).toEqual([{ event_id: eventOf(recent.body.search_id) }]);
      const listed = await api.get<{ deliveries: { event_id: string; outcome: string }[] }>(
        `/v1/webhooks/${webhookId}/deliveries`,
        { key },
      );
      expect(listed.body.deliveries).toEqual([
        expect.objectContaining({ event_id: eventOf(recent.body.search_id), outcome: 'delivered' }),
      ]);
    } finally {
      await hook.close();
    }
  });

  it('erases inputs and results older than RESULTS_TTL_DAYS and keeps the audit columns', async () => {
    const { key } = await api.register();
    const old = await api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { 'idempotency-key': 'ret-1' } });
    const recent = await api.post<Envelope>('/v1/verify/phone', PHONE, { key });
    expect([old.status, recent.status]).toEqual([200, 200]);
    const [oldId, recentId] = [old.body.search_id, recent.body.search_id];

    // Move the clock: the first search is now two days old (RESULTS_TTL_DAYS is 1).
    await sql(
      `UPDATE searches SET created_at = created_at - interval '2 days', completed_at = completed_at - interval '2 days'
        WHERE id = $1`,
      [oldId],
    );
    const [auditBefore] = await sql(`SELECT ${AUDIT_COLUMNS} FROM searches WHERE id = $1`, [oldId]);

    const [purged] = await waitFor(
      () => sql<{ input: unknown }>(`SELECT input FROM searches WHERE id = $1`, [oldId]),
      (rows) => rows[0]?.input === null,
      { timeoutMs: 15_000, what: 'the retention pass to purge the old search' },
    );
    expect(purged).toBeDefined();
    const [row] = await sql(
      `SELECT input, results, sources, request_hash, idempotency_key FROM searches WHERE id = $1`,
      [oldId],
    );
    expect(row).toEqual({ input: null, results: null, sources: null, request_hash: null, idempotency_key: null });
    const [auditAfter] = await sql(`SELECT ${AUDIT_COLUMNS} FROM searches WHERE id = $1`, [oldId]);
    expect(auditAfter).toEqual(auditBefore);
    expect(auditAfter).toMatchObject({ kind: 'phone', status: 'succeeded', cost: 1 });

    // The recent search keeps its input and results.
    const [kept] = await sql<{ input: unknown; results: unknown[] }>(
      `SELECT input, results FROM searches WHERE id = $1`,
      [recentId],
    );
    expect(kept?.input).not.toBeNull();
    expect(kept?.results?.length).toBeGreaterThan(0);

    // The purged search still answers (its owner sees it, without what it found).
    const again = await api.get<Envelope>(`/v1/searches/${oldId}`, { key });
    expect(again.status).toBe(200);
    expect(again.body.results).toEqual([]);
  });

  it("leaves nothing in Redis that holds a purged search's input or results (jobs, event streams, webhook jobs)", async () => {
    const { key } = await api.register();
    const hook = await receiver([]);
    try {
      await api.webhook(key, hook.url);
      // A number no other test looks up: any Redis value naming it comes from this search.
      const res = await api.post<Envelope>('/v1/verify/phone', { phone: '+447700900461' }, { key });
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body.results)).toContain('447700900461');
      await hook.events(1, 'the search.completed event to be delivered');
      await sql(`UPDATE searches SET created_at = created_at - interval '2 days' WHERE id = $1`, [res.body.search_id]);
      await waitFor(
        () => sql<{ input: unknown }>(`SELECT input FROM searches WHERE id = $1`, [res.body.search_id]),
        (rows) => rows[0]?.input === null,
        { timeoutMs: 15_000, what: 'the retention pass to purge the search' },
      );
      // The purge has run; the finished lookup and delivery jobs go with the first pass after they are
      // 1 s old (the delivery job may finish after the pass that removes the lookup job: a later one).
      // The events stream is never cleaned by a pass: what it holds must not name the number at all.
      const holding = async () =>
        (await redisValues(stack.env['QUEUE_PREFIX']!)).filter(([, v]) => v.includes('447700900461')).map(([k]) => k);
      await waitFor(holding, (keys) => keys.length === 0, {
        timeoutMs: 15_000,
        what: "no Redis value naming the purged search's number",
      }).catch(async (err: unknown) => {
        throw new Error(`${String(err)}; still holding it: ${(await holding()).join(', ')}`);
      });
    } finally {
      await hook.close();
    }
  });

  it('removes a webhook event still being retried once RESULTS_TTL_DAYS have passed since it was queued, recorded failed', async () => {
    const { key } = await api.register();
    // The first attempt fails; the next waits WEBHOOK_RETRY_BASE_MS (30 s by default): the job sits delayed.
    const hook = await receiver([500]);
    try {
      const webhookId = await api.webhook(key, hook.url, ['search.completed']);
      const res = await api.post<Envelope>('/v1/verify/phone', PHONE, { key });
      expect(res.status).toBe(200);
      const eventId = searchEventId(res.body.search_id);
      const jobId = webhookJobId(webhookId, eventId);
      await waitFor(
        () => probe.state(WEBHOOK_QUEUE, jobId),
        (state) => state === 'delayed',
        { timeoutMs: 15_000, what: 'the event to wait for its second attempt' },
      );
      // Move the clock: the search and its event are two days old (RESULTS_TTL_DAYS is 1), its retry still ahead.
      await sql(`UPDATE searches SET created_at = created_at - interval '2 days' WHERE id = $1`, [res.body.search_id]);
      const jobKey = `${stack.env['QUEUE_PREFIX']!}:${WEBHOOK_QUEUE}:${jobId}`;
      await redis.hset(jobKey, 'timestamp', String(Date.now() - 2 * 86_400_000));

      await waitFor(
        () => redis.exists(jobKey),
        (n) => n === 0,
        { timeoutMs: 15_000, what: `the expired delivery job ${jobKey} to be removed` },
      );
      expect(hook.received).toHaveLength(1);
      const deliveries = await api.get<{ deliveries: { event_id: string; attempt: number; outcome: string }[] }>(
        `/v1/webhooks/${webhookId}/deliveries`,
        { key },
      );
      expect(deliveries.body.deliveries.map((d) => [d.event_id, d.attempt, d.outcome])).toEqual([
        [eventId, 2, 'failed'],
        [eventId, 1, 'retrying'],
      ]);
    } finally {
      await hook.close();
    }
  });

  /** Every key of the stack's prefix with its contents as text. */
  async function redisValues(prefix: string): Promise<[string, string][]> {
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `${prefix}:*`, count: 1000 }))
      keys.push(...(batch as string[]));
    const out: [string, string][] = [];
    for (const k of keys) {
      const read = READ_KEY[await redis.type(k)];
      out.push([k, JSON.stringify(read ? await read(redis, k) : null)]);
    }
    return out;
  }

  it("erases a batch's request hash (of every item's input) and Idempotency-Key past RESULTS_TTL_DAYS, and it still answers", async () => {
    const { key } = await api.register();
    const body = { requests: [{ kind: 'phone', input: PHONE }] };
    const old = await api.post<{ batch_id: string }>('/v1/batch', body, { key, headers: { 'idempotency-key': 'b-1' } });
    const recent = await api.post<{ batch_id: string }>('/v1/batch', body, {
      key,
      headers: { 'idempotency-key': 'b-2' },
    });
    expect([old.status, recent.status]).toEqual([200, 200]);
    await sql(`UPDATE batches SET created_at = created_at - interval '2 days' WHERE id = $1`, [old.body.batch_id]);

    await waitFor(
      () => sql<{ request_hash: string | null }>(`SELECT request_hash FROM batches WHERE id = $1`, [old.body.batch_id]),
      (rows) => rows[0]?.request_hash === null,
      { timeoutMs: 15_000, what: "the retention pass to erase the old batch's request hash" },
    );
    const rows = await sql<{ id: string; request_hash: string | null; idempotency_key: string | null }>(
      `SELECT id, request_hash, idempotency_key FROM batches WHERE id = ANY($1) ORDER BY created_at`,
      [[old.body.batch_id, recent.body.batch_id]],
    );
    expect(rows).toEqual([
      { id: old.body.batch_id, request_hash: null, idempotency_key: null },
      { id: recent.body.batch_id, request_hash: expect.any(String), idempotency_key: 'b-2' },
    ]);
    const again = await api.get<{ items: { search_id: string }[] }>(`/v1/batches/${old.body.batch_id}`, { key });
    expect(again.status).toBe(200);
    expect(again.body.items).toHaveLength(1);
  });
});

describe('retention: a search still pending past RESULTS_TTL_DAYS because no worker takes its kind (own database)', () => {
  let fixture: CrashStack;

  beforeAll(async () => {
    fixture = await CrashStack.start({ label: 'retention-pending', env: RETENTION_ENV });
  });
  afterAll(() => fixture?.close());

  it('is failed and released once (money exact), its input erased and its job removed, and it says so', async () => {
    const { stack, api, queues } = fixture;
    const { key, accountId } = await api.register();
    const start = (await ledgerState(accountId)).balance;
    // Only phone jobs are consumed: the e-mail lookup's job waits, its search pending, its input kept.
    await stack.startWorker({ LOOKUP_QUEUES: 'phone' });
    const waiting = await api.post<Envelope>(
      '/v1/verify/email',
      { email: 'pending.forever@example.com' },
      { key, headers: { prefer: 'respond-async' } },
    );
    // With its body: a 503 says why (a queue add that timed out on a loaded machine, once).
    expect({ status: waiting.status, body: waiting.body }).toMatchObject({ status: 202 });
    const id = waiting.body.search_id;
    expect(await queues.state(QUEUE_NAMES.email, id)).toBe('waiting');
    // Move the clock: the search is two days old (RESULTS_TTL_DAYS is 1), its job still waiting.
    await sql(`UPDATE searches SET created_at = created_at - interval '2 days' WHERE id = $1`, [id]);

    const [row] = await waitFor(
      () => sql<{ status: string; input: unknown }>(`SELECT status, input FROM searches WHERE id = $1`, [id]),
      (rows) => rows[0]?.input === null,
      { timeoutMs: 15_000, what: 'the retention pass to erase the pending search past RESULTS_TTL_DAYS' },
    );
    expect(row?.status).toBe('failed');
    expect(await queues.state(QUEUE_NAMES.email, id)).toBe('missing');
    // Released once, whatever the passes after it do.
    const maintenance = queues.queue(MAINTENANCE_QUEUE);
    const passes = await maintenance.getCompletedCount();
    await waitFor(
      () => maintenance.getCompletedCount(),
      (n) => n >= passes + 3,
      { timeoutMs: 15_000, what: 'three more retention passes' },
    );
    expect(await ledgerState(accountId)).toEqual(settled(start, { reserves: 1, captures: 0, releases: 1 }));
    const answer = await api.get<{ status: string; error: { code: string; message: string } }>(`/v1/searches/${id}`, {
      key,
    });
    expect(answer.body.status).toBe('error');
    expect(answer.body.error).toEqual({
      code: 'unavailable',
      message: 'the lookup was not run within RESULTS_TTL_DAYS (no worker took it); nothing was charged',
    });
  });
});
