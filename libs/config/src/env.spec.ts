import {
  ConfigError,
  ENV_NAMES,
  loadBenchConfig,
  loadCliConfig,
  loadGatewayConfig,
  loadProviderSettings,
  loadWorkerConfig,
  queuePrefixFor,
} from './env';
import { RATE_FORMAT } from '@dossier/domain';

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

  it('reads national phone numbers in DEFAULT_REGION: US unless set, any case, UK as GB, a region with a numbering plan only', () => {
    expect([loadGatewayConfig({}).defaultRegion, loadCliConfig({}).defaultRegion]).toEqual(['US', 'US']);
    expect(loadGatewayConfig({ DEFAULT_REGION: ' gb ' }).defaultRegion).toBe('GB');
    expect(loadCliConfig({ DEFAULT_REGION: 'UK' }).defaultRegion).toBe('GB');
    for (const region of ['XX', 'AQ', 'USA', 'United States']) {
      expect(() => loadGatewayConfig({ DEFAULT_REGION: region })).toThrow(
        `DEFAULT_REGION: must be a region code whose phone numbering plan is known, such as US or GB, got ${JSON.stringify(region)}`,
      );
      expect(() => loadCliConfig({ DEFAULT_REGION: region })).toThrow(ConfigError);
    }
  });

  it('reads LOOKUP_QUEUES and per-kind concurrency', () => {
    const wk = loadWorkerConfig({
      LOOKUP_QUEUES: 'phone, email',
      WORKER_CONCURRENCY: '4',
      WORKER_CONCURRENCY_PHONE: '32',
    });
    expect(wk.kinds).toEqual(['phone', 'email']);
    expect(wk.concurrency).toEqual({ person: 4, company: 4, email: 4, phone: 32 });
    // Unset, each kind has its own default: searches that wait on upstreams run many at once (ADR 0061).
    expect(loadWorkerConfig({}).concurrency).toEqual({ person: 256, company: 256, email: 16, phone: 16 });
    expect(loadWorkerConfig({ WORKER_CONCURRENCY_COMPANY: '8' }).concurrency).toEqual({
      person: 256,
      company: 8,
      email: 16,
      phone: 16,
    });
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

  it.each([
    [{ PORT: 'x' }, 'PORT'],
    [{ QUEUE_PREFIX: 'a:b' }, 'QUEUE_PREFIX'],
    [{ COST_PHONE: '-1' }, 'COST_PHONE'],
    [{ SYNC_WAIT_DEFAULT_S: '90' }, 'SYNC_WAIT_DEFAULT_S'],
    [{ ADMIN_PASSWORD: 'x' }, 'ADMIN_USER/ADMIN_PASSWORD'],
    [{ ADMIN_USER: 'ops:team', ADMIN_PASSWORD: 'x' }, 'ADMIN_USER: must not contain ":"'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'redis://127.0.0.1:6379/cache' }, 'REDIS_URL: must be redis://'],
    [{ REDIS_URL: 'http://127.0.0.1:6379' }, 'REDIS_URL: must be redis://'],
    [{ HTTP_REQUEST_TIMEOUT_MS: '0' }, 'HTTP_REQUEST_TIMEOUT_MS'],
    [{ HTTP_KEEP_ALIVE_TIMEOUT_MS: 'soon' }, 'HTTP_KEEP_ALIVE_TIMEOUT_MS'],
    [{ METRICS_PORT: 'x' }, 'METRICS_PORT'],
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT'],
    [{ LOGIN_FAILURE_LIMIT: '10 per minute' }, 'LOGIN_FAILURE_LIMIT: expected calls/period such as 600/300s'],
    [{ LOGIN_FAILURE_LIMIT: '0/10m' }, 'LOGIN_FAILURE_LIMIT'],
    [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '-1' }, 'TRUST_PROXY'],
  ])('rejects %j naming %s', (env, name) => {
    expect(() => loadGatewayConfig(env)).toThrow(ConfigError);
    expect(() => loadGatewayConfig(env)).toThrow(name);
  });

  it.each([
    [{ PORT: '80 80' }, 'PORT: expected a whole number, got "80 80"'],
    [{ PORT: '70000' }, 'got "70000"'],
    [
      { LOG_LEVEL: 'verbose' },
      'LOG_LEVEL: Invalid option: expected one of "debug"|"info"|"warn"|"error", got "verbose"',
    ],
    [{ TRUST_PROXY: 'yes' }, 'got "yes"'],
    [{ SYNC_WAIT_DEFAULT_S: '90' }, 'SYNC_WAIT_DEFAULT_S: 90 must not exceed SYNC_WAIT_MAX_S (60)'],
    [
      { HTTP_HEADERS_TIMEOUT_MS: '40000' },
      'HTTP_HEADERS_TIMEOUT_MS: 40000 must not exceed HTTP_REQUEST_TIMEOUT_MS (30000)',
    ],
    [{ PORT: '8080', METRICS_PORT: '8080' }, 'METRICS_PORT: 8080 must differ from PORT'],
    [
      { HOST: '0.0.0.0:3000' },
      'HOST: must be an IP address or a host name, e.g. 0.0.0.0, :: or localhost, got "0.0.0.0:3000"',
    ],
    [{ HOST: 'http://localhost' }, 'HOST: must be an IP address or a host name'],
    [{ METRICS_HOST: 'any host' }, 'METRICS_HOST: must be an IP address or a host name'],
  ])('names the bad value of %j: %s', (env, message) => {
    expect(() => loadGatewayConfig(env)).toThrow(message);
  });

  it('listens on an IP address or a host name, and refuses anything else before listening', () => {
    for (const host of ['0.0.0.0', '::', '127.0.0.1', '::1', 'fe80::1%eth0', 'localhost', 'api.internal', 'gw-1']) {
      expect(loadGatewayConfig({ HOST: host }).host).toBe(host);
    }
    expect(() => loadWorkerConfig({ WORKER_HEALTH_HOST: '[::1]' })).toThrow(
      'WORKER_HEALTH_HOST: must be an IP address or a host name',
    );
    expect(loadWorkerConfig({ WORKER_HEALTH_HOST: '::1' }).healthHost).toBe('::1');
  });

  // The limiter's Redis key lives as long as a bucket takes to refill (burst / rate): past what Redis takes as an
  // expiry every request failed with 500, so a value that cannot work is refused at start-up.
  it('refuses a request or login rate no limiter can hold, naming the variable and the range it takes', () => {
    for (const bad of ['0.000000000001', '0.0009', '0', '1000001', '99999999999999999999']) {
      expect(() => loadGatewayConfig({ RATE_LIMIT_RPS: bad })).toThrow(
        `RATE_LIMIT_RPS: must be from 0.001 to 1000000 requests a second, got "${bad}"`,
      );
    }
    expect(loadGatewayConfig({ RATE_LIMIT_RPS: '0.001', RATE_LIMIT_BURST: '10000000' }).rateLimit).toEqual({
      rps: 0.001,
      burst: 10_000_000,
    });
    expect(loadGatewayConfig({ RATE_LIMIT_RPS: '1000000' }).rateLimit.rps).toBe(1_000_000);
    for (const bad of ['10/99999999999h', '10/8785h', '10/0ms', '1000000001/1s']) {
      expect(() => loadGatewayConfig({ LOGIN_FAILURE_LIMIT: bad })).toThrow(
        `LOGIN_FAILURE_LIMIT: expected ${RATE_FORMAT}, got "${bad}"`,
      );
    }
    expect(RATE_FORMAT).toMatch(/1 to 1000000000 calls.*1ms to 8784h/);
    expect(loadGatewayConfig({ LOGIN_FAILURE_LIMIT: '1000000000/8784h' }).loginFailureLimit).toEqual({
      max: 1_000_000_000,
      perMs: 8784 * 3_600_000,
    });
  });

  it("names a worker variable's bad value too, and a long one cut short", () => {
    expect(() => loadWorkerConfig({ WORKER_MAINTENANCE: 'maybe' })).toThrow(/WORKER_MAINTENANCE: .*, got "maybe"/);
    const long = 'x'.repeat(500);
    expect(() => loadWorkerConfig({ WORKER_CONCURRENCY: long })).toThrow(`got "${'x'.repeat(80)}…" (500 characters)`);
  });

  it('never repeats the value of a secret, nor of a URL that may hold a password', () => {
    for (const [name, value] of [
      ['WEBHOOK_SECRET_KEY', 'short-secret-key'],
      ['DATABASE_URL', 'postgres://u:secret@db:port/dossier'],
      ['REDIS_URL', 'redis://:secret@cache/zero'],
    ] as const) {
      const env = { [name]: value };
      let message = '';
      try {
        loadGatewayConfig(env);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toContain(`invalid environment:\n  ${name}: `);
      expect(message).not.toContain('secret');
    }
    expect(() => loadGatewayConfig({ DATABASE_URL: 'not a url' })).toThrow(
      'DATABASE_URL: Invalid URL (value not shown)',
    );
  });

  it('trusts no proxy by default, one for TRUST_PROXY=true, and the count given', () => {
    expect(loadGatewayConfig({}).trustProxy).toBe(0);
    expect(loadGatewayConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(0);
    expect(loadGatewayConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadGatewayConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
  });

  it('limits failed logins to 10 per 10 min per account by default; LOGIN_FAILURE_LIMIT sets another rate', () => {
    expect(loadGatewayConfig({}).loginFailureLimit).toEqual({ max: 10, perMs: 600_000 });
    expect(loadGatewayConfig({ LOGIN_FAILURE_LIMIT: ' 5/1h ' }).loginFailureLimit).toEqual({
      max: 5,
      perMs: 3_600_000,
    });
  });

  it('keeps finished jobs by age and count, never longer than RESULTS_TTL_DAYS', () => {
    expect(loadGatewayConfig({}).jobRetention).toEqual({
      completed: { age: 3600, count: 5000 },
      failed: { age: 7 * 86_400, count: 10_000 },
    });
    const short = loadWorkerConfig({
      RESULTS_TTL_DAYS: '1',
      JOB_KEEP_COMPLETED_S: '2',
      JOB_KEEP_COMPLETED_COUNT: '7',
      JOB_KEEP_FAILED_COUNT: '9',
    });
    expect(short.jobRetention).toEqual({ completed: { age: 2, count: 7 }, failed: { age: 86_400, count: 9 } });
    expect(
      loadGatewayConfig({ RESULTS_TTL_DAYS: '2', JOB_KEEP_COMPLETED_S: '999999' }).jobRetention.completed.age,
    ).toBe(2 * 86_400);
  });

  it('reads REDIS_CLUSTER_NODES and needs a {hash tag} prefix with it: {dossier} by default, an explicit one kept', () => {
    expect(loadGatewayConfig({}).redis).toEqual({ url: 'redis://127.0.0.1:6379', clusterNodes: null });
    const cluster = loadWorkerConfig({ REDIS_CLUSTER_NODES: 'r1:7000, 10.0.0.2:7001' });
    expect(cluster.redis.clusterNodes).toEqual([
      { host: 'r1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
    ]);
    expect(cluster.queuePrefix).toBe('{dossier}');
    expect(loadGatewayConfig({ REDIS_CLUSTER_NODES: 'r1:7000', QUEUE_PREFIX: 'prod-{dq}' }).queuePrefix).toBe(
      'prod-{dq}',
    );
    expect(loadGatewayConfig({ QUEUE_PREFIX: 'plain' }).queuePrefix).toBe('plain');
    for (const prefix of ['plain', 'x{}y', 'x}{y']) {
      expect(() => loadCliConfig({ REDIS_CLUSTER_NODES: 'r1:7000', QUEUE_PREFIX: prefix })).toThrow(
        /QUEUE_PREFIX: with REDIS_CLUSTER_NODES it must contain a non-empty \{hash tag\}/,
      );
    }
    expect(() => loadGatewayConfig({ REDIS_CLUSTER_NODES: 'r1' })).toThrow(/REDIS_CLUSTER_NODES/);
    expect(() => loadBenchConfig({ REDIS_CLUSTER_NODES: 'r1:7000' })).toThrow(/REDIS_CLUSTER_NODES/);
  });

  it("gives each queue a hash tag of its own on a cluster, and leaves one Redis's prefix as it is", () => {
    const queues = ['person-lookup', 'company-lookup', 'email-lookup', 'phone-lookup', 'webhook-delivery'];
    const prefixes = (env: Record<string, string>) =>
      queues.map((queue) => queuePrefixFor(loadWorkerConfig(env), queue));
    expect(prefixes({ REDIS_CLUSTER_NODES: 'r1:7000' })).toEqual([
      '{dossier-person-lookup}',
      '{dossier-company-lookup}',
      '{dossier-email-lookup}',
      '{dossier-phone-lookup}',
      '{dossier-webhook-delivery}',
    ]);
    // The operator's text around the tag stays; only the tag (what the slot is hashed from) changes.
    expect(
      queuePrefixFor(loadGatewayConfig({ REDIS_CLUSTER_NODES: 'r1:7000', QUEUE_PREFIX: 'prod-{dq}x' }), 'maintenance'),
    ).toBe('prod-{dq-maintenance}x');
    // One Redis: every queue keeps QUEUE_PREFIX exactly, a hash tag in it included (no key moves).
    expect(prefixes({})).toEqual(queues.map(() => 'dossier'));
    expect(prefixes({ QUEUE_PREFIX: '{dossier}' })).toEqual(queues.map(() => '{dossier}'));
  });

  it('reads WEBHOOK_SECRET_KEY as 32 bytes of hex or base64, refusing any other length', () => {
    const hex = '00'.repeat(31) + 'ff';
    expect(loadGatewayConfig({ WEBHOOK_SECRET_KEY: hex }).webhooks).toEqual({
      key: Buffer.from(hex, 'hex'),
      allowPrivate: false,
      timeoutMs: 10_000,
      dnsServers: null,
      retryBaseMs: 30_000,
    });
    const b64 = Buffer.alloc(32, 7).toString('base64');
    expect(loadWorkerConfig({ WEBHOOK_SECRET_KEY: b64, WEBHOOK_ALLOW_PRIVATE: 'true' }).webhooks).toEqual({
      key: Buffer.alloc(32, 7),
      allowPrivate: true,
      timeoutMs: 10_000,
      retryBaseMs: 30_000,
      concurrency: 16,
      dnsServers: null,
    });
    // The gateway queues the batch.completed of a batch it completes itself, retried as long.
    expect(loadGatewayConfig({ WEBHOOK_RETRY_BASE_MS: '50' }).webhooks).toMatchObject({ retryBaseMs: 50 });
    expect(loadGatewayConfig({}).webhooks.key).toBeNull();
  });

  it('resolves webhook hosts through WEBHOOK_DNS_SERVERS when set (IP addresses, a port or not), in every NODE_ENV', () => {
    const dns = { WEBHOOK_DNS_SERVERS: '127.0.0.1:5353, [::1]:53,192.0.2.53' };
    const servers = ['127.0.0.1:5353', '[::1]:53', '192.0.2.53'];
    expect(loadGatewayConfig(dns).webhooks.dnsServers).toEqual(servers);
    expect(loadWorkerConfig({ ...dns, NODE_ENV: 'production' }).webhooks.dnsServers).toEqual(servers);
    expect(() => loadWorkerConfig({ WEBHOOK_DNS_SERVERS: 'dns.example:53' })).toThrow(
      /WEBHOOK_DNS_SERVERS: expected IP addresses/,
    );
  });

  it('has no test switches: the former test-only variables are unknown, and ignored', () => {
    const former = {
      WEBHOOK_TEST_ATTEMPTS: '2',
      WEBHOOK_TEST_DNS_SERVERS: '127.0.0.1:5353',
      UPSTREAM_TEST_DNS_SERVERS: '127.0.0.1:5353',
      WORKER_TEST_HOLD: 'before:100',
      GATEWAY_TEST_HOLD_ENQUEUE_MS: '100',
      GATEWAY_TEST_LOSE_ENQUEUE_REPLY_MS: '100',
      GATEWAY_TEST_HOLD_BATCH_VOID_MS: '100',
      WORKER_TEST_FAIL_EVENTS: 'true',
      NODE_ENV: 'test',
    };
    expect(loadGatewayConfig(former)).toEqual(loadGatewayConfig({ NODE_ENV: 'test' }));
    expect(loadWorkerConfig(former)).toEqual(loadWorkerConfig({ NODE_ENV: 'test' }));
    for (const name of Object.keys(former).filter((n) => n !== 'NODE_ENV')) {
      expect([...ENV_NAMES.gateway, ...ENV_NAMES.worker]).not.toContain(name);
    }
    expect(() => loadGatewayConfig({ WEBHOOK_SECRET_KEY: 'abcd' })).toThrow(/WEBHOOK_SECRET_KEY: must be 32 bytes/);
    expect(() => loadWorkerConfig({ WEBHOOK_SECRET_KEY: Buffer.alloc(16).toString('base64') })).toThrow(ConfigError);
  });

  it("connects to HTTP upstreams within UPSTREAM_CONNECT_TIMEOUT_MS (3 s by default), through UPSTREAM_DNS_SERVERS or the system's resolver", () => {
    expect(loadWorkerConfig({}).upstreamNetwork).toEqual({ connectTimeoutMs: 3000, dnsServers: null });
    expect(loadWorkerConfig({ UPSTREAM_CONNECT_TIMEOUT_MS: '500' }).upstreamNetwork.connectTimeoutMs).toBe(500);
    for (const bad of ['99', '60001', '2s', '0x10'])
      expect(() => loadWorkerConfig({ UPSTREAM_CONNECT_TIMEOUT_MS: bad })).toThrow(/UPSTREAM_CONNECT_TIMEOUT_MS/);
    expect(loadWorkerConfig({ UPSTREAM_DNS_SERVERS: '127.0.0.1:5353' }).upstreamNetwork.dnsServers).toEqual([
      '127.0.0.1:5353',
    ]);
    expect(() => loadWorkerConfig({ UPSTREAM_DNS_SERVERS: 'dns.example' })).toThrow(
      /UPSTREAM_DNS_SERVERS: expected IP addresses/,
    );
  });

  it('caps the heap growth of the gateway and worker at 10 % unless HEAP_GROWING_PERCENT says otherwise (0: V8 decides)', () => {
    expect(loadGatewayConfig({}).heapGrowingPercent).toBe(10);
    expect(loadWorkerConfig({}).heapGrowingPercent).toBe(10);
    expect(loadWorkerConfig({ HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(() => loadGatewayConfig({ HEAP_GROWING_PERCENT: '-5' })).toThrow(/HEAP_GROWING_PERCENT/);
    expect(() => loadWorkerConfig({ HEAP_GROWING_PERCENT: 'ten' })).toThrow(ConfigError);
  });

  it('takes numbers written in digits only, and a blank value as unset', () => {
    // A blank cost had been read as 0: free lookups, and no error at boot.
    expect(loadGatewayConfig({ COST_PHONE: ' ', SIGNUP_CREDITS: '  ' }).costs.phone).toBe(1);
    expect(loadGatewayConfig({ COST_PHONE: ' 3 ' }).costs.phone).toBe(3);
    for (const bad of ['0x50', '3e3', '1.5', '-1', '80 80', 'Infinity']) {
      expect(() => loadGatewayConfig({ PORT: bad })).toThrow(/PORT: expected a whole number|PORT: Too/);
    }
    expect(loadGatewayConfig({ RATE_LIMIT_RPS: '0.5' }).rateLimit.rps).toBe(0.5);
    for (const bad of ['1e2', '0x10', '.5', 'fast'])
      expect(() => loadGatewayConfig({ RATE_LIMIT_RPS: bad })).toThrow(/RATE_LIMIT_RPS: expected a decimal number/);
    expect(() => loadWorkerConfig({ WORKER_SHUTDOWN_GRACE_MS: '1e4' })).toThrow(/WORKER_SHUTDOWN_GRACE_MS/);
  });

  it('reads a blank provider setting as unset, as every other variable (a blank key must not switch a provider on)', () => {
    const env = { HUNTER_API_KEY: '  ', HUNTER_BASE_URL: '', PDL_API_KEY: 'k' };
    expect(loadProviderSettings(['HUNTER_API_KEY', 'HUNTER_BASE_URL', 'PDL_API_KEY'], env)).toEqual({
      HUNTER_API_KEY: undefined,
      HUNTER_BASE_URL: undefined,
      PDL_API_KEY: 'k',
    });
  });

  it('rejects unknown lookup kinds', () => {
    expect(() => loadWorkerConfig({ LOOKUP_QUEUES: 'phone,fax' })).toThrow(/LOOKUP_QUEUES.*fax/s);
    expect(() => loadWorkerConfig({ LOOKUP_QUEUES: ',' })).toThrow(/LOOKUP_QUEUES/);
  });
});
