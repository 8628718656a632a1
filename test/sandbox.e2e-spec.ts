import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { companyRowOf, personRowOf } from '@dossier/domain';
import { openDataSource, writeCompanies, writePeople } from '@dossier/persistence';
import {
  RESULT_SCHEMAS,
  SANDBOX_CASES,
  SANDBOX_ROUTES,
  SANDBOX_UNLISTED,
  type CompanyResultItem,
  type PersonResultItem,
  type ResultItem,
  type SandboxCheckCase,
  type SandboxSearchCase,
  type SourceReport,
} from '@dossier/contracts';
import {
  Api,
  FakeUpstream,
  REPO_ROOT,
  Stack,
  ledgerState,
  sandboxFindsOf,
  testEnv,
  underivedAges,
  waitFor,
} from '@dossier/testing';

/** A lookup's answer, in the result contract's own types. */
interface Envelope {
  status: string;
  search_id: string;
  credits_remaining: number;
  results: ResultItem[];
  sources: SourceReport[];
}
type KeyList = { keys: { id: string; prefix: string; name: string | null; mode: string }[] };

const SIGNUP = 3;

/**
 * Test keys end to end (ADR 0021): gateway and worker as separate processes, with a person and a company
 * upstream configured (loopback fakes that count their calls) and local-index records named like the
 * synthetic ones — a test key's lookups must reach neither, cost nothing, and answer what the docs list.
 */
