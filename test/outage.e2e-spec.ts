import { QUEUE_NAMES } from '@dossier/contracts';
import {
  Api,
  AppProcess,
  DIST,
  QueueProbe,
  RedisServer,
  Stack,
  TcpProxy,
  freePort,
  ledgerState,
  settled,
  sql,
  testEnv,
  waitFor,
  type ApiResponse,
  withFaults,
} from '@dossier/testing';

const PHONE = { phone: '+14155552671' };
const SIGNUP = 10;

interface BatchBody {
  status: string;
  batch_id: string;
  items: Record<string, unknown>[];
}

interface Envelope {
  status: string;
  search_id: string;
  results: unknown[];
  credits_remaining: number;
  error?: { code: string; message: string };
}

/** A 503 as the contract wants it: the error envelope, `unavailable`, Retry-After, and nothing internal. */
function expectUnavailable(res: ApiResponse<unknown>): void {
  expect({ status: res.status, body: res.body }).toMatchObject({
    status: 503,
    body: { status: 'error', error: { code: 'unavailable' } },
  });
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expectNothingInternal(res);
}

function expectNothingInternal(res: ApiResponse<unknown>): void {
  for (const leak of [
    /\bat\s/, // a stack frame: "at fn (file:line)"
    /SELECT|INSERT|UPDATE |credit_ledger/,
    /\/work\/|node_modules|dist\//,
    /\.(ts|js):\d+/,
    /ECONN|Error:/,
  ]) {
    expect(res.text).not.toMatch(leak);
  }
}

