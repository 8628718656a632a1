import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  APIError,
  AuthenticationError,
  Client,
  ConflictError,
  DossierError,
  InsufficientCreditsError,
  NotFoundError,
  RateLimitError,
  UnavailableError,
  ValidationError,
} from '../src/index.js';
import { errorBody, sequence, startFake, withFake, type FakeServer, type Reply } from './fake-server.js';

const KEY = 'dsk_unit_test_key_0123456789abcdefghij';

type ErrorClass = new (...args: never[]) => APIError;

/** Every code of the contract, its HTTP status and the class it must become. */
const CASES: [code: string, status: number, cls: ErrorClass, headers?: Record<string, string>][] = [
  ['invalid_json', 400, ValidationError],
  ['validation_error', 400, ValidationError],
  ['unauthorized', 401, AuthenticationError, { 'WWW-Authenticate': 'Bearer realm="dossier"' }],
  ['invalid_credentials', 401, AuthenticationError],
  ['insufficient_credits', 402, InsufficientCreditsError, { 'X-Credits-Spent': '0', 'X-Credits-Remaining': '0' }],
  ['not_found', 404, NotFoundError],
  ['method_not_allowed', 405, APIError, { Allow: 'GET' }],
  ['email_taken', 409, ConflictError],
  ['idempotency_conflict', 409, ConflictError],
  ['payload_too_large', 413, APIError],
  ['unsupported_media_type', 415, APIError],
  ['rate_limited', 429, RateLimitError, { 'Retry-After': '7' }],
  ['internal_error', 500, APIError],
  ['unavailable', 503, UnavailableError, { 'Retry-After': '3' }],
];

