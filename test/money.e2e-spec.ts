import { Redis } from 'ioredis';
import { QUEUE_NAMES, WEBHOOK_QUEUE, batchEventId, searchEventId, webhookJobId } from '@dossier/contracts';
import {
  Api,
  CRASH_PHONE,
  CrashStack,
  FakeUpstream,
  type QueueProbe,
  type Stack,
  TcpProxy,
  ledgerState,
  receiver,
  runCli,
  settled,
  sql,
  testEnv,
  waitFor,
  type TestFaults,
  withFaults,
} from '@dossier/testing';

const PHONE = CRASH_PHONE;
/** Another number, for a lookup the gateway answers 503: its number in an upstream's request says its job ran. */
const RELEASED_PHONE = { phone: '+14155552672' };
/** A licensed upstream for phone lookups (Twilio Lookup: billed per request), faked on loopback. */
const TWILIO_ENV = (url: string) => ({
  TWILIO_ACCOUNT_SID: 'AC0000000000000000000000000000e2e1',
  TWILIO_AUTH_TOKEN: 'e2e-money-twilio-token',
  TWILIO_BASE_URL: url,
});
const SIGNUP = 20;
/** The reconciler acts on a search pending this long with no job, checked twice a second. */
const FAST_RECONCILE = { RECONCILE_AFTER_S: '5', RECONCILE_INTERVAL_MS: '500' };

interface Envelope {
  status: string;
  search_id: string;
  credits_remaining: number;
  error?: { code: string };
}

const pendingOf = (accountId: string) =>
  sql<{ id: string }>(`SELECT id FROM searches WHERE account_id = $1 AND status = 'pending' ORDER BY id`, [accountId]);

/**
 * The money guarantees of the reservation path (ADR 0003, ADR 0023) under the failures a deployment
 * meets: processes killed between steps, Redis losing its keys, Postgres unreachable while workers
 * settle, grants landing while reservations are held, and reservations batched by two gateways at once.
 * Gateways and workers are separate processes; Redis and Postgres are real. After each case the ledger
 * sums to the balance and nothing stays pending.
 */
