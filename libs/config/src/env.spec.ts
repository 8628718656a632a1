import { ConfigError, loadGatewayConfig, loadWorkerConfig } from './env';
import { redisOptionsFromUrl } from './redis';

describe('config', () => {
  it('applies the documented defaults', () => {
    const gw = loadGatewayConfig({});
    expect(gw).toMatchObject({
      port: 3000,
      queuePrefix: 'dossier',
      signupCredits: 100,
      costs: { person: 1, company: 1, email: 1, phone: 1 },
      rateLimit: { rps: 50, burst: 100 },
      syncWaitMaxS: 60,
      syncWaitDefaultS: 10,
      admin: null,
      redisUrl: 'redis://127.0.0.1:6379',
      http: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 72_000,
        timeoutCheckIntervalMs: 1000,
      },
    });
    const wk = loadWorkerConfig({});
    expect(wk.kinds).toEqual(['person', 'company', 'email', 'phone']);
  });

  it('reads LOOKUP_QUEUES and per-kind concurrency', () => {
    const wk = loadWorkerConfig({
      LOOKUP_QUEUES: 'phone, email',
      WORKER_CONCURRENCY: '4',
      WORKER_CONCURRENCY_PHONE: '32',
    });
    expect(wk.kinds).toEqual(['phone', 'email']);
    expect(wk.concurrency).toEqual({ person: 4, company: 4, email: 4, phone: 32 });
  });

  it('reads the HTTP timeouts and checks them often enough to end a stalled request near its deadline', () => {
    const gw = loadGatewayConfig({
      HTTP_HEADERS_TIMEOUT_MS: '500',
      HTTP_REQUEST_TIMEOUT_MS: '1000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '5000',
    });
    expect(gw.http).toEqual({
      headersTimeoutMs: 500,
      requestTimeoutMs: 1000,
      keepAliveTimeoutMs: 5000,
      timeoutCheckIntervalMs: 50,
    });
    expect(loadGatewayConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000' }).http.timeoutCheckIntervalMs).toBe(500);
  });

  it('serves metrics with the API unless METRICS_PORT names a port of their own', () => {
    expect(loadGatewayConfig({}).metrics).toBeNull();
    expect(loadGatewayConfig({ METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464, host: '0.0.0.0' });
    expect(loadGatewayConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' }).metrics).toEqual({
      port: 9464,
      host: '10.0.0.5',
    });
  });

  it('ignores the test hold outside NODE_ENV=test', () => {
    expect(loadWorkerConfig({ WORKER_TEST_HOLD: 'before:100' }).testHold).toBeNull();
    expect(loadWorkerConfig({ NODE_ENV: 'test', WORKER_TEST_HOLD: 'after:100' }).testHold).toEqual({
      at: 'after',
      ms: 100,
    });
  });

  it.each([
    [{ PORT: 'x' }, 'PORT'],
    [{ QUEUE_PREFIX: 'a:b' }, 'QUEUE_PREFIX'],
    [{ COST_PHONE: '-1' }, 'COST_PHONE'],
    [{ SYNC_WAIT_DEFAULT_S: '90' }, 'SYNC_WAIT_DEFAULT_S'],
    [{ ADMIN_PASSWORD: 'x' }, 'ADMIN_USER/ADMIN_PASSWORD'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ HTTP_REQUEST_TIMEOUT_MS: '0' }, 'HTTP_REQUEST_TIMEOUT_MS'],
    [{ HTTP_KEEP_ALIVE_TIMEOUT_MS: 'soon' }, 'HTTP_KEEP_ALIVE_TIMEOUT_MS'],
    [{ HTTP_HEADERS_TIMEOUT_MS: '40000' }, 'HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS'],
    [{ METRICS_PORT: 'x' }, 'METRICS_PORT'],
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT'],
    [{ PORT: '8080', METRICS_PORT: '8080' }, 'METRICS_PORT: must differ from PORT'],
  ])('rejects %j naming %s', (env, name) => {
    expect(() => loadGatewayConfig(env)).toThrow(ConfigError);
    expect(() => loadGatewayConfig(env)).toThrow(name);
  });

  it('rejects unknown lookup kinds', () => {
    expect(() => loadWorkerConfig({ LOOKUP_QUEUES: 'phone,fax' })).toThrow(/LOOKUP_QUEUES.*fax/s);
    expect(() => loadWorkerConfig({ LOOKUP_QUEUES: ',' })).toThrow(/LOOKUP_QUEUES/);
  });

  it('parses Redis URLs', () => {
    expect(redisOptionsFromUrl('redis://user:p%40ss@cache:6380/2')).toMatchObject({
      host: 'cache',
      port: 6380,
      db: 2,
      username: 'user',
      password: 'p@ss',
    });
    expect(redisOptionsFromUrl('rediss://h')).toMatchObject({ host: 'h', port: 6379, tls: {} });
  });
});