describe('error mapping', () => {
  let fake: FakeServer;
  let client: Client;

  before(async () => {
    fake = await startFake((req): Reply => {
      const code = req.path.split('/').pop()!;
      if (code === 'not-json')
        return { status: 502, text: '<html>Bad gateway</html>', headers: { 'X-Request-Id': 'req_proxy' } };
      if (code === 'failed-search') {
        return {
          status: 503,
          body: {
            ...errorBody('unavailable', 'the lookup failed; nothing was charged'),
            search_id: 'srch_failed',
            credits_remaining: 5,
          },
          headers: { 'Retry-After': '1' },
        };
      }
      const found = CASES.find(([c]) => c === code);
      if (!found) return { status: 404, body: errorBody('not_found', 'no such route') };
      const details =
        code === 'validation_error'
          ? [
              { field: 'phone', issue: 'is not a phone number' },
              { field: 'country', issue: 'must be an ISO 3166-1 alpha-2 country code such as US or DE' },
            ]
          : undefined;
      return { status: found[1], body: errorBody(code, `message for ${code}`, details), headers: found[3] ?? {} };
    });
    // maxRetries: 0 so that 429 and 503 surface at once.
    client = new Client({ apiKey: KEY, baseUrl: fake.url, maxRetries: 0 });
  });
  after(async () => {
    await fake.close();
  });

  for (const [code, status, cls] of CASES) {
    test(`${status} ${code} → ${cls.name}`, async () => {
      await assert.rejects(client.getSearch(code), (err: unknown) => {
        assert.ok(err instanceof cls, `got ${(err as Error).name}`);
        assert.ok(err instanceof APIError);
        assert.ok(err instanceof DossierError);
        assert.ok(err instanceof Error);
        assert.equal(err.name, cls.name);
        assert.equal(err.status, status);
        assert.equal(err.code, code);
        assert.equal(err.message, `message for ${code}`);
        assert.equal(err.request_id, `req_${code}`);
        assert.equal(err.requestId, `req_${code}`);
        assert.deepEqual(
          err.body,
          errorBody(code, `message for ${code}`, err.details.length ? err.details : undefined),
        );
        assert.equal(typeof err.headers['x-request-id'], 'string');
        return true;
      });
    });
  }

  test('ValidationError carries the field details', async () => {
    await assert.rejects(client.getSearch('validation_error'), (err: unknown) => {
      assert.ok(err instanceof ValidationError);
      assert.deepEqual(err.details, [
        { field: 'phone', issue: 'is not a phone number' },
        { field: 'country', issue: 'must be an ISO 3166-1 alpha-2 country code such as US or DE' },
      ]);
      return true;
    });
    await assert.rejects(
      client.getSearch('invalid_json'),
      (err: unknown) => err instanceof ValidationError && err.details.length === 0,
    );
  });

  test('InsufficientCreditsError carries the balance (X-Credits-Remaining), as in the other clients', async () => {
    await withFake(
      sequence({
        status: 402,
        body: errorBody('insufficient_credits', 'this lookup costs 1'),
        headers: { 'X-Credits-Spent': '0', 'X-Credits-Remaining': '3' },
      }),
      async (f) => {
        const c = new Client({ apiKey: KEY, baseUrl: f.url, maxRetries: 0 });
        await assert.rejects(c.verifyPhone('+14155552671'), (err: unknown) => {
          assert.ok(err instanceof InsufficientCreditsError);
          assert.equal(err.credits_remaining, 3);
          assert.equal(err.creditsRemaining, 3);
          return true;
        });
      },
    );
  });

  test('RateLimitError and UnavailableError carry Retry-After in seconds', async () => {
    await assert.rejects(
      client.getSearch('rate_limited'),
      (err: unknown) => err instanceof RateLimitError && err.retry_after === 7 && err.retryAfter === 7,
    );
    await assert.rejects(
      client.getSearch('unavailable'),
      (err: unknown) => err instanceof UnavailableError && err.retry_after === 3 && err.search_id === null,
    );
  });

  test('a failed search is UnavailableError with its search_id, and polling GETs do not retry it', async () => {
    const retrying = new Client({
      apiKey: KEY,
      baseUrl: fake.url,
      maxRetries: 2,
      retryBaseDelayMs: 1,
      retryMaxDelayMs: 1,
    });
    const before = fake.requests.length;
    await assert.rejects(retrying.getSearch('failed-search'), (err: unknown) => {
      assert.ok(err instanceof UnavailableError);
      assert.equal(err.search_id, 'srch_failed');
      assert.equal(err.searchId, 'srch_failed');
      assert.equal(err.message, 'the lookup failed; nothing was charged');
      return true;
    });
    assert.equal(fake.requests.length - before, 1, 'a failed search is final: not retried');
  });

  test('a non-JSON error answer is an APIError with the text as body and the header request id', async () => {
    await assert.rejects(client.getSearch('not-json'), (err: unknown) => {
      assert.ok(err instanceof APIError);
      assert.equal(err.constructor, APIError);
      assert.equal(err.status, 502);
      assert.equal(err.code, null, 'no error envelope, no code: as in the Python, Ruby and PHP clients');
      assert.equal(err.request_id, 'req_proxy');
      assert.equal(err.body, '<html>Bad gateway</html>');
      assert.match(err.message, /HTTP 502/);
      return true;
    });
  });
});

describe('an error answer without the error envelope', () => {
  test('a JSON object of another shape (a proxy, a load balancer) has code null, as in the other clients', async () => {
    const answers: Reply[] = [
      { status: 502, body: { message: 'upstream connect error' } },
      { status: 504, body: { error: 'Gateway Timeout' } },
      { status: 408, text: '<html>Request Timeout</html>' },
    ];
    await withFake(sequence(...answers), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, maxRetries: 0 });
      for (const answer of answers) {
        await assert.rejects(client.account(), (err: unknown) => {
          assert.ok(err instanceof APIError);
          assert.equal(err.status, answer.status);
          assert.equal(err.code, null);
          return true;
        });
      }
    });
  });
});