describe('Redis and Postgres outages (gateway behind loopback proxies, worker direct)', () => {
  let redisProxy: TcpProxy;
  let pgProxy: TcpProxy;
  let stack: Stack;
  let api: Api;
  let queues: QueueProbe;

  beforeAll(async () => {
    redisProxy = await TcpProxy.forUrl(testEnv.redisUrl).start();
    pgProxy = await TcpProxy.forUrl(testEnv.databaseUrl).start();
    stack = await Stack.start({
      label: 'outage',
      env: { SIGNUP_CREDITS: String(SIGNUP) },
      gatewayEnv: { REDIS_URL: redisProxy.url(testEnv.redisUrl), DATABASE_URL: pgProxy.url(testEnv.databaseUrl) },
      // Each job takes a second, so a test can cut a connection while a lookup is in flight.
      workerEnv: withFaults({ holdLookups: { at: 'before', ms: 1000 } }),
    });
    api = new Api(stack.baseUrl);
    queues = new QueueProbe(stack.env['QUEUE_PREFIX']!);
  });
  afterEach(async () => {
    // Leave the gateway as the next test expects it: both backing services reachable again.
    redisProxy.restore();
    pgProxy.restore();
    await waitFor(
      () => api.get('/health/ready').then((r) => r.status),
      (s) => s === 200,
      { timeoutMs: 15_000, what: 'the gateway to be ready again' },
    );
  });
  afterAll(async () => {
    await queues?.close();
    await stack?.stop();
    await redisProxy?.close();
    await pgProxy?.close();
  });

  /** The account's one pending search, once the worker holds its job (held a second by its fault: holdLookups). */
  async function activeSearchOf(accountId: string): Promise<string> {
    const [row] = await waitFor(
      () => sql<{ id: string }>(`SELECT id FROM searches WHERE account_id = $1 AND status = 'pending'`, [accountId]),
      (rows) => rows.length === 1,
      { timeoutMs: 10_000, what: 'the lookup to be reserved' },
    );
    await waitFor(
      () => queues.state(QUEUE_NAMES.phone, row!.id),
      (s) => s === 'active',
      { timeoutMs: 10_000, what: `job ${row!.id} active` },
    );
    return row!.id;
  }

  /** After an outage: lookups work again (waits out the reconnects). */
  const waitForRecovery = (key: string) =>
    waitFor(
      () => api.post<Envelope>('/v1/verify/phone', PHONE, { key }),
      (r) => r.status === 200,
      { timeoutMs: 20_000, what: 'lookups to work again' },
    );

  it('answers 503 within a second when Redis is unreachable, charges nothing, and recovers', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const before = await ledgerState(accountId);
    const logsBefore = stack.gateway.logs.length;
    redisProxy.cut();

    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const res = await api.post<Envelope>('/v1/verify/phone', PHONE, { key });
      const tookMs = Date.now() - started;
      expectUnavailable(res);
      expect(tookMs).toBeLessThan(1000);
    }
    const idem = await api.post<Envelope>('/v1/verify/phone', PHONE, {
      key,
      headers: { 'idempotency-key': 'redis-down' },
    });
    expectUnavailable(idem);
    expectUnavailable(await api.post('/v1/batch', { requests: [{ kind: 'phone', input: PHONE }] }, { key }));
    expectUnavailable(await api.get('/v1/account', { key }));
    const ready = await api.get<{ checks: Record<string, string> }>('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks).toEqual({ postgres: 'ok', redis: 'unavailable' });
    expect((await api.get('/health/live')).status).toBe(200);

    const during = await ledgerState(accountId);
    expect(during).toEqual(before);
    expect(during).toMatchObject({ ledger_sum: during.balance, pending: 0 });
    // The queues' connection errors are lines of the app's log (one per 10 s at most), not raw stack traces.
    expect(stack.gateway.logs.slice(logsBefore)).not.toMatch(/^\s+at /m);

    redisProxy.restore();
    const ok = await waitForRecovery(key);
    expect(ok.body).toMatchObject({ status: 'success', credits_remaining: SIGNUP - 1 });
    const retried = await api.post<Envelope>('/v1/verify/phone', PHONE, {
      key,
      headers: { 'idempotency-key': 'redis-down' },
    });
    expect(retried.status).toBe(200);
    // Two lookups charged, each once. While the queues' connection was still coming back, a recovery probe
    // may have been reserved and then released (its add failed: 503, nothing charged): released in full.
    const after = await ledgerState(accountId);
    expect(after).toEqual(settled(SIGNUP - 2, { reserves: 2 + after.releases, captures: 2, releases: after.releases }));
  });

  it('answers 503 (not 500) when Postgres is unreachable, writes nothing half-way, and recovers', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const done = await api.post<Envelope>('/v1/verify/phone', PHONE, { key });
    expect(done.status).toBe(200);
    pgProxy.cut();

    expectUnavailable(await api.post('/v1/verify/phone', PHONE, { key }));
    expectUnavailable(await api.post('/v1/search/person', { name: 'Jane Doe' }, { key }));
    expectUnavailable(await api.post('/v1/batch', { requests: [{ kind: 'phone', input: PHONE }, PHONE] }, { key }));
    expectUnavailable(await api.get('/v1/account', { key }));
    expectUnavailable(await api.get(`/v1/searches/${done.body.search_id}`, { key }));
    expectUnavailable(await api.post('/v1/auth/login', { email: 'someone@example.com', password: 'whatever-it-is' }));
    const ready = await api.get<{ checks: Record<string, string> }>('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks).toEqual({ postgres: 'unavailable', redis: 'ok' });
    expect((await api.get('/health/live')).status).toBe(200);

    pgProxy.restore();
    await waitFor(
      () => api.get('/health/ready').then((r) => r.status),
      (s) => s === 200,
      { timeoutMs: 15_000, what: 'ready again' },
    );
    const ok = await waitForRecovery(key);
    expect(ok.body).toMatchObject({ status: 'success', credits_remaining: SIGNUP - 2 });
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 2, { reserves: 2, captures: 2, releases: 0 }));
  });

  it('still answers 200 when the gateway loses Redis while a lookup runs (the completion is read from Postgres)', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const answer = api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'wait=10' } });
    const id = await activeSearchOf(accountId);
    redisProxy.cut();

    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', search_id: id, credits_remaining: SIGNUP - 1 });
    expect(res.body.results).toHaveLength(1);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('answers from the completion event, not 503, when the gateway loses Postgres while a reserved lookup runs', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const answer = api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'wait=10' } });
    const id = await activeSearchOf(accountId);
    pgProxy.cut();

    const res = await answer;
    expectNothingInternal(res);
    // The worker still reaches Postgres and settles; its completion event carries the small outcome,
    // so the gateway answers without reading it back. (Were the outcome too large to carry, the
    // gateway would answer 202 with Location instead — never a 503 that claims nothing was charged.)
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', search_id: id, credits_remaining: SIGNUP - 1 });
    expect(res.body.results).toHaveLength(1);
    expect(res.headers.get('x-credits-spent')).toBe('1');

    pgProxy.restore();
    const final = await waitFor(
      () => api.get<Envelope>(`/v1/searches/${id}`, { key }),
      (r) => r.status === 200,
      { timeoutMs: 15_000, what: `search ${id} readable again` },
    );
    expect(final.body).toMatchObject({ status: 'success', search_id: id, credits_remaining: SIGNUP - 1 });
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('answers a batch pending, not 503, when the gateway loses Postgres while its reserved lookups run', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const body = { requests: [{ kind: 'phone', input: PHONE }] };
    const answer = api.post<BatchBody>('/v1/batch', body, { key, headers: { prefer: 'wait=10' } });
    const id = await activeSearchOf(accountId);
    pgProxy.cut();

    // Reserved and queued, so it may be charged: the batch is answered as far as it is known, pending.
    const res = await answer;
    expectNothingInternal(res);
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/v1/batches/${res.body.batch_id}`);
    expect(res.body.items).toEqual([expect.objectContaining({ status: 'pending', search_id: id })]);

    pgProxy.restore();
    const final = await waitFor(
      () => api.get<BatchBody>(`/v1/batches/${res.body.batch_id}`, { key }),
      (r) => r.status === 200,
      { timeoutMs: 15_000, what: `batch ${res.body.batch_id} done and readable again` },
    );
    expect(final.body.items).toEqual([
      expect.objectContaining({ status: 'success', search_id: id, credits_remaining: SIGNUP - 1 }),
    ]);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('says in JSON log lines that Redis is unreachable when started before it, is live meanwhile and stops on SIGTERM with exit 0', async () => {
    // Nothing listens there: every connection is refused.
    const env = { ...stack.env, REDIS_URL: `redis://127.0.0.1:${await freePort()}`, LOG_FORMAT: 'json' };
    const gateway = AppProcess.start('gateway-early', DIST.gateway, {
      ...env,
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      HOST: '127.0.0.1',
    });
    const healthPort = await freePort();
    const worker = AppProcess.start('worker-early', DIST.worker, {
      ...env,
      WORKER_HEALTH_PORT: String(healthPort),
      WORKER_HEALTH_HOST: '127.0.0.1',
    });
    try {
      for (const app of [gateway, worker]) {
        // Written as it happens (not buffered until Redis comes), once per 10 s, and no raw stack trace.
        await waitFor(
          () => Promise.resolve(app.logs),
          (logs) => /^\{.*"context":"queues","msg":"[a-z]+-lookup: connect ECONNREFUSED/m.test(logs),
          { timeoutMs: 15_000, what: `${app.name} to log that Redis is unreachable` },
        );
        expect(app.logs).not.toMatch(/^\s+at /m);
      }
      // The worker's health port answers while it waits: live, not ready (probes must not restart it).
      const health = new Api(`http://127.0.0.1:${healthPort}`);
      await waitFor(
        () => health.get('/health/live').catch(() => null),
        (res) => res?.status === 200,
        { timeoutMs: 10_000, what: 'the waiting worker to answer /health/live' },
      );
      expect(await health.get('/health/ready')).toMatchObject({
        status: 503,
        body: { status: 'unavailable', checks: { queues: 'unavailable' } },
      });
      // Both end at once with exit 0, neither SIGKILLed nor ended by the signal itself: a supervisor must
      // not read an orderly stop as a crash.
      expect(await gateway.stop('SIGTERM', 15_000)).toBe(0);
      expect(await worker.stop('SIGTERM', 15_000)).toBe(0);
      expect(worker.child.signalCode).toBeNull();
    } finally {
      await Promise.all([gateway.stop('SIGKILL'), worker.stop('SIGKILL')]);
    }
  });

  it('exits 0 on SIGTERM while its start-up waits for Redis to subscribe the reply channel, not once Redis is back', async () => {
    const env = {
      ...stack.env,
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
    };
    const gateway = AppProcess.start('gateway-subscribing', DIST.gateway, {
      ...env,
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      HOST: '127.0.0.1',
    });
    try {
      // The reply channel's subscription is the last start-up step, and it waits for Redis.
      await waitFor(
        () => Promise.resolve(gateway.logs),
        (logs) => /"context":"ResultWaiterService","msg":"reply channel: connect ECONNREFUSED/.test(logs),
        { timeoutMs: 15_000, what: 'the gateway to wait for Redis to subscribe its reply channel' },
      );
      // The stop ends that wait and the gateway closes, as a stop while it is created does. Before, the wait
      // ran under Nest's shutdown hooks, and a stop in part of it waited for it to finish: for as long as
      // Redis was away (a script sending SIGTERM at 13 moments of the start-up hung 3 times until SIGKILL).
      expect([await gateway.stop('SIGTERM', 15_000), gateway.child.signalCode]).toEqual([0, null]);
      expect(gateway.logs).toMatch(/stopped before it was up/);
    } finally {
      await gateway.stop('SIGKILL');
    }
  });

  it('exits 0 on SIGTERM while still creating the app (Postgres slow to answer), gateway and worker alike', async () => {
    const apps = await Promise.all(
      (['gateway', 'worker'] as const).map(async (kind) => {
        // A Postgres that takes the connection and says nothing until released: the app is held mid-create.
        const pg = (await TcpProxy.forUrl(testEnv.databaseUrl).start()).hold();
        const env = { ...stack.env, DATABASE_URL: pg.url(testEnv.databaseUrl), LOG_FORMAT: 'json', LOG_LEVEL: 'info' };
        const app =
          kind === 'gateway'
            ? AppProcess.start('gateway-creating', DIST.gateway, {
                ...env,
                PORT: String(await freePort()),
                METRICS_PORT: String(await freePort()),
                HOST: '127.0.0.1',
              })
            : AppProcess.start('worker-creating', DIST.worker, {
                ...env,
                WORKER_HEALTH_PORT: String(await freePort()),
                WORKER_HEALTH_HOST: '127.0.0.1',
              });
        return { pg, app };
      }),
    );
    try {
      for (const { pg, app } of apps) {
        await waitFor(
          () => Promise.resolve(pg.waiting),
          (n) => n > 0 || !app.running,
          { timeoutMs: 15_000, what: `${app.name} to connect to Postgres` },
        );
        // Node's default for the signal would end the process by it: a supervisor reads that as a crash.
        const exit = app.stop('SIGTERM', 15_000);
        pg.release();
        // With the app's name and output: a failure says which app, and why (failed once, loaded, unexplained).
        const code = await exit;
        expect({ app: app.name, code, signal: app.child.signalCode, logs: code === 0 ? '' : app.logs }).toEqual({
          app: app.name,
          code: 0,
          signal: null,
          logs: '',
        });
        expect(app.logs).toMatch(/stopped before it was up/);
      }
    } finally {
      for (const { pg, app } of apps) {
        await app.stop('SIGKILL');
        await pg.close();
      }
    }
  });

  it('exits 1 when started while Postgres is unreachable, naming DATABASE_URL (never its password) in a JSON line', async () => {
    const port = await freePort(); // nothing listens there
    const env = {
      ...stack.env,
      DATABASE_URL: `postgres://postgres:s3cret@127.0.0.1:${port}/dossier`,
      LOG_FORMAT: 'json',
    };
    const apps = [
      AppProcess.start('gateway-nodb', DIST.gateway, { ...env, PORT: String(await freePort()), HOST: '127.0.0.1' }),
      AppProcess.start('worker-nodb', DIST.worker, { ...env, WORKER_HEALTH_PORT: String(await freePort()) }),
    ];
    try {
      for (const app of apps) {
        expect(await app.exited).toBe(1);
        expect(app.logs).toMatch(
          new RegExp(
            `^\\{"level":"fatal".*"msg":"cannot reach Postgres at 127\\.0\\.0\\.1:${port}/dossier \\(DATABASE_URL\\): connect ECONNREFUSED`,
            'm',
          ),
        );
        expect(app.logs).not.toContain('s3cret');
        expect(app.logs).not.toMatch(/^\s+at /m);
      }
    } finally {
      await Promise.all(apps.map((app) => app.stop('SIGKILL')));
    }
  });

  it('shuts down on SIGTERM while Redis is unreachable (a rolling restart during the outage)', async () => {
    // A gateway of its own behind a proxy of its own: the shared gateway keeps its Redis.
    const proxy = await TcpProxy.forUrl(testEnv.redisUrl).start();
    try {
      const { app, baseUrl } = await stack.startGateway({ REDIS_URL: proxy.url(testEnv.redisUrl) });
      proxy.cut();
      await waitFor(
        () => new Api(baseUrl).get('/health/ready').then((r) => r.status),
        (s) => s === 503,
        { timeoutMs: 10_000, what: 'the gateway to see the outage' },
      );
      // SIGKILL after 15 s: an exit code of null. The reply channel's UNSUBSCRIBE waited for Redis to come back.
      expect([await app.stop('SIGTERM', 15_000), app.child.signalCode]).toEqual([0, null]);
    } finally {
      await proxy.close();
    }
  });
});

