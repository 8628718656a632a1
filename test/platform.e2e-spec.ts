import { AppProcess, Api, DIST, Stack, testEnv, waitFor } from '@dossier/testing';

type ErrorBody = { status: string; error: { code: string; details?: { field: string }[] } };
type Envelope = { status: string; search_id: string; results: unknown[] };

describe('rate limits held in Redis across gateway processes', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await Stack.start({
      label: 'ratelimit',
      noWorker: true,
      env: { RATE_LIMIT_RPS: '0.2', RATE_LIMIT_BURST: '4', REQUIRE_PERMISSIBLE_PURPOSE: 'true' },
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('shares one bucket per key between two gateways, answers 429 + Retry-After, and keeps other keys apart', async () => {
    const second = await stack.startGateway();
    const a = new Api(stack.baseUrl);
    const b = new Api(second.baseUrl);
    const { key } = await a.register(); // register is limited per address, not per key
    const remaining: number[] = [];
    for (const api of [a, b, a, b]) {
      const res = await api.get('/v1/account', { key });
      expect(res.status).toBe(200);
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
    }
    expect(remaining).toEqual([3, 2, 1, 0]);
    const limited = await b.get<ErrorBody>('/v1/account', { key });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('ratelimit-limit')).toBe('4');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    const limitedToo = await a.get('/v1/account', { key });
    expect(limitedToo.status).toBe(429);
    // The router decodes percent-escapes: the same route under an encoded path is the same bucket.
    const encoded = await a.get<ErrorBody>('/%761/account', { key });
    expect(encoded.status).toBe(429);
    expect(encoded.body.error.code).toBe('rate_limited');

    // register is limited per client address (2 of its 4 tokens used so far); the new key has its own bucket
    const other = await a.register();
    const res = await a.get('/v1/account', { key: other.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-remaining')).toBe('3');

    // Guessing keys spends the address bucket (2 of 4 tokens left after the two registrations).
    const guesses = [];
    for (let i = 0; i < 3; i++) guesses.push(await b.get('/v1/account', { key: `dsk_${String(i).repeat(40)}` }));
    expect(guesses.map((g) => g.status)).toEqual([401, 401, 429]);
    expect(guesses[0]!.headers.get('ratelimit-remaining')).toBe('1');
    const encodedLogin = await b.post<ErrorBody>('/%761/auth/login', {
      email: 'x@example.com',
      password: 'guess-1234',
    });
    expect(encodedLogin.status).toBe(429);
  });

  it('gives answers made before the guards (404, 405, 415, 413, invalid_json) the address bucket and its RateLimit-* headers', async () => {
    // A gateway of its own prefix: buckets of its own, 4 tokens per address.
    const gateway = await stack.startGateway({ QUEUE_PREFIX: `${stack.env['QUEUE_PREFIX']}-preguard` });
    const api = new Api(gateway.baseUrl);
    const json = (raw: string, contentType = 'application/json') => ({ raw, contentType });
    const answers = [
      await api.get<ErrorBody>('/v1/no-such-thing'),
      await api.request<ErrorBody>('DELETE', '/v1/account'),
      await api.request<ErrorBody>('POST', '/v1/verify/phone', json('phone=1', 'text/plain')),
      await api.request<ErrorBody>('POST', '/v1/verify/phone', json(`{"pad":"${'x'.repeat(70 * 1024)}"}`)),
      await api.request<ErrorBody>('POST', '/v1/verify/phone', json('{"phone":')),
    ];
    expect(answers.map((a) => [a.status, a.body.error.code])).toEqual([
      [404, 'not_found'],
      [405, 'method_not_allowed'],
      [415, 'unsupported_media_type'],
      [413, 'payload_too_large'],
      [429, 'rate_limited'],
    ]);
    expect(answers.map((a) => a.headers.get('ratelimit-remaining'))).toEqual(['3', '2', '1', '0', '0']);
    for (const a of answers) {
      expect(a.headers.get('ratelimit-limit')).toBe('4');
      expect(Number(a.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    }
    expect(Number(answers[4]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Outside /v1 nothing is limited, and nothing carries the headers.
    const health = await api.get('/health/live');
    expect(health.status).toBe(200);
    expect(health.headers.get('ratelimit-limit')).toBeNull();
    const outside = await api.get<ErrorBody>('/no-such-thing');
    expect(outside.status).toBe(404);
    expect(outside.headers.get('ratelimit-limit')).toBeNull();
  });

  it('behind a proxy (TRUST_PROXY=true) limits the address the proxy saw, not one the client wrote into X-Forwarded-For', async () => {
    const gateway = await stack.startGateway({
      QUEUE_PREFIX: `${stack.env['QUEUE_PREFIX']}-proxied`,
      TRUST_PROXY: 'true',
    });
    const api = new Api(gateway.baseUrl);
    // The proxy in front appends the address it saw (203.0.113.7) to whatever the client sent.
    const guesses = [];
    for (let i = 0; i < 6; i++) {
      const headers = { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.7` };
      guesses.push(await api.get<ErrorBody>('/v1/account', { key: `dsk_${String(i).repeat(40)}`, headers }));
    }
    expect(guesses.map((g) => g.status)).toEqual([401, 401, 401, 401, 429, 429]);
    // Another client behind the same proxy has a bucket of its own.
    const other = await api.get('/v1/account', { headers: { 'x-forwarded-for': '203.0.113.8' } });
    expect(other.status).toBe(401);
    expect(other.headers.get('ratelimit-remaining')).toBe('3');
  });

  it('gives an IPv6 client one address bucket per /64, and an IPv4-mapped address the IPv4 one', async () => {
    const gateway = await stack.startGateway({ QUEUE_PREFIX: `${stack.env['QUEUE_PREFIX']}-v6`, TRUST_PROXY: 'true' });
    const api = new Api(gateway.baseUrl);
    // One client holds a whole /64: rotating through it must not give it a fresh bucket each time.
    const v6 = [
      '2001:db8:1:2::1',
      '2001:db8:1:2::abcd',
      '2001:0db8:0001:0002:ffff:0:0:9',
      '2001:db8:1:2:dead:beef:0:1',
      '2001:db8:1:2::7',
    ];
    const fromV6 = [];
    for (const address of v6) fromV6.push(await api.get('/v1/account', { headers: { 'x-forwarded-for': address } }));
    expect(fromV6.map((g) => g.status)).toEqual([401, 401, 401, 401, 429]);
    const nextPrefix = await api.get('/v1/account', { headers: { 'x-forwarded-for': '2001:db8:1:3::1' } });
    expect(nextPrefix.headers.get('ratelimit-remaining')).toBe('3');
    expect((await api.get('/v1/account', { headers: { 'x-forwarded-for': '203.0.113.8' } })).status).toBe(401);
    const mapped = await api.get('/v1/account', { headers: { 'x-forwarded-for': '::ffff:203.0.113.8' } });
    expect(mapped.headers.get('ratelimit-remaining')).toBe('2');
  });

  it('requires a permissible purpose for person searches when the operator says so, and charges nothing without it', async () => {
    const api = new Api(
      (
        await stack.startGateway({
          RATE_LIMIT_RPS: '100',
          RATE_LIMIT_BURST: '100',
          QUEUE_PREFIX: `${stack.env['QUEUE_PREFIX']}-purpose`,
        })
      ).baseUrl,
    );
    const { key } = await api.register();
    const missing = await api.post<ErrorBody>('/v1/search/person', { name: 'Jane Doe' }, { key });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details?.map((d) => d.field)).toEqual(['permissible_purpose']);
    const viaSearch = await api.post<ErrorBody>('/v1/search', { query: 'Jane Doe', type: 'person' }, { key });
    expect(viaSearch.status).toBe(400);
    const given = await api.post(
      '/v1/search/person',
      { name: 'Jane Doe', permissible_purpose: 'employment' },
      { key, headers: { prefer: 'respond-async' } },
    );
    expect(given.status).toBe(202);
    const account = await api.get<{ credits_remaining: number }>('/v1/account', { key });
    expect(account.body.credits_remaining).toBe(99);
  });
});

describe('workers consume only the queues in LOOKUP_QUEUES', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await Stack.start({ label: 'queues', noWorker: true });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('a person-only worker leaves phone lookups queued until a phone worker starts', async () => {
    await stack.startWorker({ LOOKUP_QUEUES: 'person', WORKER_CONCURRENCY_PERSON: '3' });
    expect(stack.workers[0]!.logs).toContain('consuming person-lookup (concurrency 3');
    expect(stack.workers[0]!.logs).not.toContain('phone-lookup');
    const api = new Api(stack.baseUrl);
    const { key } = await api.register();

    const person = await api.post<Envelope>('/v1/search/person', { name: 'Jane Doe' }, { key });
    expect(person.status).toBe(200);
    const phone = await api.post<Envelope>(
      '/v1/verify/phone',
      { phone: '+14155552671' },
      { key, headers: { prefer: 'wait=1' } },
    );
    expect(phone.status).toBe(202);

    await stack.startWorker({ LOOKUP_QUEUES: 'phone' });
    const done = await waitFor(
      () => api.get<Envelope>(`/v1/searches/${phone.body.search_id}`, { key }),
      (r) => r.status === 200,
      { timeoutMs: 15_000, what: 'phone search done by the new worker' },
    );
    expect(done.body.results).toHaveLength(1);
  });

  it.each([
    ['worker', DIST.worker, { LOOKUP_QUEUES: 'phone,fax' }, 'LOOKUP_QUEUES'],
    ['worker', DIST.worker, { WORKER_CONCURRENCY: 'lots' }, 'WORKER_CONCURRENCY'],
    ['gateway', DIST.gateway, { PORT: 'eighty' }, 'PORT'],
    ['gateway', DIST.gateway, { RATE_LIMIT_RPS: '-1' }, 'RATE_LIMIT_RPS'],
    ['gateway', DIST.gateway, { ADMIN_USER: 'admin' }, 'ADMIN_USER'],
    [
      'gateway',
      DIST.gateway,
      { REDIS_CLUSTER_NODES: '127.0.0.1:7000', QUEUE_PREFIX: 'dossier' },
      'QUEUE_PREFIX: with REDIS_CLUSTER_NODES it must contain a non-empty {hash tag}, e.g. {dossier}',
    ],
    ['worker', DIST.worker, { REDIS_CLUSTER_NODES: '127.0.0.1' }, 'REDIS_CLUSTER_NODES'],
  ])('the %s refuses to boot on bad configuration, naming the variable (%#)', async (_name, script, env, variable) => {
    const app = AppProcess.start('bad', script, {
      DATABASE_URL: testEnv.databaseUrl,
      REDIS_URL: testEnv.redisUrl,
      ...env,
    });
    const code = await app.exited;
    expect(code).not.toBe(0);
    expect(app.logs).toContain(variable);
    expect(app.logs).not.toMatch(/\n\s+at /);
  });
});
