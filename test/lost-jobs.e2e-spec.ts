import { QUEUE_NAMES } from '@dossier/contracts';
import {
  Api,
  QueueProbe,
  RedisServer,
  Stack,
  ledgerState,
  settled,
  sql,
  waitFor,
  type ApiResponse,
  withFaults,
} from '@dossier/testing';

const PHONE = { phone: '+14155552671' };
const SIGNUP = 10;
/** API.md: a search whose job is gone is released and marked failed within 60 s, with the default settings. */
const BOUND_MS = 60_000;
const LOST = "the lookup's job was lost before it finished (its queue no longer holds it); nothing was charged";

interface Envelope {
  status: string;
  search_id: string;
  credits_remaining: number;
  error?: { code: string; message: string };
}

const statusOf = async (id: string) =>
  (await sql<{ status: string }>(`SELECT status FROM searches WHERE id = $1`, [id]))[0]?.status;

/** A phone lookup answered `202` at once (`Prefer: respond-async`); its search id. */
async function submitAsync(api: Api, key: string): Promise<string> {
  const res = await api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'respond-async' } });
  expect(res.status).toBe(202);
  return res.body.search_id;
}

/** Until a worker runs the search's job. */
async function untilRunning(probe: QueueProbe, id: string): Promise<void> {
  await waitFor(
    () => probe.state(QUEUE_NAMES.phone, id),
    (state) => state === 'active',
    { timeoutMs: 10_000, what: `the job of ${id} to run` },
  );
}

/** The error envelope a search failed for a lost job is answered with, by GET /v1/searches/{id}. */
function expectLost(res: ApiResponse<Envelope>, id: string, remaining: number): void {
  expect(res.status).toBe(503);
  expect(res.body).toMatchObject({
    status: 'error',
    error: { code: 'unavailable', message: LOST },
    search_id: id,
    credits_remaining: remaining,
  });
}

describe('searches whose job is gone are failed and released within 60 s; live jobs never are', () => {
  describe('Redis loses its data mid-run (FLUSHALL on a redis-server of the test’s own), default settings', () => {
    let redis: RedisServer;
    let stack: Stack;
    let api: Api;
    let probe: QueueProbe;

    beforeAll(async () => {
      redis = await RedisServer.start();
      stack = await Stack.start({
        label: 'flushed',
        noWorker: true,
        env: { REDIS_URL: redis.url, SIGNUP_CREDITS: String(SIGNUP) },
      });
      api = new Api(stack.baseUrl);
      probe = new QueueProbe(stack.env['QUEUE_PREFIX']!, redis.url);
      // One slot, each job held 4 s before it runs: one lookup runs while the others wait behind it.
      // RECONCILE_AFTER_S and RECONCILE_INTERVAL_MS are left at their defaults.
      await stack.startWorker({
        LOOKUP_QUEUES: 'phone',
        WORKER_CONCURRENCY: '1',
        ...withFaults({ holdLookups: { at: 'before', ms: 4000 } }),
      });
    });
    afterAll(async () => {
      await probe?.close();
      await stack?.stop();
      await redis?.stop();
    });

    it('fails and releases the searches whose jobs were lost, and lets the running one finish and charge', async () => {
      const { key, accountId } = await api.register(SIGNUP);
      const running = await submitAsync(api, key);
      await untilRunning(probe, running);
      const lost = [await submitAsync(api, key), await submitAsync(api, key)];
      for (const id of lost) expect(await probe.state(QUEUE_NAMES.phone, id)).toBe('waiting');

      expect(await redis.command('FLUSHALL')).toBe('+OK\r\n');
      const flushedAt = Date.now();
      for (const id of lost) expect(await probe.state(QUEUE_NAMES.phone, id)).toBe('missing');

      // The worker still holds the running lookup: it settles it in Postgres, charged.
      await waitFor(
        () => statusOf(running),
        (s) => s === 'succeeded',
        { timeoutMs: 20_000, what: 'the running lookup to settle' },
      );
      await waitFor(
        async () => Promise.all(lost.map(statusOf)),
        (statuses) => statuses.every((s) => s === 'failed'),
        { timeoutMs: BOUND_MS + 15_000, what: 'the reconciler to fail the lost searches' },
      );
      const tookMs = Date.now() - flushedAt;
      expect(tookMs).toBeLessThanOrEqual(BOUND_MS);

      for (const id of lost) expectLost(await api.get<Envelope>(`/v1/searches/${id}`, { key }), id, SIGNUP - 1);
      const done = await api.get<Envelope>(`/v1/searches/${running}`, { key });
      expect(done.body).toMatchObject({ status: 'success', search_id: running, credits_remaining: SIGNUP - 1 });
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 3, captures: 1, releases: 2 }));
    }, 120_000);
  });

  describe('a job removed on the Bull board, next to jobs that are slow or queued behind them', () => {
    let stack: Stack;
    let api: Api;
    let probe: QueueProbe;

    beforeAll(async () => {
      stack = await Stack.start({ label: 'alive', noWorker: true, env: { SIGNUP_CREDITS: String(SIGNUP) } });
      api = new Api(stack.baseUrl);
      probe = new QueueProbe(stack.env['QUEUE_PREFIX']!);
      // One slot, each job held 10 s: the second waits behind the first for as long. The reconciler looks at
      // every search older than 5 s, twice a second.
      await stack.startWorker({
        LOOKUP_QUEUES: 'phone',
        WORKER_CONCURRENCY: '1',
        ...withFaults({ holdLookups: { at: 'before', ms: 10000 } }),
        RECONCILE_AFTER_S: '5',
        RECONCILE_INTERVAL_MS: '500',
      });
    });
    afterAll(async () => {
      await probe?.close();
      await stack?.stop();
    });

    it('releases the removed one, and neither the slow running job nor the one queued behind it', async () => {
      const { key, accountId } = await api.register(SIGNUP);
      const slow = await submitAsync(api, key);
      await untilRunning(probe, slow);
      const queued = await submitAsync(api, key);
      const removed = await submitAsync(api, key);
      const job = await probe.queue(QUEUE_NAMES.phone).getJob(removed);
      await job!.remove(); // what the Bull board's "Remove" does

      await waitFor(
        () => statusOf(removed),
        (s) => s === 'failed',
        { timeoutMs: 20_000, what: 'the reconciler to fail the removed search' },
      );
      expectLost(await api.get<Envelope>(`/v1/searches/${removed}`, { key }), removed, SIGNUP - 2);
      // Both are past RECONCILE_AFTER_S by now, in the same passes: alive, they are left to their jobs.
      expect([await statusOf(slow), await statusOf(queued)]).toEqual(['pending', 'pending']);
      expect(await probe.state(QUEUE_NAMES.phone, queued)).toBe('waiting');

      for (const id of [slow, queued]) {
        await waitFor(
          () => statusOf(id),
          (s) => s !== 'pending',
          { timeoutMs: 30_000, what: `search ${id} to settle` },
        );
        expect(await statusOf(id)).toBe('succeeded');
      }
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 2, { reserves: 3, captures: 2, releases: 1 }));
    });
  });
});