describe('stopping during a Redis outage (gateway and worker behind one loopback proxy)', () => {
  it('lets the gateway and the worker exit 0 on SIGTERM while Redis is unreachable, within the worker grace', async () => {
    const redisProxy = await TcpProxy.forUrl(testEnv.redisUrl).start();
    const stack = await Stack.start({
      label: 'outage-stop',
      env: { SIGNUP_CREDITS: String(SIGNUP), REDIS_URL: redisProxy.url(testEnv.redisUrl) },
      workerEnv: { WORKER_SHUTDOWN_GRACE_MS: '1000' },
    });
    try {
      const api = new Api(stack.baseUrl);
      const { key } = await api.register(SIGNUP);
      expect((await api.post('/v1/verify/phone', PHONE, { key })).status).toBe(200);
      redisProxy.cut();
      // Both have noticed: the gateway's readiness names Redis, the worker's its queues.
      await waitFor(
        () => api.get<{ checks: Record<string, string> }>('/health/ready'),
        (r) => r.status === 503 && r.body.checks['redis'] === 'unavailable',
        { timeoutMs: 10_000, what: 'the gateway to see the outage' },
      );
      await waitFor(
        () => fetch(`${stack.workerUrls[0]}/health/ready`).then((r) => r.json() as Promise<{ checks: object }>),
        (body) => (body.checks as Record<string, string>)['queues'] === 'unavailable',
        { timeoutMs: 10_000, what: 'the worker to see the outage' },
      );

      // stop() SIGKILLs after 15 s (exit code null): 0 means each left by itself. Before, the gateway's
      // reply-channel UNSUBSCRIBE and the worker's webhook and maintenance consumers waited for Redis.
      const [gateway, worker] = await Promise.all([
        stack.gateway.stop('SIGTERM', 15_000),
        stack.workers[0]!.stop('SIGTERM', 15_000),
      ]);
      expect({ gateway, worker }).toEqual({ gateway: 0, worker: 0 });
    } finally {
      await stack.stop();
      await redisProxy.close();
    }
  });
});

