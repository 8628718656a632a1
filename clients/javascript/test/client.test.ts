import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { Client, DossierError, SearchResult, VERSION } from '../src/index.js';
import type { SourceReport } from '../src/index.js';
import { EMAIL_RESULT, FAST, PHONE_RESULT, startFake, success, type FakeServer, type Recorded } from './fake-server.js';

const KEY = 'dsk_unit_test_key_0123456789abcdefghij';

describe('Client basics', () => {
  let fake: FakeServer;
  let client: Client;
  const savedKey = process.env['DOSSIER_API_KEY'];
  const savedBaseUrl = process.env['DOSSIER_BASE_URL'];

  before(async () => {
    fake = await startFake((req: Recorded) => {
      if (req.path === '/v1/account') {
        return {
          status: 200,
          body: {
            status: 'success',
            account: { id: 'acct_1', email: 'a@example.com', created_at: '2026-01-01T00:00:00.000Z' },
            credits_remaining: 7,
          },
        };
      }
      if (req.path === '/v1/auth/register') {
        return {
          status: 201,
          body: {
            status: 'success',
            account: { id: 'acct_1', email: 'a@example.com', created_at: '2026-01-01T00:00:00.000Z' },
            api_key: 'dsk_new',
            credits_remaining: 3,
          },
        };
      }
      if (req.path === '/v1/auth/login')
        return { status: 200, body: { status: 'success', api_key: 'dsk_login', key_id: 'key_2' } };
      if (req.path === '/v1/auth/keys' && req.method === 'POST')
        return { status: 201, body: { status: 'success', api_key: 'dsk_k', key_id: 'key_3' } };
      if (req.path === '/v1/auth/keys' && req.method === 'GET')
        return { status: 200, body: { status: 'success', keys: [] } };
      if (req.path.startsWith('/v1/auth/keys/') && req.method === 'DELETE') {
        return {
          status: 200,
          body: {
            status: 'success',
            key: { id: 'key_3', prefix: 'dsk_k', name: null, created_at: 'x', last_used_at: null, revoked_at: 'y' },
          },
        };
      }
      if (
        req.path === '/v1/verify/email' &&
        req.body !== undefined &&
        (req.body as { email?: string }).email === EMAIL_RESULT.email
      )
        return { status: 200, body: success([EMAIL_RESULT], 40) };
      if (req.path.startsWith('/v1/searches/'))
        return { status: 200, body: success([], 5, req.path.slice('/v1/searches/'.length)) };
      if (req.path === '/v1/search/person' && (req.body as { limit?: number } | undefined)?.limit === 10)
        return { status: 200, body: { ...success([], 41), total_results: 42 } };
      return {
        status: 200,
        body: success([PHONE_RESULT], 41),
        headers: { 'X-Credits-Spent': '1', 'X-Credits-Remaining': '41', 'Idempotent-Replayed': 'true' },
      };
    });
    client = new Client({ apiKey: KEY, baseUrl: fake.url + '/', ...FAST });
  });
  after(async () => {
    await fake.close();
  });
  afterEach(() => {
    if (savedKey === undefined) delete process.env['DOSSIER_API_KEY'];
    else process.env['DOSSIER_API_KEY'] = savedKey;
    if (savedBaseUrl === undefined) delete process.env['DOSSIER_BASE_URL'];
    else process.env['DOSSIER_BASE_URL'] = savedBaseUrl;
  });

  const last = () => fake.requests[fake.requests.length - 1]!;

  test('the API key comes from DOSSIER_API_KEY when none is given', async () => {
    process.env['DOSSIER_API_KEY'] = 'dsk_from_env';
    const fromEnv = new Client({ baseUrl: fake.url });
    await fromEnv.account();
    assert.equal(last().headers['authorization'], 'Bearer dsk_from_env');
    // An explicit key wins over the environment.
    await new Client({ apiKey: KEY, baseUrl: fake.url }).account();
    assert.equal(last().headers['authorization'], `Bearer ${KEY}`);
  });

  test('the key is trimmed, and one with a control character is refused, as in the other clients', async () => {
    // A key read from a file keeps its line break.
    process.env['DOSSIER_API_KEY'] = ' dsk_from_env\n';
    await new Client({ apiKey: ' dsk_file\r\n', baseUrl: fake.url }).account();
    assert.equal(last().headers['authorization'], 'Bearer dsk_file');
    await new Client({ apiKey: '  ', baseUrl: fake.url }).account(); // a blank key is no key
    assert.equal(last().headers['authorization'], 'Bearer dsk_from_env');
    const sent = fake.requests.length;
    for (const apiKey of ['dsk_SECRET\nX-Injected: 1', 'dsk_SECRET\u0000x', 'dsk_\tSECRET']) {
      assert.throws(
        () => new Client({ apiKey, baseUrl: fake.url }),
        (err: unknown) => err instanceof DossierError && !/SECRET/.test(err.message),
        JSON.stringify(apiKey),
      );
    }
    assert.equal(fake.requests.length, sent);
  });

  test('an empty id is refused before anything is sent, as in the other clients', async () => {
    // Sent, GET /v1/searches/ is a 404 "no such route", which reads like an unknown search.
    const sent = fake.requests.length;
    for (const call of [
      () => client.getSearch(''),
      () => client.getBatch(''),
      () => client.revokeKey(''),
      () => client.deleteWebhook(''),
      () => client.webhookDeliveries(''),
      () => client.getSearch(undefined as unknown as string),
    ]) {
      await assert.rejects(call(), TypeError);
    }
    assert.equal(fake.requests.length, sent);
  });

  test('a body that cannot be sent as JSON is a TypeError before anything is sent, as in the other clients', async () => {
    // A lone surrogate (half of a UTF-16 pair, as a bad decode or a sliced emoji leaves) has no UTF-8 form, and
    // JSON.stringify writes NaN and Infinity as null: Python's ValueError, Ruby's ArgumentError and PHP's
    // InvalidArgumentException refuse such a body, and so does this client.
    const sent = fake.requests.length;
    const calls: [string, () => Promise<unknown>][] = [
      ['query', () => client.search({ query: '\ud800 Smith', type: 'person' })],
      ['email', () => client.verifyEmail('a\udfff@example.com')],
      ['batch input', () => client.batch([{ kind: 'person', input: { name: 'Jos\udce9' } }])],
      ['NaN', () => client.batch([{ kind: 'phone', input: { phone: NaN as unknown as string } }])],
      ['Infinity', () => client.createKey({ name: Infinity as unknown as string })],
      ['password', () => Client.register({ email: 'a@example.com', password: 's3cret-\ud83d', baseUrl: fake.url })],
    ];
    for (const [what, call] of calls) {
      await assert.rejects(call(), (err: unknown) => {
        assert.equal((err as Error).constructor, TypeError, `${what}: ${String(err)}`);
        assert.match((err as Error).message, /cannot be sent as JSON/);
        assert.doesNotMatch((err as Error).message, /s3cret/);
        return true;
      });
    }
    assert.equal(fake.requests.length, sent, 'nothing was sent');
    await client.verifyEmail('grace\ud83d\ude00@example.com'); // a well-formed pair (an emoji) is text
    assert.equal((fake.requests.at(-1)!.body as { email: string }).email, 'grace😀@example.com');
  });

  test('without any key the constructor throws', () => {
    delete process.env['DOSSIER_API_KEY'];
    assert.throws(
      () => new Client({ baseUrl: fake.url }),
      (err: unknown) => err instanceof DossierError && /DOSSIER_API_KEY/.test(err.message),
    );
  });

  test('defaults: base URL http://127.0.0.1:3000, trailing slash dropped', () => {
    delete process.env['DOSSIER_BASE_URL'];
    assert.equal(new Client({ apiKey: KEY }).baseUrl, 'http://127.0.0.1:3000');
    assert.equal(client.baseUrl, fake.url);
  });

  test('the base URL comes from DOSSIER_BASE_URL when none is given, as in the other clients', async () => {
    process.env['DOSSIER_BASE_URL'] = ` ${fake.url}/ \n`;
    process.env['DOSSIER_API_KEY'] = 'dsk_from_env';
    const fromEnv = new Client();
    assert.equal(fromEnv.baseUrl, fake.url);
    await fromEnv.account();
    assert.equal(last().headers['authorization'], 'Bearer dsk_from_env');
    await Client.login({ email: 'a@example.com', password: 'password123' });
    assert.equal(last().path, '/v1/auth/login');
    // The option wins; a blank one, or a blank variable, counts as none.
    assert.equal(new Client({ baseUrl: 'http://10.0.0.1:8080' }).baseUrl, 'http://10.0.0.1:8080');
    assert.equal(new Client({ baseUrl: '  ' }).baseUrl, fake.url);
    process.env['DOSSIER_BASE_URL'] = ' ';
    assert.equal(new Client().baseUrl, 'http://127.0.0.1:3000');
  });

  test('sends User-Agent dossier-javascript/<version>, Accept and the bearer key', async () => {
    await client.account();
    const req = last();
    assert.equal(req.headers['user-agent'], `dossier-javascript/${VERSION}`);
    assert.equal(req.headers['accept'], 'application/json');
    assert.equal(req.headers['authorization'], `Bearer ${KEY}`);
    assert.equal(req.headers['content-type'], undefined, 'a GET has no body and no Content-Type');
  });

  test('VERSION matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
      name: string;
    };
    assert.equal(pkg.name, '@dossier/client');
    assert.equal(VERSION, pkg.version);
  });

  test("an e-mail result carries the probe's facts, its score and sub-status", async () => {
    const result = await client.verifyEmail(EMAIL_RESULT.email);
    const item = result.results[0]!;
    assert.equal(item.is_catch_all, true);
    assert.equal(item.has_full_inbox, false);
    assert.equal(item.is_disabled, false);
    assert.equal(item.can_connect_smtp, true);
    assert.equal(item.score, 50);
    assert.equal(item.sub_status, 'catch_all');
    assert.deepEqual(result.raw, success([EMAIL_RESULT], 40));
  });

  test('a lookup result exposes the wire fields, camelCase aliases and the raw body', async () => {
    const result = await client.verifyPhone('+14155552671');
    assert.ok(result instanceof SearchResult);
    assert.equal(result.status, 'success');
    assert.equal(result.search_id, 'srch_ok1');
    assert.equal(result.searchId, 'srch_ok1');
    assert.equal(result.credits_remaining, 41);
    assert.equal(result.creditsRemaining, 41);
    assert.equal(result.results.length, 1);
    assert.equal(result.results[0]!.e164, '+14155552671');
    assert.equal(result.results[0]!.valid, true);
    assert.deepEqual(result.sources, [{ provider: 'libphonenumber', outcome: 'found', took_ms: 1 }]);
    assert.deepEqual(result.raw, success([PHONE_RESULT], 41));
    assert.deepEqual(JSON.parse(JSON.stringify(result)), success([PHONE_RESULT], 41));
    assert.equal(result.httpStatus, 200);
    assert.equal(result.creditsSpent, 1);
    assert.equal(result.replayed, true);
    assert.equal(result.pending, false);
    assert.equal(result.requestId, `req_fake${fake.requests.length}`);
  });

  test('request bodies omit absent (undefined or null) fields', async () => {
    await client.searchPerson({ name: 'John Smith', email: undefined, location: null as unknown as string });
    assert.equal(last().rawBody, '{"name":"John Smith"}');
    await client.searchCompany({ company_name: 'Acme', country: undefined, domain: 'acme.com' });
    assert.deepEqual(last().body, { company_name: 'Acme', domain: 'acme.com' });
    await client.verifyPhone({ phone: '+14155552671', country: undefined });
    assert.deepEqual(last().body, { phone: '+14155552671' });
    await client.search({ query: 'x', type: 'person', country: undefined });
    assert.deepEqual(last().body, { query: 'x', type: 'person' });
    await client.createKey();
    assert.deepEqual(last().body, {});
    assert.equal(last().headers['content-type'], 'application/json');
  });

  test('search() routes the generic form to /v1/search and person fields to /v1/search/person', async () => {
    await client.search({ query: 'Acme', type: 'company', country: 'US' });
    assert.equal(last().path, '/v1/search');
    assert.deepEqual(last().body, { query: 'Acme', type: 'company', country: 'US' });

    await client.search({ name: 'John Smith', location: 'Austin, TX', age_range: '30-40' });
    assert.equal(last().path, '/v1/search/person');
    assert.deepEqual(last().body, { name: 'John Smith', location: 'Austin, TX', age_range: '30-40' });

    await client.search({ username: 'jsmith', permissible_purpose: 'employment' });
    assert.equal(last().path, '/v1/search/person');
    assert.deepEqual(last().body, { username: 'jsmith', permissible_purpose: 'employment' });

    // Username presence's choice of sites goes with either form, as given.
    await client.search({ query: 'gracehopper', type: 'username', sites: ['GitHub', 'Reddit'], tags: ['coding'], top: 5 });
    assert.equal(last().path, '/v1/search');
    assert.deepEqual(last().body, {
      query: 'gracehopper',
      type: 'username',
      sites: ['GitHub', 'Reddit'],
      tags: ['coding'],
      top: 5,
    });
    await client.search({ username: 'gracehopper', top: 50 });
    assert.equal(last().path, '/v1/search/person');
    assert.deepEqual(last().body, { username: 'gracehopper', top: 50 });

    const count = fake.requests.length;
    await assert.rejects(client.search({ query: 'x', type: 'person', name: 'y' } as never), TypeError);
    assert.equal(fake.requests.length, count, 'a mixed search is refused before any request');
  });

  test('searchPerson() sends country, limit and min_score as given; total_results is read back', async () => {
    const found = await client.searchPerson({
      name: 'Gonzalo Halvorson',
      phone: '(512) 555-0199',
      country: 'US',
      limit: 10,
      min_score: 0.5,
    });
    assert.equal(last().path, '/v1/search/person');
    assert.equal(
      last().rawBody,
      '{"name":"Gonzalo Halvorson","phone":"(512) 555-0199","country":"US","limit":10,"min_score":0.5}',
    );
    assert.equal(found.total_results, 42);
    assert.equal(found.totalResults, 42);
    const uncounted = await client.searchPerson({ name: 'Gonzalo Halvorson', limit: 1 });
    assert.deepEqual(last().body, { name: 'Gonzalo Halvorson', limit: 1 });
    assert.equal(uncounted.total_results, null);
  });

  test('each method hits its path with its method and body', async () => {
    const calls: [() => Promise<unknown>, string, string, unknown][] = [
      [() => client.searchPerson({ name: 'J' }), 'POST', '/v1/search/person', { name: 'J' }],
      [
        () => client.searchPerson({ username: 'gracehopper', sites: ['GitHub'], tags: ['coding', 'de'], top: 10 }),
        'POST',
        '/v1/search/person',
        { username: 'gracehopper', sites: ['GitHub'], tags: ['coding', 'de'], top: 10 },
      ],
      [() => client.screen('Rustam Karimov'), 'POST', '/v1/screen', { name: 'Rustam Karimov' }],
      [
        () => client.screen({ name: 'Rustam Karimov', birth_year: 1961, country: 'UZ', type: 'person', permissible_purpose: 'kyc' }),
        'POST',
        '/v1/screen',
        { name: 'Rustam Karimov', birth_year: 1961, country: 'UZ', type: 'person', permissible_purpose: 'kyc' },
      ],
      [() => client.screen({ name: 'Acme Ltd', type: 'company' }), 'POST', '/v1/screen', { name: 'Acme Ltd', type: 'company' }],
      [() => client.searchCompany({ domain: 'acme.com' }), 'POST', '/v1/search/company', { domain: 'acme.com' }],
      [() => client.verifyEmail('a@example.com'), 'POST', '/v1/verify/email', { email: 'a@example.com' }],
      [
        () => client.verifyEmail({ email: 'b@example.com', permissible_purpose: 'fraud_prevention' }),
        'POST',
        '/v1/verify/email',
        { email: 'b@example.com', permissible_purpose: 'fraud_prevention' },
      ],
      [
        () => client.verifyPhone({ phone: '4155552671', country: 'US' }),
        'POST',
        '/v1/verify/phone',
        { phone: '4155552671', country: 'US' },
      ],
      [() => client.getSearch('srch_abc'), 'GET', '/v1/searches/srch_abc', undefined],
      [() => client.account(), 'GET', '/v1/account', undefined],
      [() => client.createKey('ci'), 'POST', '/v1/auth/keys', { name: 'ci' }],
      [() => client.createKey({ name: 'deploy' }), 'POST', '/v1/auth/keys', { name: 'deploy' }],
      [() => client.listKeys(), 'GET', '/v1/auth/keys', undefined],
      [() => client.revokeKey('key_3'), 'DELETE', '/v1/auth/keys/key_3', undefined],
      [() => client.getSearch('a/b'), 'GET', '/v1/searches/a%2Fb', undefined],
    ];
    for (const [run, method, path, body] of calls) {
      await run();
      assert.equal(last().method, method, path);
      assert.equal(last().path, path);
      assert.deepEqual(last().body, body, path);
    }
  });

  test('account, keys, register and login return the wire bodies', async () => {
    const account = await client.account();
    assert.equal(account.credits_remaining, 7);
    assert.equal(account.account.email, 'a@example.com');

    const reg = await Client.register({ email: 'a@example.com', password: 'password123', baseUrl: fake.url });
    assert.equal(reg.api_key, 'dsk_new');
    assert.equal(reg.credits_remaining, 3);
    assert.deepEqual(last().body, { email: 'a@example.com', password: 'password123' });
    assert.equal(last().headers['authorization'], undefined, 'register sends no key');

    const login = await Client.login({ email: 'a@example.com', password: 'password123', baseUrl: fake.url });
    assert.deepEqual(login, { status: 'success', api_key: 'dsk_login', key_id: 'key_2' });
    assert.equal(last().path, '/v1/auth/login');
    assert.equal(last().headers['authorization'], undefined);

    const revoked = await client.revokeKey('key_3');
    assert.equal(revoked.key?.revoked_at, 'y');
  });

  test('printing a client, or a response carrying a key or a secret, never shows it whole', async () => {
    const printed = [
      inspect(client),
      inspect(client, { depth: 10, showHidden: true }),
      JSON.stringify(client),
      inspect(client, { depth: 10, customInspect: false }), // the key is a private field of the transport
    ];
    for (const text of printed) assert.ok(!text.includes(KEY), text);
    assert.match(inspect(client), /apiKey: 'dsk_unit…'/);
    assert.deepEqual(JSON.parse(JSON.stringify(client)), { baseUrl: fake.url, apiKey: 'dsk_unit…' });

    const reg = await Client.register({ email: 'a@example.com', password: 'password123', baseUrl: fake.url });
    const login = await Client.login({ email: 'a@example.com', password: 'password123', baseUrl: fake.url });
    const issued = await client.createKey('ci');
    assert.match(inspect(reg), /api_key: 'dsk_new…'/);
    assert.match(inspect(login), /api_key: 'dsk_logi…'/);
    assert.doesNotMatch(inspect({ nested: issued }), /dsk_k'/);
    assert.equal(login.api_key, 'dsk_login', 'the field itself is whole');
    assert.equal(JSON.parse(JSON.stringify(login)).api_key, 'dsk_login');
  });

  test('a source report may carry a detail (API.md: when the outcome is not found or not_found)', () => {
    const report: SourceReport = { provider: 'smtp', outcome: 'timeout', took_ms: 10_000, detail: 'no answer in 10 s' };
    assert.equal(report.detail, 'no answer in 10 s');
  });

  test('a custom fetch is used when given', async () => {
    const seen: string[] = [];
    const custom = new Client({
      apiKey: KEY,
      baseUrl: fake.url,
      fetch: (url, init) => (seen.push(url), fetch(url, init)),
    });
    await custom.account();
    assert.deepEqual(seen, [`${fake.url}/v1/account`]);
  });
});