describe('money under failures (gateways + workers as processes, real Redis and Postgres)', () => {
  let fixture: CrashStack;
  let stack: Stack;
  let api: Api;
  let queues: QueueProbe;
  let submitAsync: (key: string, base?: Api) => Promise<string>;

  beforeAll(async () => {
    fixture = await CrashStack.start({ label: 'money', env: { SIGNUP_CREDITS: String(SIGNUP) } });
    ({ stack, api, queues } = fixture);
    submitAsync = (key, base) => fixture.submitAsync(key, base);
  });
  afterEach(() => fixture.killWorkers());
  afterAll(() => fixture?.close());

  /** Another gateway, whose queue adds reach Redis but "fail" `ms` later, as a reply lost to a timeout or a reset would. */
  const losingReplies = async (ms: number, env: Record<string, string> = {}, faults: TestFaults = {}): Promise<Api> =>
    new Api(
      (
        await stack.startGateway({
          ...withFaults({ loseEnqueueReplyMs: ms, ...faults }),
          WEBHOOK_ALLOW_PRIVATE: 'true',
          ...env,
        })
      ).baseUrl,
    );

  it('gives exactly as many lookups as there are credits when two gateways batch reservations for one account', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const second = new Api((await stack.startGateway()).baseUrl);
    await stack.startWorker();
    const answers = await Promise.all(
      Array.from({ length: 3 * SIGNUP }, (_, i) =>
        (i % 2 ? second : api).post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'wait=30' } }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(SIGNUP);
    expect(statuses.filter((s) => s === 402)).toHaveLength(2 * SIGNUP);
    expect(await ledgerState(accountId)).toEqual(settled(0, { reserves: SIGNUP, captures: SIGNUP, releases: 0 }));
  });

  it('finds a search whose gateway was SIGKILLed between reserving and queueing it, then fails and releases it', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const doomed = await stack.startGateway(withFaults({ holdEnqueueMs: 60000 }));
    void new Api(doomed.baseUrl)
      .post('/v1/verify/phone', PHONE, { key, headers: { prefer: 'respond-async' } })
      .catch(() => undefined);
    const [row] = await waitFor(
      () => pendingOf(accountId),
      (rows) => rows.length === 1,
      { timeoutMs: 10_000, what: 'the reservation' },
    );
    await doomed.app.stop('SIGKILL');

    // Accepted, reserved, never queued: still found, and the balance shows the credit held.
    const held = await api.get<Envelope>(`/v1/searches/${row!.id}`, { key });
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ status: 'pending', credits_remaining: SIGNUP - 1 });
    const account = await api.get<{ credits_remaining: number }>('/v1/account', { key });
    expect(account.body.credits_remaining).toBe(SIGNUP - 1);
    expect(await queues.state(QUEUE_NAMES.phone, row!.id)).toBe('missing');

    await stack.startWorker(FAST_RECONCILE);
    const failed = await waitFor(
      () => api.get<Envelope>(`/v1/searches/${row!.id}`, { key }),
      (r) => r.status !== 202,
      { timeoutMs: 20_000, what: 'the reconciler to fail the search' },
    );
    expect(failed.status).toBe(503);
    expect(failed.body).toMatchObject({ status: 'error', error: { code: 'unavailable' }, credits_remaining: SIGNUP });
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 1, captures: 0, releases: 1 }));
  });

  it('answers what a lookup did when the reply to its queue add is lost: a 503 only when nothing was charged, a batch kept with its key', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    await stack.startWorker();
    // The job is queued and runs; its add fails after 1 s, as a reply lost to a timeout or a reset would.
    const late = await losingReplies(1000);
    const single = await late.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'wait=30' } });
    expect(single.status).toBe(200);
    expect(single.body).toMatchObject({ status: 'success', credits_remaining: SIGNUP - 1 });

    const requests = Array.from({ length: 3 }, () => ({ kind: 'phone', input: PHONE }));
    const headers = { 'idempotency-key': 'lost-reply', prefer: 'wait=30' };
    const batch = await late.post<{ batch_id: string; status: string }>('/v1/batch', { requests }, { key, headers });
    expect(batch.status).toBe(200);
    expect(batch.body.status).toBe('success');
    const retried = await api.post<{ batch_id: string }>('/v1/batch', { requests }, { key, headers });
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body.batch_id).toBe(batch.body.batch_id);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 4, { reserves: 4, captures: 4, releases: 0 }));

    // The add fails at once: the gateway's release and the job race. Whichever wins, the answer says what happened.
    const racing = await losingReplies(0);
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await racing.post<Envelope>('/v1/verify/phone', PHONE, { key }));
    const ok = answers.filter((a) => a.status === 200).length;
    expect(answers.filter((a) => a.status === 503).length).toBe(6 - ok);
    await waitFor(
      () => ledgerState(accountId),
      (s) => s.pending === 0,
      { timeoutMs: 10_000, what: 'every search settled' },
    );
    expect(await ledgerState(accountId)).toEqual(
      settled(SIGNUP - 4 - ok, { reserves: 10, captures: 4 + ok, releases: 6 - ok }),
    );
  });

  it('completes a batch kept after a lost add reply: the released item’s job is taken back, the outbox sends batch.completed', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const hook = await receiver([]);
    try {
      const late = await losingReplies(1000);
      await late.webhook(key, hook.url, ['batch.completed']);
      // Only phone jobs run while the gateway waits on its adds: the phone item settles, the company item
      // is still queued when the add "fails", so the gateway takes its job back, releases it and answers the
      // batch as it stands.
      await stack.startWorker({ LOOKUP_QUEUES: 'phone', WEBHOOK_ALLOW_PRIVATE: 'true' });
      const requests = [
        { kind: 'phone', input: PHONE },
        { kind: 'company', input: { company_name: 'Nobody Atall Ltd' } },
      ];
      const batch = await late.post<{ batch_id: string; items: Envelope[] }>(
        '/v1/batch',
        { requests },
        { key, headers: { prefer: 'wait=30' } },
      );
      expect(batch.status).toBe(200);
      expect(batch.body.items.map((i) => i.error?.code ?? i.status)).toEqual(['success', 'unavailable']);
      const companySearch = batch.body.items[1]!.search_id;

      // No company worker will ever run the released item (it is gone), and none is needed: its release wrote
      // its outbox row, and the worker's relay completes the batch and queues its batch.completed (ADR 0062).
      expect(await queues.state(QUEUE_NAMES.company, companySearch)).toBe('missing');
      await waitFor(
        () =>
          sql<{ completed_at: Date | null }>(`SELECT completed_at FROM batches WHERE id = $1`, [batch.body.batch_id]),
        ([row]) => row!.completed_at !== null,
        { timeoutMs: 10_000, what: 'the batch to be completed' },
      );
      const events = await hook.events(1, 'the batch.completed delivery');
      expect(events).toHaveLength(1);
      const event = events[0]!;
      expect(event.type).toBe('batch.completed');
      expect(event.data).toEqual((await api.get(`/v1/batches/${batch.body.batch_id}`, { key })).body);
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 2, captures: 1, releases: 1 }));
    } finally {
      await hook.close();
    }
  });

  it('voids a batch answered 503 (every add failed, every reservation released): no batch.completed for it, ever', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const hook = await receiver([]);
    try {
      // Every add "fails" at once, though it reached Redis; no phone worker runs yet, so the gateway releases
      // every reservation before any job runs, and answers 503 ("nothing was charged") without a batch id.
      const lost = await losingReplies(0);
      const webhookId = await lost.webhook(key, hook.url, ['batch.completed']);
      const requests = [
        { kind: 'phone', input: PHONE },
        { kind: 'phone', input: PHONE },
      ];
      const headers = { 'idempotency-key': 'voided-batch' };
      const refused = await lost.post<Envelope>('/v1/batch', { requests }, { key, headers });
      expect(refused.status).toBe(503);
      expect(refused.body.error?.code).toBe('unavailable');
      const voided = await sql<{ id: string; batch_id: string }>(
        `SELECT id, batch_id FROM searches WHERE account_id = $1`,
        [accountId],
      );
      expect(voided).toHaveLength(2);
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 2, captures: 0, releases: 2 }));

      // Their jobs were taken back before the releases: none will run. The client retries with its key.
      for (const s of voided) expect(await queues.state(QUEUE_NAMES.phone, s.id)).toBe('missing');
      await stack.startWorker({ LOOKUP_QUEUES: 'phone', WEBHOOK_ALLOW_PRIVATE: 'true' });
      const retried = await api.post<{ batch_id: string }>('/v1/batch', { requests }, { key, headers });
      expect(retried.status).toBe(200);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
      await hook.events(1, "the retried batch's batch.completed delivery");
      // Only the batch the client got is announced: the voided one's event was never queued, nor does the
      // batch answer or replay.
      const voidedEvent = webhookJobId(webhookId, batchEventId(voided[0]!.batch_id));
      expect(await queues.state(WEBHOOK_QUEUE, voidedEvent)).toBe('missing');
      expect(hook.received.map((r) => (JSON.parse(r.raw) as { data: { batch_id: string } }).data.batch_id)).toEqual([
        retried.body.batch_id,
      ]);
      expect((await api.get(`/v1/batches/${voided[0]!.batch_id}`, { key })).status).toBe(404);
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 2, { reserves: 4, captures: 2, releases: 2 }));
    } finally {
      await hook.close();
    }
  });

  it('keeps a batch whose jobs a worker already runs when its adds fail: answered with what they found, charged once', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const hook = await receiver([]);
    try {
      // The adds "fail" after 1 s; the worker took both jobs at once and holds them 2 s: they are running, so
      // the gateway cannot take them back, releases nothing and answers the batch when they have settled.
      const late = await losingReplies(1000);
      await late.webhook(key, hook.url, ['batch.completed']);
      await stack.startWorker({
        LOOKUP_QUEUES: 'phone',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        ...withFaults({ holdLookups: { at: 'before', ms: 2000 } }),
      });
      const requests = [
        { kind: 'phone', input: PHONE },
        { kind: 'phone', input: PHONE },
      ];
      const batch = await late.post<{ batch_id: string; status: string; items: Envelope[] }>(
        '/v1/batch',
        { requests },
        { key, headers: { prefer: 'wait=30' } },
      );
      expect(batch.status).toBe(200);
      expect(batch.body.items.map((i) => i.status)).toEqual(['success', 'success']);
      const events = await hook.events<{ batch_id: string }>(1, 'the batch.completed delivery');
      expect(events.map((e) => e.data.batch_id)).toEqual([batch.body.batch_id]);
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 2, { reserves: 2, captures: 2, releases: 0 }));
    } finally {
      await hook.close();
    }
  });

  it('announces no batch answered 503 when Redis is gone before its jobs can be taken back, though they settle while the gateway voids it', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const hook = await receiver([]);
    const redis = await TcpProxy.forUrl(testEnv.redisUrl).start();
    try {
      // The double fault: the adds reach Redis, their replies are "lost" (after 1 s), and the gateway's Redis
      // is cut before it can take the jobs back: it releases both searches all the same and holds 3 s before
      // it deletes the batch. The worker (its own connection) took both jobs at once and held them 2 s: their
      // settles and completion checks fall inside that hold, after the releases.
      const voiding = await losingReplies(1000, { REDIS_URL: redis.url(testEnv.redisUrl) }, { holdBatchVoidMs: 3000 });
      const webhookId = await voiding.webhook(key, hook.url, ['batch.completed']);
      await stack.startWorker({
        LOOKUP_QUEUES: 'phone',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        ...withFaults({ holdLookups: { at: 'before', ms: 2000 } }),
      });
      const requests = [
        { kind: 'phone', input: PHONE },
        { kind: 'phone', input: PHONE },
      ];
      const answer = voiding.post<Envelope>('/v1/batch', { requests }, { key });
      const voided = await waitFor(
        () =>
          sql<{ id: string; batch_id: string }>(`SELECT id, batch_id FROM searches WHERE account_id = $1`, [accountId]),
        (rows) => rows.length === 2,
        { timeoutMs: 10_000, what: 'the reservations' },
      );
      for (const s of voided) {
        await waitFor(
          () => queues.job(QUEUE_NAMES.phone, s.id),
          (j) => j.state === 'active',
          { timeoutMs: 10_000, what: `the worker to take ${s.id}` },
        );
      }
      redis.cut();
      const refused = await answer;
      expect(refused.status).toBe(503);
      // The fault fired (its statement is still the one that deletes the batch): the race above was provoked.
      expect(stack.logs).toContain('test fault: statement "DELETE FROM batches WHERE id = $1" held 3000 ms');
      for (const s of voided) {
        await waitFor(
          () => queues.job(QUEUE_NAMES.phone, s.id),
          (j) => j.state === 'completed',
          { timeoutMs: 15_000, what: `the voided batch's job ${s.id} to run` },
        );
      }
      // Each job queues the batch's event, if it ever does, before it completes.
      const event = webhookJobId(webhookId, batchEventId(voided[0]!.batch_id));
      expect(await queues.state(WEBHOOK_QUEUE, event)).toBe('missing');
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 2, captures: 0, releases: 2 }));
    } finally {
      await hook.close();
      await redis.close();
    }
  });

  it('announces no search.failed for a lookup answered 503 whose add reached Redis (its reply lost), and runs no job for it', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const hook = await receiver([]);
    try {
      const lost = await losingReplies(0);
      const webhookId = await lost.webhook(key, hook.url, ['search.completed', 'search.failed']);
      // No phone worker runs yet: the gateway releases each reservation before its job can run, and answers
      // 503 ("nothing was charged"), naming no search — a single lookup, and a batch (voided).
      const single = await lost.post<Envelope>('/v1/verify/phone', PHONE, { key });
      expect(single.status).toBe(503);
      const batch = await lost.post<Envelope>('/v1/batch', { requests: [{ kind: 'phone', input: PHONE }] }, { key });
      expect(batch.status).toBe(503);
      const refused = await sql<{ id: string }>(`SELECT id FROM searches WHERE account_id = $1`, [accountId]);
      expect(refused).toHaveLength(2);

      // Their jobs were queued all the same, and taken back before the releases: none will run.
      await stack.startWorker({ LOOKUP_QUEUES: 'phone', WEBHOOK_ALLOW_PRIVATE: 'true' });
      for (const s of refused) {
        expect(await queues.state(QUEUE_NAMES.phone, s.id)).toBe('missing');
        const event = webhookJobId(webhookId, searchEventId(s.id));
        expect(await queues.state(WEBHOOK_QUEUE, event)).toBe('missing');
      }
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 2, captures: 0, releases: 2 }));

      // A lookup the client did get is announced as ever: the only delivery.
      const answered = await api.post<Envelope>('/v1/verify/phone', PHONE, { key });
      expect(answered.status).toBe(200);
      const events = await hook.events<{ search_id: string }>(1, 'the search.completed delivery');
      expect(events.map((e) => e.data.search_id)).toEqual([answered.body.search_id]);
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 3, captures: 1, releases: 2 }));
    } finally {
      await hook.close();
    }
  });

  it('calls no upstream for a lookup answered 503 whose add reached Redis (its reply lost): its job is taken back first', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const twilio = await FakeUpstream.start();
    try {
      twilio.reply({ status: 404, body: { code: 20404, message: 'not found', status: 404 } });
      // The add reaches Redis, its reply is "lost" at once, and no worker runs yet: the gateway answers 503.
      const lost = await losingReplies(0);
      const refused = await lost.post<Envelope>('/v1/verify/phone', RELEASED_PHONE, { key });
      expect(refused.status).toBe(503);
      const [released] = await sql<{ id: string }>(`SELECT id FROM searches WHERE account_id = $1`, [accountId]);
      expect(await queues.state(QUEUE_NAMES.phone, released!.id)).toBe('missing');

      // One slot, with a licensed upstream: a job of the released search, were it still queued, would run first.
      await stack.startWorker({ LOOKUP_QUEUES: 'phone', WORKER_CONCURRENCY: '1', ...TWILIO_ENV(twilio.url) });
      const answered = await api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'wait=30' } });
      expect(answered.status).toBe(200);
      const asked = twilio.requests.map((r) => decodeURIComponent(r.url));
      expect(asked.length).toBeGreaterThan(0);
      expect(asked.filter((url) => url.includes(RELEASED_PHONE.phone))).toEqual([]);
      expect(await queues.state(QUEUE_NAMES.phone, released!.id)).toBe('missing');
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 2, captures: 1, releases: 1 }));
    } finally {
      await twilio.close();
    }
  });

  it('sends a search.completed once when its job queued it and the gateway, taking the finished job back (its add reply lost), queues it again', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const hook = await receiver([]);
    try {
      // The job runs, settles, queues its event and completes within the second the add's reply is "lost" for.
      const late = await losingReplies(1000);
      const webhookId = await late.webhook(key, hook.url, ['search.completed']);
      await stack.startWorker({ LOOKUP_QUEUES: 'phone', WEBHOOK_ALLOW_PRIVATE: 'true' });
      const answered = await late.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'wait=30' } });
      expect(answered.status).toBe(200);
      expect(await queues.state(QUEUE_NAMES.phone, answered.body.search_id)).toBe('missing');

      // The gateway's add has the job id of the worker's (webhook + event): it queued nothing more.
      const delivery = webhookJobId(webhookId, searchEventId(answered.body.search_id));
      await waitFor(
        () => queues.state(WEBHOOK_QUEUE, delivery),
        (state) => state === 'completed',
        { timeoutMs: 10_000, what: 'the delivery' },
      );
      // No other delivery of this webhook waits. (Only this webhook's: the queue is the file's, and an earlier
      // test's event may still be on its way to that test's closed receiver.)
      const pending = await queues.queue(WEBHOOK_QUEUE).getJobs(['wait', 'prioritized', 'delayed', 'active']);
      expect(pending.map((j) => j.id).filter((id) => id?.startsWith(`${webhookId}.`))).toEqual([]);
      const events = await hook.events<{ search_id: string }>(1, 'the search.completed delivery');
      expect(events.map((e) => [e.type, e.data.search_id])).toEqual([['search.completed', answered.body.search_id]]);
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
    } finally {
      await hook.close();
    }
  });

  it('loses nothing when Redis loses the queues mid-run: queued searches are failed and released, later ones charged once', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const ids = await Promise.all(Array.from({ length: 5 }, () => submitAsync(key)));
    expect(await ledgerState(accountId)).toMatchObject({ balance: SIGNUP - 5, ledger_sum: SIGNUP - 5, pending: 5 });

    // What a Redis restart without persistence does to this deployment: every key under its prefix is gone.
    const redis = new Redis(testEnv.redisUrl);
    try {
      const prefix = stack.env['QUEUE_PREFIX']!;
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
    for (const id of ids) expect(await queues.state(QUEUE_NAMES.phone, id)).toBe('missing');

    await stack.startWorker(FAST_RECONCILE);
    await waitFor(
      () => pendingOf(accountId),
      (rows) => rows.length === 0,
      { timeoutMs: 20_000, what: 'the reconciler to settle the lost searches' },
    );
    for (const id of ids) {
      expect((await api.get<Envelope>(`/v1/searches/${id}`, { key })).body.error?.code).toBe('unavailable');
    }
    const after = await api.post<Envelope>('/v1/verify/phone', PHONE, { key });
    expect(after.status).toBe(200);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 6, captures: 1, releases: 5 }));
  });

  it('settles every lookup exactly once when the worker cannot reach Postgres for a while (retried, never lost)', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const pg = await TcpProxy.forUrl(testEnv.databaseUrl).start();
    try {
      await stack.startWorker({
        DATABASE_URL: pg.url(testEnv.databaseUrl),
        ...withFaults({ holdLookups: { at: 'before', ms: 1000 } }),
      });
      const ids = await Promise.all(Array.from({ length: 6 }, () => submitAsync(key)));
      await waitFor(
        () => Promise.all(ids.map((id) => queues.state(QUEUE_NAMES.phone, id))),
        (states) => states.every((s) => s === 'active'),
        { timeoutMs: 10_000, what: 'the jobs to be active' },
      );
      pg.cut();
      // Every settle in this window fails; BullMQ retries each job with backoff (0.5 s, 1 s, 2 s, …).
      await new Promise((r) => setTimeout(r, 2500));
      expect(await ledgerState(accountId)).toMatchObject({ pending: 6, balance: SIGNUP - 6 });
      pg.restore();
      await waitFor(
        () => pendingOf(accountId),
        (rows) => rows.length === 0,
        { timeoutMs: 30_000, what: 'the retried settles' },
      );
      const attempts = await Promise.all(ids.map((id) => queues.job(QUEUE_NAMES.phone, id)));
      expect(attempts.every((j) => j.state === 'completed')).toBe(true);
      expect(attempts.some((j) => j.attemptsMade > 0)).toBe(true);
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 6, { reserves: 6, captures: 6, releases: 0 }));
    } finally {
      await pg.close();
    }
  });

  it('keeps a grant made while reservations are held, and the ledger sums to the balance once they settle', async () => {
    const { key, email, accountId } = await api.register(SIGNUP);
    const ids = await Promise.all(Array.from({ length: 8 }, () => submitAsync(key)));
    const [grant] = await Promise.all([
      runCli(['credits:grant', email, '7']),
      ...Array.from({ length: 4 }, () => submitAsync(key)),
    ]);
    expect(grant.code).toBe(0);
    expect(await ledgerState(accountId)).toMatchObject({ balance: SIGNUP + 7 - 12, pending: 12 });
    expect((await api.get<{ credits_remaining: number }>('/v1/account', { key })).body.credits_remaining).toBe(
      SIGNUP + 7 - 12,
    );
    await stack.startWorker();
    await waitFor(
      () => pendingOf(accountId),
      (rows) => rows.length === 0,
      { timeoutMs: 20_000, what: 'the held lookups to settle' },
    );
    expect(ids).toHaveLength(8);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP + 7 - 12, { reserves: 12, captures: 12, releases: 0 }));
  });
});
