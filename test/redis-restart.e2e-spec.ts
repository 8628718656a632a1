import { QUEUE_NAMES } from '@dossier/contracts';
import { Api, QueueProbe, RedisServer, Stack, freePort, sql, waitFor, withFaults } from '@dossier/testing';

const PHONE = { phone: '+14155552671' };

interface Ready {
  status: string;
  checks: { queues: string; jobs: string; postgres: string };
}

interface Envelope {
  status: string;
  search_id: string;
}

async function readiness(url: string): Promise<{ status: number; body: Ready | null }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: (await res.json()) as Ready };
  } catch {
    return { status: 0, body: null };
  }
}

/** Starts a worker on the stack with a known health port; returns its /health/ready URL. */
async function startWorker(stack: Stack, env: Record<string, string> = {}): Promise<string> {
  const port = await freePort();
  await stack.startWorker({ WORKER_HEALTH_PORT: String(port), ...env });
  return `http://127.0.0.1:${port}/health/ready`;
}

describe('worker health: a Redis restart (its own redis-server), and jobs that wait unfinished', () => {
  describe('Redis killed and started again on the same port', () => {
    let redis: RedisServer;
    let stack: Stack;
    let api: Api;
    let ready: string;

    beforeAll(async () => {
      redis = await RedisServer.start();
      stack = await Stack.start({ label: 'restart', noWorker: true, env: { REDIS_URL: redis.url } });
      api = new Api(stack.baseUrl);
      ready = await startWorker(stack, { WORKER_READY_STALL_MS: '2000' });
    });
    afterAll(async () => {
      await stack?.stop();
      await redis?.stop();
    });

    it('shows the outage and the recovery on /health/ready, and the worker consumes again by itself', async () => {
      const { key } = await api.register();
      const before = await api.post<Envelope>('/v1/verify/phone', PHONE, { key });
      expect(before.status).toBe(200);
      expect(await readiness(ready)).toEqual({
        status: 200,
        body: { status: 'ok', checks: { queues: 'ok', jobs: 'ok', postgres: 'ok' } },
      });

      await redis.kill();
      const down = await waitFor(
        () => readiness(ready),
        (r) => r.status === 503,
        { timeoutMs: 20_000, what: 'the worker to report the outage' },
      );
      expect(down.body?.checks.queues).toBe('unavailable');

      await redis.restart();
      await waitFor(
        () => readiness(ready),
        (r) => r.status === 200,
        { timeoutMs: 30_000, what: 'the worker to report it consumes again' },
      );
      // The restarted Redis is empty (no persistence): the account lives in Postgres; a new lookup
      // goes through a fresh queue to the same worker process, which was never restarted.
      const after = await waitFor(
        () => api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'wait=20' } }),
        (r) => r.status !== 503,
        { timeoutMs: 30_000, what: 'the gateway to enqueue again' },
      );
      expect(after.status).toBe(200);
      expect(after.body.status).toBe('success');
      // By itself: the same process, and BullMQ reconnected without the stalled-worker restart.
      expect(stack.workers[0]!.running).toBe(true);
      expect(stack.workers[0]!.logs).not.toContain('restarting it');
    });
  });

  describe('Redis restarted with its data (append-only file) while a job waits', () => {
    let redis: RedisServer;
    let stack: Stack;
    let api: Api;
    let probe: QueueProbe;
    let ready: string;

    beforeAll(async () => {
      redis = await RedisServer.start(['--appendonly', 'yes', '--appendfsync', 'always']);
      stack = await Stack.start({ label: 'aof', noWorker: true, env: { REDIS_URL: redis.url } });
      api = new Api(stack.baseUrl);
      probe = new QueueProbe(stack.env['QUEUE_PREFIX']!, redis.url);
      // One slot, each job held 3 s before it settles: the second job waits while the first runs.
      ready = await startWorker(stack, {
        LOOKUP_QUEUES: 'phone',
        WORKER_CONCURRENCY: '1',
        ...withFaults({ holdLookups: { at: 'before', ms: 3000 } }),
        WORKER_READY_STALL_MS: '2000',
      });
    });
    afterAll(async () => {
      await probe?.close();
      await stack?.stop();
      await redis?.stop();
    });

    const status = async (id: string) =>
      (await sql<{ status: string }>(`SELECT status FROM searches WHERE id = $1`, [id]))[0]?.status;

    // BullMQ retries the first job's completion until Redis answers, so the worker finishes it as
    // soon as Redis is back: the outage is not taken for a stall, and the worker is not restarted.
    it('takes the outage for an outage, not a stall: the waiting job resumes on the same worker', async () => {
      const { key } = await api.register();
      const post = () => api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'respond-async' } });
      const running = await post();
      await waitFor(
        () => probe.state(QUEUE_NAMES.phone, running.body.search_id),
        (state) => state === 'active',
        { timeoutMs: 10_000, what: 'the first job to run' },
      );
      const waiting = await post();
      expect([running.status, waiting.status]).toEqual([202, 202]);
      expect(await probe.state(QUEUE_NAMES.phone, waiting.body.search_id)).toBe('waiting');

      // Redis goes away for longer than WORKER_READY_STALL_MS: the first job settles in Postgres
      // meanwhile (its hold is longer than the bound), and nothing finishes in BullMQ.
      await redis.kill();
      await waitFor(
        () => status(running.body.search_id),
        (s) => s === 'succeeded',
        { timeoutMs: 10_000, what: 'the running job to settle while Redis is down' },
      );
      await waitFor(
        () => readiness(ready),
        (r) => r.status === 503,
        { timeoutMs: 10_000, what: 'the worker to report the outage' },
      );

      // The job is in Redis's append-only file only: if the restart lost it, it would never succeed.
      await redis.restart();
      await waitFor(
        () => status(waiting.body.search_id),
        (s) => s === 'succeeded',
        { timeoutMs: 30_000, what: 'the waiting job to be taken after the restart' },
      );
      await waitFor(
        () => readiness(ready),
        (r) => r.status === 200,
        { timeoutMs: 30_000, what: 'the worker to be ready again' },
      );
      expect(stack.workers[0]!.logs).not.toContain('restarting it');
    });
  });

  describe('jobs waiting while the worker finishes none', () => {
    let stack: Stack;
    let api: Api;
    let ready: string;

    beforeAll(async () => {
      stack = await Stack.start({ label: 'stall', noWorker: true });
      api = new Api(stack.baseUrl);
      // One slot, each job held 6 s before it settles: a second job waits past the 1 s bound.
      ready = await startWorker(stack, {
        LOOKUP_QUEUES: 'phone',
        WORKER_CONCURRENCY: '1',
        ...withFaults({ holdLookups: { at: 'before', ms: 6000 } }),
        WORKER_READY_STALL_MS: '1000',
      });
    });
    afterAll(async () => {
      await stack?.stop();
    });

    it('is not ready (jobs: stalled) while a job waits past the bound and none finishes, and ready once they run', async () => {
      const { key } = await api.register();
      for (let i = 0; i < 2; i++) {
        const res = await api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'respond-async' } });
        expect(res.status).toBe(202);
      }
      const stalled = await waitFor(
        () => readiness(ready),
        (r) => r.status === 503,
        { timeoutMs: 10_000, what: 'the worker to report waiting jobs it does not finish' },
      );
      expect(stalled.body?.checks).toEqual({ queues: 'ok', jobs: 'stalled', postgres: 'ok' });
      // The first job finishes, the second is taken: nothing waits any more.
      await waitFor(
        () => readiness(ready),
        (r) => r.status === 200,
        { timeoutMs: 20_000, what: 'the worker to be ready again' },
      );
    });
  });
});