describe('a redirect', () => {
  test('is not followed: it is an APIError with its status, as in the other clients', async () => {
    const redirect: Reply = { status: 301, body: { moved: true }, headers: { Location: '/v1/account' } };
    await withFake(sequence(redirect, { status: 307, headers: { Location: '/v1/verify/phone' } }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, maxRetries: 0 });
      await assert.rejects(client.account(), (err: unknown) => err instanceof APIError && err.status === 301);
      await assert.rejects(
        client.verifyPhone('+14155552671'),
        (err: unknown) => err instanceof APIError && err.status === 307,
      );
      assert.equal(fake.requests.length, 2, 'neither Location was requested');
    });
  });
});

describe('a 2xx answer', () => {
  test('whose body is not a JSON object is an APIError, as in the other clients', async () => {
    const answers: Reply[] = [
      { status: 200, text: 'not json', headers: { 'X-Request-Id': 'req_proxy' } },
      { status: 200 }, // empty
      { status: 200, body: [1, 2] },
      { status: 201, body: 'a string' },
    ];
    await withFake(sequence(...answers.flatMap((a) => [a, a])), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, maxRetries: 0 });
      for (const [i, answer] of answers.entries()) {
        for (const call of [() => client.account(), () => client.createKey('ci')]) {
          await assert.rejects(call(), (err: unknown) => {
            assert.equal((err as Error).constructor, APIError, `answer ${i}: ${String(err)}`);
            assert.equal((err as APIError).status, answer.status);
            assert.equal((err as APIError).code, null);
            return true;
          });
        }
      }
      assert.equal(fake.requests.length, 8);
    });
  });
});

describe('a 2xx answer that is not the envelope', () => {
  // A paid lookup's answer without its status, search_id, credits_remaining or (once done) results is broken,
  // not "nothing found": the base APIError (code null), never a result with no results. As in the other clients.
  const phone = { kind: 'phone', input: { phone: '+14155552671' } } as const;
  const cases: { what: string; broken: Reply[]; calls: ((client: Client) => Promise<unknown>)[] }[] = [
    {
      what: 'search envelope',
      broken: [
        { status: 200, body: {} },
        { status: 200, body: { status: 'success', search_id: 'srch_1', credits_remaining: 9 } },
        { status: 200, body: { status: 'success', search_id: 'srch_1', results: {}, credits_remaining: 9 } },
        { status: 200, body: { status: 'done', search_id: 'srch_1', results: [], credits_remaining: 9 } },
        { status: 200, body: { status: 'success', search_id: 'srch_1', results: [] } },
        { status: 200, body: { status: 'success', search_id: '', results: [], credits_remaining: 9 } },
        { status: 202, body: { status: 'pending', credits_remaining: 9 } },
      ],
      calls: [(client) => client.verifyPhone('+14155552671'), (client) => client.getSearch('srch_1')],
    },
    {
      what: 'batch envelope',
      broken: [
        { status: 200, body: {} },
        { status: 200, body: { status: 'success', batch_id: 'bat_1', credits_remaining: 9 } },
        { status: 200, body: { status: 'success', batch_id: 'bat_1', items: [], credits_remaining: '9' } },
        { status: 202, body: { status: 'pending', items: [], credits_remaining: 9 } },
      ],
      calls: [(client) => client.batch([phone]), (client) => client.getBatch('bat_1')],
    },
  ];
  for (const { what, broken, calls } of cases) {
    test(`of a ${what} is an APIError with code null, as in the other clients`, async () => {
      const answers = broken.flatMap((reply) => calls.map(() => reply));
      await withFake(sequence(...answers), async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, maxRetries: 0 });
        for (const [i, reply] of broken.entries()) {
          for (const call of calls) {
            const before = fake.requests.length;
            await assert.rejects(call(client), (err: unknown) => {
              assert.equal((err as Error).constructor, APIError, `answer ${i}: ${String(err)}`);
              const apiError = err as APIError;
              assert.equal(apiError.status, reply.status);
              assert.equal(apiError.code, null);
              assert.equal(apiError.requestId, `req_fake${before + 1}`);
              assert.deepEqual(apiError.body, reply.body);
              assert.match(apiError.message, new RegExp(`not a ${what}`));
              return true;
            });
            assert.equal(fake.requests.length - before, 1, 'a 2xx is not retried');
          }
        }
      });
    });
  }
});

