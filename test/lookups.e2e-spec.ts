import { API_RESULT_FIELDS, Api, Stack, ledgerState, sql, waitFor } from '@dossier/testing';

type Envelope = {
  status: string;
  search_id: string;
  results: Record<string, unknown>[];
  credits_remaining: number;
  sources: { provider: string; outcome: string; took_ms: number }[];
};
type ErrorBody = {
  status: string;
  error: { code: string; message: string; details?: { field: string; issue: string }[] };
  request_id: string;
};

const PHONE_FIELDS = [...API_RESULT_FIELDS.PhoneResult].sort();

describe('lookups over HTTP (gateway + worker processes, real Redis and Postgres)', () => {
  let stack: Stack;
  let api: Api;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    stack = await Stack.start({ label: 'lookups', env: { SIGNUP_CREDITS: '1000' } });
    api = new Api(stack.baseUrl);
    ({ key, accountId } = await api.register());
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('looks up an E.164 phone number with every field of the phone result, and charges one credit', async () => {
    const before = await ledgerState(accountId);
    const res = await api.post<Envelope>('/v1/verify/phone', { phone: '+1 650 253 0000' }, { key });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    expect(res.body.search_id).toMatch(/^srch_/);
    expect(res.body.results).toHaveLength(1);
    const item = res.body.results[0]!;
    expect(Object.keys(item).sort()).toEqual(PHONE_FIELDS);
    expect(item).toMatchObject({
      input: '+1 650 253 0000',
      e164: '+16502530000',
      valid: true,
      possible: true,
      country_code: '1',
      region: 'US',
      location: 'Mountain View, CA',
      line_type: 'fixed_line_or_mobile',
      time_zones: ['America/Los_Angeles'],
      national_format: '(650) 253-0000',
      international_format: '+1 650 253 0000',
      sources: ['libphonenumber'],
    });
    expect(res.body.sources).toEqual([
      { provider: 'libphonenumber', outcome: 'found', took_ms: expect.any(Number) },
      {
        provider: 'twilio',
        outcome: 'skipped',
        took_ms: 0,
        detail: 'not configured: set TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN',
      },
    ]);
    expect(res.body.credits_remaining).toBe(before.balance - 1);
    expect(res.headers.get('x-credits-spent')).toBe('1');
    expect(res.headers.get('x-credits-remaining')).toBe(String(before.balance - 1));
    const after = await ledgerState(accountId);
    expect(after).toMatchObject({
      balance: before.balance - 1,
      reserves: before.reserves + 1,
      captures: before.captures + 1,
    });
    expect(after.ledger_sum).toBe(after.balance);
  });

  it('reads national-format input with a country, reports carrier and line type of mobiles', async () => {
    const de = await api.post<Envelope>('/v1/verify/phone', { phone: '030 123456', country: 'de' }, { key });
    expect(de.status).toBe(200);
    expect(de.body.results[0]).toMatchObject({
      e164: '+4930123456',
      region: 'DE',
      location: 'Berlin',
      line_type: 'fixed_line',
    });

    const uk = await api.post<Envelope>('/v1/verify/phone', { phone: '+44 7400 123456' }, { key });
    expect(uk.body.results[0]).toMatchObject({ line_type: 'mobile', carrier: 'Three', region: 'GB', valid: true });
  });

  it('answers a parseable but invalid number with valid: false (a result), and an unparseable one with 400 and no charge', async () => {
    const invalid = await api.post<Envelope>('/v1/verify/phone', { phone: '+1 555 0100' }, { key });
    expect(invalid.status).toBe(200);
    expect(invalid.body.results[0]).toMatchObject({ valid: false, e164: '+15550100', line_type: 'unknown' });

    const before = await ledgerState(accountId);
    for (const phone of ['not a number', '12', '+999 123456', '+']) {
      const res = await api.post<ErrorBody>('/v1/verify/phone', { phone }, { key });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details?.[0]?.field).toBe('phone');
    }
    const viaSearch = await api.post<ErrorBody>('/v1/search', { query: 'abc', type: 'phone' }, { key });
    expect(viaSearch.status).toBe(400);
    expect(viaSearch.body.error.details?.[0]?.field).toBe('query');
    expect(await ledgerState(accountId)).toEqual(before);
  });

  it('routes every generic search type to its lookup', async () => {
    const phone = await api.post<Envelope>('/v1/search', { query: '+44 20 7946 0958', type: 'phone' }, { key });
    expect(phone.status).toBe(200);
    expect(phone.body.results[0]).toMatchObject({ e164: '+442079460958', region: 'GB' });

    const national = await api.post<Envelope>(
      '/v1/search',
      { query: '(650) 253-0000', type: 'phone', country: 'US' },
      { key },
    );
    expect(national.body.results[0]).toMatchObject({ e164: '+16502530000' });

    for (const [type, kind] of [
      ['person', 'person'],
      ['username', 'person'],
      ['company', 'company'],
      ['email', 'email'],
    ] as const) {
      const res = await api.post<Envelope>(
        '/v1/search',
        { query: { email: 'jane@example.com', username: 'johnsmith' }[type as string] ?? 'John Smith', type },
        { key },
      );
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('success');
      const [row] = await sql<{ kind: string; input: Record<string, string> }>(
        `SELECT kind, input FROM searches WHERE id = $1`,
        [res.body.search_id],
      );
      expect(row!.kind).toBe(kind);
      const mainField = { person: 'name', username: 'username', company: 'company_name', email: 'email' }[type];
      expect(Object.keys(row!.input)).toContain(mainField);
    }
  });

  it('answers a person or company search that finds nobody with empty results, local not_found, the upstreams that are off skipped, nothing charged', async () => {
    const before = await ledgerState(accountId);
    // The upstreams that apply to each search, none configured here; a domain reaches no registry; no
    // sanctions list is imported, and a search without a name screens none.
    const skipped = (...ids: string[]) =>
      ids.map((provider) => ({ provider, outcome: 'skipped', took_ms: 0, detail: expect.any(String) }));
    const local = { provider: 'local', outcome: 'not_found', took_ms: expect.any(Number) };
    const calls: [string, unknown, unknown[]][] = [
      [
        '/v1/search/person',
        { name: 'Qzxv Wyxkpl', location: 'Berlin', age_range: '30-40' },
        [local, ...skipped('pdl', 'watchlists')],
      ],
      ['/v1/search/person', { email: 'nobody-here@example.com' }, [local, ...skipped('pdl')]],
      [
        '/v1/search/company',
        { company_name: 'Qzxv Wyxkpl GmbH', country: 'DE' },
        [local, ...skipped('gleif', 'opencorporates', 'watchlists')],
      ],
      ['/v1/search/company', { domain: 'nobody-here.example' }, [local]],
    ];
    for (const [path, body, sources] of calls) {
      const res = await api.post<Envelope>(path, body, { key });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'success', results: [], credits_remaining: before.balance });
      expect(res.body.sources).toEqual(sources);
      expect(res.headers.get('x-credits-spent')).toBe('0');
    }
    const after = await ledgerState(accountId);
    expect(after.balance).toBe(before.balance);
    expect(after.reserves - before.reserves).toBe(calls.length);
    expect(after.releases - before.releases).toBe(calls.length);
    expect(after.ledger_sum).toBe(after.balance);
  });

  it.each([
    ['/v1/search', {}, ['query', 'type']],
    ['/v1/search', { query: '', type: 'person' }, ['query']],
    ['/v1/search', { query: 'a query of 257 characters'.padEnd(257, '.'), type: 'person' }, ['query']],
    ['/v1/search', { query: 'John', type: 'person', country: 'XX' }, ['country']],
    ['/v1/search', { query: 'John', type: 'person', country: 'USA' }, ['country']],
    ['/v1/search', { query: 42, type: 'person' }, ['query']],
    ['/v1/search', { query: 'John', type: 'person', nmae: 'typo' }, ['nmae']],
    ['/v1/search/person', { location: 'Berlin' }, ['name']],
    ['/v1/search/person', { name: 'Jane', age_range: 'thirty' }, ['age_range']],
    ['/v1/search/person', { name: 'Jane', age_range: '40-30' }, ['age_range']],
    ['/v1/search/person', { username: '..' }, ['username']],
    ['/v1/search', { query: '@.', type: 'username' }, ['query']],
    ['/v1/search/company', { country: 'DE' }, ['company_name']],
    ['/v1/search/company', { domain: 'not a domain' }, ['domain']],
    ['/v1/search/company', { domain: 'https://acme..com/about' }, ['domain']],
    ['/v1/search/company', { domain: '-acme.com' }, ['domain']],
    ['/v1/search/company', { domain: '192.0.2.1' }, ['domain']],
    ['/v1/verify/email', {}, ['email']],
    ['/v1/verify/email', { email: ['a@b.c'] }, ['email']],
    ['/v1/verify/phone', { phone: '+14155552671', country: 'Germany' }, ['country']],
    ['/v1/verify/phone', { phone: '+14155552671', permissible_purpose: 'Because I Can!' }, ['permissible_purpose']],
    ['/v1/verify/phone', [1, 2], ['body']],
  ])('POST %s %j → 400 validation_error naming %j, nothing charged', async (path, body, fields) => {
    const before = await ledgerState(accountId);
    const res = await api.post<ErrorBody>(path, body, { key });
    expect(res.status).toBe(400);
    expect(res.body.status).toBe('error');
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details?.map((d) => d.field).sort()).toEqual([...fields].sort());
    expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
    expect(await ledgerState(accountId)).toEqual(before);
  });

  it('normalises accepted age ranges and stores the permissible purpose in the audit trail', async () => {
    for (const age_range of ['30-40', '65+', '-25']) {
      const res = await api.post<Envelope>('/v1/search/person', { name: 'Jane Doe', age_range }, { key });
      expect(res.status).toBe(200);
    }
    const res = await api.post<Envelope>(
      '/v1/verify/phone',
      { phone: '+14155552671', permissible_purpose: 'fraud_prevention' },
      { key, headers: { 'x-request-id': 'audit-trail-check-1' } },
    );
    const [row] = await sql<{ permissible_purpose: string; request_id: string; account_id: string; key_id: string }>(
      `SELECT permissible_purpose, request_id, account_id, key_id FROM searches WHERE id = $1`,
      [res.body.search_id],
    );
    expect(row).toMatchObject({
      permissible_purpose: 'fraud_prevention',
      request_id: 'audit-trail-check-1',
      account_id: accountId,
    });
    expect(row!.key_id).toMatch(/^key_/);
  });

  it('serves a search by id only to its own account', async () => {
    const res = await api.post<Envelope>('/v1/verify/phone', { phone: '+14155552671' }, { key });
    const own = await api.get<Envelope>(`/v1/searches/${res.body.search_id}`, { key });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ status: 'success', search_id: res.body.search_id, results: res.body.results });
    expect(own.body.credits_remaining).toEqual(expect.any(Number));

    const other = await api.register();
    const foreign = await api.get<ErrorBody>(`/v1/searches/${res.body.search_id}`, { key: other.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    expect((await api.get(`/v1/searches/srch_doesnotexist`, { key })).status).toBe(404);
    expect((await api.get(`/v1/searches/'; DROP TABLE searches; --`, { key })).status).toBe(404);
  });

  it('answers 202 at once with Prefer: respond-async, and the search completes', async () => {
    const res = await api.post<Envelope>(
      '/v1/verify/phone',
      { phone: '+14155552671' },
      { key, headers: { prefer: 'respond-async' } },
    );
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: 'pending',
      search_id: expect.stringMatching(/^srch_/),
      credits_remaining: expect.any(Number),
    });
    expect(res.headers.get('location')).toBe(`/v1/searches/${res.body.search_id}`);
    expect(res.headers.get('preference-applied')).toBe('respond-async');
    const done = await waitFor(
      () => api.get<Envelope>(`/v1/searches/${res.body.search_id}`, { key }),
      (r) => r.status !== 202,
      { timeoutMs: 10_000, what: 'the async search to complete' },
    );
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'success', search_id: res.body.search_id });
    expect(done.body.results[0]).toMatchObject({ e164: '+14155552671' });
  });

  describe('HTTP edges', () => {
    it('echoes a safe X-Request-Id and replaces an unsafe one', async () => {
      const echoed = await api.get('/v1/account', { key, headers: { 'x-request-id': 'client-id_123.abc' } });
      expect(echoed.headers.get('x-request-id')).toBe('client-id_123.abc');
      const unsafe = await api.get('/v1/account', { key, headers: { 'x-request-id': 'bad id with spaces' } });
      expect(unsafe.headers.get('x-request-id')).toMatch(/^req_/);
      const tooLong = await api.get('/v1/account', { key, headers: { 'x-request-id': 'a'.repeat(129) } });
      expect(tooLong.headers.get('x-request-id')).toMatch(/^req_/);
      const none = await api.get('/nowhere');
      expect(none.headers.get('x-request-id')).toMatch(/^req_/);
    });

    it('404 for unknown routes, 405 with Allow for known paths', async () => {
      const unknown = await api.get<ErrorBody>('/v1/nothing-here', { key });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ status: 'error', error: { code: 'not_found' } });
      const wrong = await api.request<ErrorBody>('PUT', '/v1/verify/phone', { key, json: { phone: '+14155552671' } });
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get('allow')).toBe('POST');
      expect(wrong.body.error.code).toBe('method_not_allowed');
      const keys = await api.request<ErrorBody>('PATCH', '/v1/auth/keys', { key });
      expect(keys.status).toBe(405);
      expect(keys.headers.get('allow')).toBe('GET, HEAD, POST');
      const withId = await api.request<ErrorBody>('GET', '/v1/auth/keys/key_abc', { key });
      expect(withId.status).toBe(405);
      expect(withId.headers.get('allow')).toBe('DELETE');
    });

    it('415 for a body that is not JSON, 400 invalid_json for broken JSON, 413 over 64 KiB — nothing charged', async () => {
      const before = await ledgerState(accountId);
      const plain = await api.request<ErrorBody>('POST', '/v1/verify/phone', {
        key,
        raw: '{"phone":"+14155552671"}',
        contentType: 'text/plain',
      });
      expect(plain.status).toBe(415);
      expect(plain.body.error.code).toBe('unsupported_media_type');
      const form = await api.request<ErrorBody>('POST', '/v1/verify/phone', {
        key,
        raw: 'phone=1',
        contentType: 'application/x-www-form-urlencoded',
      });
      expect(form.status).toBe(415);
      const broken = await api.request<ErrorBody>('POST', '/v1/verify/phone', {
        key,
        raw: '{"phone":',
        contentType: 'application/json',
      });
      expect(broken.status).toBe(400);
      expect(broken.body.error.code).toBe('invalid_json');
      const big = await api.request<ErrorBody>('POST', '/v1/verify/phone', {
        key,
        raw: JSON.stringify({ phone: '+14155552671', pad: 'x'.repeat(70 * 1024) }),
        contentType: 'application/json',
      });
      expect(big.status).toBe(413);
      expect(big.body.error.code).toBe('payload_too_large');
      const empty = await api.request<ErrorBody>('POST', '/v1/verify/phone', {
        key,
        raw: '',
        contentType: 'application/json',
      });
      expect(empty.status).toBe(400);
      expect(empty.body.error.code).toBe('validation_error');
      expect(await ledgerState(accountId)).toEqual(before);
      for (const r of [plain, form, broken, big, empty]) {
        expect(r.text).not.toMatch(/\bat \w|\.ts:|\/work\/|node_modules|SELECT|INSERT/);
      }
    });

    it('checks authentication before anything is validated or charged', async () => {
      const res = await api.post<ErrorBody>('/v1/verify/phone', { nonsense: true });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    });

    it.each([['x'.repeat(256)], ['order 42']])(
      'rejects a malformed Idempotency-Key (%#), saying what it may hold',
      async (value) => {
        const res = await api.post<ErrorBody>(
          '/v1/verify/phone',
          { phone: '+14155552671' },
          { key, headers: { 'idempotency-key': value } },
        );
        expect(res.status).toBe(400);
        // A space is printable ASCII: the message must not read as if "order 42" were allowed.
        expect(res.body.error.details).toEqual([
          {
            field: 'Idempotency-Key',
            issue: 'must be 1–255 visible ASCII characters (no spaces or control characters)',
          },
        ]);
      },
    );

    it('carries RateLimit headers on /v1 answers', async () => {
      const res = await api.get('/v1/account', { key });
      expect(Number(res.headers.get('ratelimit-limit'))).toBe(100);
      expect(Number(res.headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
      expect(res.headers.get('ratelimit-reset')).toMatch(/^\d+$/);
    });
  });
});