describe('test keys (sandbox) over HTTP (gateway + worker processes, real Redis and Postgres)', () => {
  let db: DataSource;
  let pdl: FakeUpstream;
  let companiesHouse: FakeUpstream;
  let stack: Stack;
  let api: Api;
  let live: string;
  let test: string;
  let accountId: string;
  const source = `sandbox-e2e-${randomUUID()}`;

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 2, applicationName: 'sandbox-e2e' });
    // The operator's records for the very names the sandbox answers: a test key must never see them.
    await writePeople(db, [
      personRowOf({ source, external_id: 'p1', full_name: 'Alex Sandbox', emails: ['operator-record@example.com'] }),
    ]);
    await writeCompanies(db, [
      companyRowOf({ source, external_id: 'c1', name: 'Sandbox Widgets Ltd', country: 'GB', status: 'active' }),
    ]);
    [pdl, companiesHouse] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
    pdl.reply({ status: 500, body: { error: 'the fake upstream was called' } });
    companiesHouse.reply({ status: 500, body: { error: 'the fake upstream was called' } });
    stack = await Stack.start({
      label: 'sandbox',
      env: {
        SIGNUP_CREDITS: String(SIGNUP),
        PDL_API_KEY: 'e2e-pdl-key-sandbox',
        PDL_BASE_URL: pdl.url,
        COMPANIES_HOUSE_API_KEY: 'e2e-ch-key-sandbox',
        COMPANIES_HOUSE_BASE_URL: companiesHouse.url,
      },
    });
    api = new Api(stack.baseUrl);
    ({ key: live, accountId } = await api.register(SIGNUP));
    const created = await api.post<{ api_key: string; key_id: string }>(
      '/v1/auth/keys',
      { name: 'sandbox', mode: 'test' },
      { key: live },
    );
    expect(created.status).toBe(201);
    test = created.body.api_key;
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([pdl?.close(), companiesHouse?.close()]);
    await db?.query(`DELETE FROM people WHERE source = $1`, [source]);
    await db?.query(`DELETE FROM companies WHERE source = $1`, [source]);
    await db?.destroy();
  });

  it('creates a dsk_test_… key on request, a live dsk_… key by default, and lists each key with its mode', async () => {
    expect(test).toMatch(/^dsk_test_[0-9A-Za-z]{40}$/);
    const plain = await api.post<{ api_key: string }>('/v1/auth/keys', { name: 'plain' }, { key: live });
    expect(plain.body.api_key).toMatch(/^dsk_[0-9A-Za-z]{40}$/);
    const list = await api.get<KeyList>('/v1/auth/keys', { key: live });
    expect(list.status).toBe(200);
    expect(list.body.keys.map((k) => [k.name, k.mode])).toEqual([
      ['default', 'live'],
      ['sandbox', 'test'],
      ['plain', 'live'],
    ]);
    expect(test.startsWith(list.body.keys[1]!.prefix)).toBe(true);
    expect(list.body.keys[1]!.prefix).toMatch(/^dsk_test_.{4}$/);
  });

  it('keeps a test key in the test world: it makes only test keys, sees and revokes only test keys (ADR 0034)', async () => {
    const refused = await api.post<{ error: { code: string; details: { field: string }[] } }>(
      '/v1/auth/keys',
      { mode: 'live' },
      { key: test },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.map((d) => d.field)).toEqual(['mode']);
    const made = await api.post<{ api_key: string; key_id: string }>('/v1/auth/keys', { name: 'ci' }, { key: test });
    expect(made.status).toBe(201);
    expect(made.body.api_key).toMatch(/^dsk_test_[0-9A-Za-z]{40}$/);

    const seen = await api.get<KeyList>('/v1/auth/keys', { key: test });
    expect(seen.body.keys.map((k) => [k.name, k.mode])).toEqual([
      ['sandbox', 'test'],
      ['ci', 'test'],
    ]);
    const liveKeys = (await api.get<KeyList>('/v1/auth/keys', { key: live })).body.keys.filter(
      (k) => k.mode === 'live',
    );
    expect(liveKeys.length).toBeGreaterThan(0);
    for (const k of liveKeys) {
      expect((await api.request('DELETE', `/v1/auth/keys/${k.id}`, { key: test })).status).toBe(404);
    }
    expect((await api.get('/v1/account', { key: live })).status).toBe(200);
    expect((await api.request('DELETE', `/v1/auth/keys/${made.body.key_id}`, { key: test })).status).toBe(200);
    expect((await api.get('/v1/account', { key: made.body.api_key })).status).toBe(401);
  });

  it('refuses a mode other than live or test with 400, creating nothing', async () => {
    for (const mode of ['sandbox', 'TEST', 1, null]) {
      const res = await api.post<{ error: { code: string; details: { field: string }[] } }>(
        '/v1/auth/keys',
        { mode },
        { key: live },
      );
      expect([mode, res.status, res.body.error.code, res.body.error.details[0]?.field]).toEqual([
        mode,
        400,
        'validation_error',
        'mode',
      ]);
    }
    expect((await api.get<KeyList>('/v1/auth/keys', { key: live })).body.keys).toHaveLength(4);
  });

  it("lists exactly the data set's inputs and answers in the walkthrough's Test keys table", () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/walkthrough.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Test keys'));
    const table = section
      .slice(0, section.indexOf('\n\n', section.indexOf('| Endpoint')))
      .split('\n')
      .filter((l) => l.startsWith('| `POST '))
      .map((l) =>
        l
          .split('|')
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );
    expect(table).toEqual(
      SANDBOX_CASES.map((c) => [`\`POST ${SANDBOX_ROUTES[c.kind]}\``, `\`${JSON.stringify(c.body)}\``, c.answer]),
    );
  });

  it.each(SANDBOX_CASES.map((c) => [`${c.kind}: ${c.answer}`, c] as const))(
    'answers %s as documented, free, from the sandbox alone',
    async (_name, c) => {
      const years = [new Date().getUTCFullYear()];
      const res = await api.post<Envelope>(SANDBOX_ROUTES[c.kind], c.body, { key: test });
      years.push(new Date().getUTCFullYear());
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('success');
      if (c.kind === 'phone' || c.kind === 'email') expect(res.body.results).toEqual(c.items);
      else {
        // The live search's items over the synthetic records: the documented finds, each a full item.
        const items = res.body.results as (PersonResultItem | CompanyResultItem)[];
        expect(sandboxFindsOf(c.kind, items)).toEqual(c.finds);
        for (const item of items) {
          const checked = RESULT_SCHEMAS[c.kind].safeParse(item);
          expect(checked.success ? [] : checked.error.issues).toEqual([]);
        }
        if (c.kind === 'person') expect(underivedAges(items as PersonResultItem[], years)).toEqual([]);
      }
      for (const item of res.body.results) expect(item.sources).toEqual(['sandbox']);
      expect(res.body.sources).toEqual([
        {
          provider: 'sandbox',
          outcome: c.outcome,
          took_ms: expect.any(Number),
          ...(c.outcome === 'unknown' ? { detail: SANDBOX_UNLISTED } : {}),
        },
      ]);
      expect(res.headers.get('x-credits-spent')).toBe('0');
    },
  );

  it('answers ANY phone number or address, listed or not, with exactly one item, as a live key does, free', async () => {
    const before = await ledgerState(accountId);
    for (const [kind, body] of [
      ['phone', { phone: '+1 650 253 0000' }],
      ['phone', { phone: '+1 555 0100' }],
      ['email', { email: 'someone.else@gmail.com' }],
      ['email', { email: 'not an address' }],
    ] as const) {
      const res = await api.post<Envelope>(SANDBOX_ROUTES[kind], body, { key: test });
      expect([body, res.status, res.body.results.length]).toEqual([body, 200, 1]);
      // The live item's fields, the sandbox's source only, nothing charged.
      expect(Object.keys(res.body.results[0]!).sort()).toEqual(Object.keys(RESULT_SCHEMAS[kind].shape).sort());
      expect(res.body.results[0]!.sources).toEqual(['sandbox']);
      expect(res.body.sources).toEqual([
        { provider: 'sandbox', outcome: 'unknown', took_ms: expect.any(Number), detail: SANDBOX_UNLISTED },
      ]);
      expect(res.headers.get('x-credits-spent')).toBe('0');
    }
    expect(await ledgerState(accountId)).toEqual(before);
  });

  it('leaves balance and ledger untouched after many test lookups, down to 0 credits, while the live key on the same account still charges', async () => {
    const before = await ledgerState(accountId);
    expect(before.balance).toBe(SIGNUP);
    const run = () =>
      Promise.all(SANDBOX_CASES.map((c) => api.post<Envelope>(SANDBOX_ROUTES[c.kind], c.body, { key: test })));
    for (const res of await run()) {
      expect([res.status, res.body.credits_remaining]).toEqual([200, SIGNUP]);
    }
    expect(await ledgerState(accountId)).toEqual(before);

    // The live key charges as always, down to an empty balance…
    for (let left = SIGNUP - 1; left >= 0; left -= 1) {
      const paid = await api.post<Envelope>('/v1/verify/phone', { phone: '+14155552671' }, { key: live });
      expect([paid.status, paid.headers.get('x-credits-spent'), paid.body.credits_remaining]).toEqual([200, '1', left]);
    }
    const empty = await ledgerState(accountId);
    expect(empty).toMatchObject({ balance: 0, ledger_sum: 0, reserves: before.reserves + SIGNUP, pending: 0 });
    const refused = await api.post('/v1/verify/phone', { phone: '+14155552671' }, { key: live });
    expect(refused.status).toBe(402);

    // …and with nothing left the test key still answers, reporting the real balance.
    for (const res of await run()) expect([res.status, res.body.credits_remaining]).toEqual([200, 0]);
    expect(await ledgerState(accountId)).toEqual(empty);
  });

  it('never calls a configured upstream nor returns the operator’s local records', async () => {
    // A name with a location is what PDL is asked about: the live search below reaches it.
    const ALEX = { name: 'Alex Sandbox', location: 'Springfield, IL' };
    const person = await api.post<Envelope>('/v1/search/person', ALEX, { key: test });
    const company = await api.post<Envelope>(
      '/v1/search/company',
      { company_name: 'Sandbox Widgets Ltd' },
      { key: test },
    );
    for (const res of [person, company]) {
      expect(res.body.sources.map((s) => s.provider)).toEqual(['sandbox']);
      for (const item of res.body.results) expect(item.sources).toEqual(['sandbox']);
    }
    expect(JSON.stringify(person.body)).not.toContain('operator-record@example.com');
    expect([pdl.requests.length, companiesHouse.requests.length]).toEqual([0, 0]);

    // The same searches with a live key do reach both (so the fakes would have seen a test key's calls).
    const { key: payer } = await api.register(SIGNUP);
    const livePerson = await api.post<Envelope>('/v1/search/person', ALEX, { key: payer });
    expect(livePerson.body.sources.map((s) => [s.provider, s.outcome])).toEqual(
      expect.arrayContaining([
        ['local', 'found'],
        ['pdl', 'error'],
      ]),
    );
    expect(JSON.stringify(livePerson.body)).toContain('operator-record@example.com');
    await api.post<Envelope>('/v1/search/company', { company_name: 'Sandbox Widgets Ltd' }, { key: payer });
    expect(pdl.requests.length).toBeGreaterThan(0);
    expect(companiesHouse.requests.length).toBeGreaterThan(0);
  });

  it('refuses bad input with the same 400 as a live key, charging nothing', async () => {
    const before = await ledgerState(accountId);
    for (const [path, body, field] of [
      ['/v1/verify/phone', { phone: 'not a number' }, 'phone'],
      ['/v1/verify/email', {}, 'email'],
      ['/v1/search/person', { location: 'Springfield' }, 'name'],
    ] as const) {
      const asTest = await api.post<{ error: { code: string; details: { field: string }[] } }>(path, body, {
        key: test,
      });
      const asLive = await api.post<{ error: { code: string; details: { field: string }[] } }>(path, body, {
        key: live,
      });
      expect([path, asTest.status, asTest.body.error.code, asTest.body.error.details[0]?.field]).toEqual([
        path,
        400,
        'validation_error',
        field,
      ]);
      expect(asTest.body.error.details).toEqual(asLive.body.error.details);
    }
    expect(await ledgerState(accountId)).toEqual(before);
  });

  it('rate-limits a test key as any key: its own bucket, 429 with Retry-After once spent', async () => {
    const limited = new Api((await stack.startGateway({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '1' })).baseUrl);
    const created = await api.post<{ api_key: string }>('/v1/auth/keys', { mode: 'test' }, { key: live });
    const fresh = created.body.api_key;
    const mobile = SANDBOX_CASES[0]!;
    const first = await limited.post<Envelope>(SANDBOX_ROUTES[mobile.kind], mobile.body, { key: fresh });
    const second = await limited.post<{ error: { code: string } }>(SANDBOX_ROUTES[mobile.kind], mobile.body, {
      key: fresh,
    });
    expect([first.status, second.status, second.body.error.code]).toEqual([200, 429, 'rate_limited']);
    expect(second.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('answers 202 with Prefer: respond-async, then GET /v1/searches/{id} gives the synthetic answer', async () => {
    const mobile = SANDBOX_CASES.find(
      (c): c is SandboxCheckCase<'phone'> => c.kind === 'phone' && c.outcome === 'found',
    )!;
    const res = await api.post<Envelope>(SANDBOX_ROUTES.phone, mobile.body, {
      key: test,
      headers: { prefer: 'respond-async' },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'pending', search_id: expect.stringMatching(/^srch_/) });
    const done = await waitFor(
      () => api.get<Envelope>(`/v1/searches/${res.body.search_id}`, { key: test }),
      (r) => r.status !== 202,
      { timeoutMs: 10_000, what: 'the async test search to complete' },
    );
    expect(done.status).toBe(200);
    expect(done.body.results).toEqual(mobile.items);
    expect(done.body.credits_remaining).toBe((await ledgerState(accountId)).balance);
  });

  it('replays an Idempotency-Key as with a live key, and never across modes', async () => {
    const dissolved = SANDBOX_CASES.find(
      (c): c is SandboxSearchCase<'company'> => c.kind === 'company' && c.answer === 'a dissolved company',
    )!;
    const idem = { 'idempotency-key': `sandbox-${randomUUID()}` };
    const first = await api.post<Envelope>(SANDBOX_ROUTES.company, dissolved.body, { key: test, headers: idem });
    const again = await api.post<Envelope>(SANDBOX_ROUTES.company, dissolved.body, { key: test, headers: idem });
    expect(first.status).toBe(200);
    expect(again.body.search_id).toBe(first.body.search_id);
    expect(again.body.results).toEqual(first.body.results);
    expect(sandboxFindsOf('company', again.body.results as CompanyResultItem[])).toEqual(dissolved.finds);
    // The live key of the same account with the same key and body is another request: conflict, not a replay.
    const asLive = await api.post<{ error: { code: string } }>(SANDBOX_ROUTES.company, dissolved.body, {
      key: live,
      headers: idem,
    });
    expect([asLive.status, asLive.body.error.code]).toEqual([409, 'idempotency_conflict']);
  });
  it('keeps the modes apart on reads: each key finds only searches, history and batches its own mode made', async () => {
    const owner = await api.register(SIGNUP);
    const made = await api.post<{ api_key: string }>('/v1/auth/keys', { mode: 'test' }, { key: owner.key });
    const testKey = made.body.api_key;
    const mobile = SANDBOX_CASES.find((c) => c.kind === 'phone')!;
    const liveSearch = await api.post<Envelope>('/v1/verify/phone', { phone: '+14155552671' }, { key: owner.key });
    const testSearch = await api.post<Envelope>(SANDBOX_ROUTES.phone, mobile.body, { key: testKey });
    expect([liveSearch.status, testSearch.status]).toEqual([200, 200]);
    const batchBody = { requests: [{ kind: 'phone', input: { phone: '+14155552671' } }] };
    const liveBatch = await api.post<{ batch_id: string }>('/v1/batch', batchBody, { key: owner.key });
    const testBatch = await api.post<{ batch_id: string }>('/v1/batch', batchBody, { key: testKey });
    expect([liveBatch.status, testBatch.status]).toEqual([200, 200]);

    const status = async (path: string, key: string) => (await api.get(path, { key })).status;
    for (const [mine, other, search, batch] of [
      [owner.key, testKey, liveSearch.body.search_id, liveBatch.body.batch_id],
      [testKey, owner.key, testSearch.body.search_id, testBatch.body.batch_id],
    ] as const) {
      expect(await status(`/v1/searches/${search}`, mine)).toBe(200);
      expect(await status(`/v1/searches/${search}`, other)).toBe(404);
      expect(await status(`/v1/batches/${batch}`, mine)).toBe(200);
      expect(await status(`/v1/batches/${batch}`, other)).toBe(404);
    }
    const listed = async (key: string) =>
      (await api.get<{ searches: { search_id: string }[] }>('/v1/searches?limit=100', { key })).body.searches
        .map((s) => s.search_id)
        .sort();
    const liveIds = await listed(owner.key);
    const testIds = await listed(testKey);
    expect(liveIds).toHaveLength(2);
    expect(testIds).toHaveLength(2);
    expect(liveIds).toContain(liveSearch.body.search_id);
    expect(testIds).toContain(testSearch.body.search_id);
    expect(liveIds.filter((id) => testIds.includes(id))).toEqual([]);
  });
});