describe('any other 2xx answer that is not its documented shape', () => {
  // An account without its id, a key list that is no list, a new key or webhook without its secret: broken, not
  // empty. The base APIError (code null) with the status, request id and body, as a lookup's, in all four clients.
  const ACCOUNT = { id: 'acc_1', email: 'a@example.com', created_at: '2026-11-24T00:00:00.000Z' };
  const OK = { status: 'success' } as const;
  const auth = (baseUrl: string) => ({ email: 'a@example.com', password: 'password123', baseUrl, maxRetries: 0 });
  const cases: { call: string; run: (client: Client, baseUrl: string) => Promise<unknown>; broken: object[] }[] = [
    {
      call: 'account',
      run: (c) => c.account(),
      broken: [
        {},
        { account: ACCOUNT, credits_remaining: 1 },
        { ...OK, account: {}, credits_remaining: 1 },
        { ...OK, account: { ...ACCOUNT, id: '' }, credits_remaining: 1 },
        { ...OK, account: ACCOUNT },
        { ...OK, account: ACCOUNT, credits_remaining: '1' },
      ],
    },
    {
      call: 'register',
      run: (_c, url) => Client.register(auth(url)),
      broken: [{ ...OK, account: ACCOUNT, credits_remaining: 3 }, { ...OK, api_key: 'dsk_n', credits_remaining: 3 }],
    },
    { call: 'login', run: (_c, url) => Client.login(auth(url)), broken: [{ ...OK, key_id: 'key_l' }, { ...OK, api_key: 'dsk_l' }] },
    { call: 'createKey', run: (c) => c.createKey('ci'), broken: [{ ...OK, api_key: '', key_id: 'key_k' }, {}] },
    { call: 'listKeys', run: (c) => c.listKeys(), broken: [OK, { ...OK, keys: {} }, { ...OK, keys: ['key_1'] }] },
    { call: 'revokeKey', run: (c) => c.revokeKey('key_1'), broken: [OK, { ...OK, key: {} }] },
    {
      call: 'listSearches',
      run: (c) => c.listSearches(),
      broken: [{ ...OK, searches: [] }, { ...OK, next_cursor: null }, { ...OK, searches: [], next_cursor: 7 }],
    },
    {
      call: 'createWebhook',
      run: (c) => c.createWebhook({ url: 'https://example.com/h' }),
      broken: [{ ...OK, webhook: { id: 'wh_1' } }, { ...OK, secret: 'whsec_x' }],
    },
    { call: 'listWebhooks', run: (c) => c.listWebhooks(), broken: [OK, { ...OK, webhooks: null }] },
    { call: 'deleteWebhook', run: (c) => c.deleteWebhook('wh_1'), broken: [OK] },
    { call: 'webhookDeliveries', run: (c) => c.webhookDeliveries('wh_1'), broken: [OK, { ...OK, deliveries: {} }] },
  ];
  for (const { call, run, broken } of cases) {
    test(`${call}: an APIError with code null, its status, request id and body`, async () => {
      await withFake(sequence(...broken.map((body) => ({ status: 200, body }))), async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, maxRetries: 0 });
        for (const [i, body] of broken.entries()) {
          const before = fake.requests.length;
          await assert.rejects(run(client, fake.url), (err: unknown) => {
            assert.equal((err as Error).constructor, APIError, `answer ${i}: ${String(err)}`);
            const apiError = err as APIError;
            assert.equal(apiError.status, 200);
            assert.equal(apiError.code, null);
            assert.equal(apiError.requestId, `req_fake${before + 1}`);
            assert.deepEqual(apiError.body, body);
            assert.match(apiError.message, /^HTTP 200 with a body that is not an? /);
            return true;
          });
        }
      });
    });
  }
});