describe('a Redis that answers but refuses writes (its own redis-server, gateway only)', () => {
  let redis: RedisServer;
  let stack: Stack;
  let api: Api;

  beforeAll(async () => {
    redis = await RedisServer.start(['--maxmemory-policy', 'noeviction']);
    stack = await Stack.start({ label: 'refusing', noWorker: true, env: { REDIS_URL: redis.url } });
    api = new Api(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
    await redis?.stop();
  });

  // Full under noeviction (the policy BullMQ needs): OOM. A primary demoted to a replica by a failover: READONLY.
  it.each([
    ['is full (OOM)', 'CONFIG SET maxmemory 1', 'CONFIG SET maxmemory 0'],
    ['became a read-only replica (READONLY)', 'REPLICAOF 127.0.0.1 1', 'REPLICAOF NO ONE'],
  ])(
    'answers 503 with Retry-After, not 500, while Redis %s, charges nothing, and recovers',
    async (_what, refuse, accept) => {
      const { key, accountId } = await api.register();
      const before = await ledgerState(accountId);
      expect((await redis.command(refuse)).startsWith('+OK')).toBe(true);
      try {
        for (const res of [
          await api.get('/v1/account', { key }),
          await api.post('/v1/verify/phone', PHONE, { key }),
          await api.post('/v1/auth/login', { email: 'nobody@example.com', password: 'correct horse battery' }),
        ]) {
          expectUnavailable(res);
        }
        expect(await ledgerState(accountId)).toEqual(before);
      } finally {
        await redis.command(accept);
      }
      expect((await api.get('/v1/account', { key })).status).toBe(200);
    },
  );
});
