import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { companyRowOf, personRowOf } from '@dossier/domain';
import { openDataSource, writeCompanies, writePeople } from '@dossier/persistence';
import {
  API_RESULT_FIELDS,
  Api,
  FakeUpstream,
  REPO_ROOT,
  Stack,
  ledgerState,
  settled,
  testEnv,
  type FakeAnswer,
} from '@dossier/testing';

type Envelope = {
  status: string;
  results: Record<string, unknown>[];
  credits_remaining: number;
  sources: { provider: string; outcome: string }[];
};

const SIGNUP = 100;

/**
 * Person and company search end to end: records in the local index (written straight to the run's
 * database), the gateway and a worker as processes, a username presence site on loopback.
 */
describe('person and company search over HTTP (local index, gateway + worker)', () => {
  let db: DataSource;
  let stack: Stack;
  let api: Api;
  let fake: FakeUpstream;
  let dir: string;
  const source = `people-e2e-${randomUUID()}`;
  // Names no other test writes, so results are this test's records only.
  const tag = `Qx${randomUUID()
    .slice(0, 6)
    .replace(/[^a-z]/g, 'k')}`;
  const handle = `ghopper_${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 2, applicationName: 'people-e2e' });
    await writePeople(db, [
      personRowOf({
        source,
        external_id: 'grace',
        full_name: `Grace ${tag} Hopper`,
        emails: [`grace@${tag.toLowerCase()}.example`],
        phones: ['+1 202 555 0147'],
        usernames: [handle],
        locations: [{ city: 'Arlington', region: 'VA', country: 'US' }],
        birth_year: 1986,
      }),
      personRowOf({
        source,
        external_id: 'grace-2',
        full_name: `Grace ${tag} Hopper`,
        locations: [{ city: 'Dublin', region: null, country: 'IE' }],
        birth_year: 1950,
      }),
    ]);
    await writeCompanies(db, [
      companyRowOf({
        source,
        external_id: 'c1',
        name: `${tag} Widgets Limited`,
        registration_number: '00445790',
        jurisdiction: 'GB',
        country: 'GB',
        domain: `${tag.toLowerCase()}-widgets.example`,
        status: 'active',
        incorporated_on: '1999-03-04',
      }),
    ]);
    fake = await FakeUpstream.start();
    fake.reply((req): FakeAnswer =>
      req.url === `/profile/${handle}` ? { status: 200, body: '<h1>profile</h1>' } : { status: 404, body: 'no' },
    );
    dir = mkdtempSync(join(tmpdir(), 'dossier-people-e2e-'));
    writeFileSync(
      join(dir, 'sites.json'),
      JSON.stringify({ Profile: { url: `${fake.url}/profile/{}`, urlMain: `${fake.url}/`, errorType: 'status_code' } }),
    );
    stack = await Stack.start({
      label: 'people',
      env: { SIGNUP_CREDITS: String(SIGNUP) },
      workerEnv: { USERNAME_SITES_FILE: join(dir, 'sites.json') },
    });
    api = new Api(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
    await db?.query(`DELETE FROM people WHERE source = $1`, [source]);
    await db?.query(`DELETE FROM companies WHERE source = $1`, [source]);
    await db?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds a person by name, namesake in the searched city first, every field answered, one credit', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const res = await api.post<Envelope>(
      '/v1/search/person',
      { name: `hopper grace ${tag}`, location: 'Dublin', age_range: '70+' },
      { key },
    );
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1); // the one in Arlington is 40: outside the age range
    const [item] = res.body.results;
    expect(Object.keys(item!).sort()).toEqual([...API_RESULT_FIELDS.PersonResult].sort());
    expect(item).toMatchObject({
      full_name: `Grace ${tag} Hopper`,
      locations: [{ city: 'Dublin', region: null, country: 'IE' }],
      birth_year: 1950,
      matched_on: ['name', 'location', 'age_range'],
      sources: ['local'],
    });
    expect(res.body.sources).toEqual([
      { provider: 'local', outcome: 'found', took_ms: expect.any(Number) },
      { provider: 'pdl', outcome: 'skipped', took_ms: 0, detail: 'not configured: set PDL_API_KEY' },
      {
        provider: 'watchlists',
        outcome: 'skipped',
        took_ms: 0,
        detail: 'no watchlist imported (cli watchlists:import <list> FILE)',
      },
    ]);
    expect(res.body.credits_remaining).toBe(SIGNUP - 1);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));

    const both = await api.post<Envelope>(
      '/v1/search/person',
      { name: `Grace ${tag} Hopper`, location: 'Arlington, VA' },
      { key },
    );
    expect(both.body.results.map((r) => (r['locations'] as { city: string }[])[0]!.city)).toEqual([
      'Arlington',
      'Dublin',
    ]);
    // A state's name finds a record in its USPS code, a country's common name one in its ISO code.
    const named = await api.post<Envelope>(
      '/v1/search/person',
      { name: `Grace ${tag} Hopper`, location: 'Virginia, USA' },
      { key },
    );
    expect(named.body.results.map((r) => [r['match_score'], r['matched_on']])).toEqual([
      [0.825, ['name', 'location']],
      [0.638, ['name']],
    ]);
  });

  it('finds a person by e-mail and by a phone in another format, through the generic search too', async () => {
    const { key } = await api.register(SIGNUP);
    for (const body of [{ email: `GRACE@${tag}.example` }, { phone: '+1 (202) 555-0147' }]) {
      const res = await api.post<Envelope>('/v1/search/person', body, { key });
      expect([body, res.body.results.map((r) => r['full_name'])]).toEqual([body, [`Grace ${tag} Hopper`]]);
    }
  });

  it("routes the generic search's query by its shape: e-mail, phone, @handle, domain, registration number", async () => {
    const { key } = await api.register(SIGNUP);
    /** What a generic search for `query` answered: its status and each item's name and matched_on. */
    const search = async (type: string, query: string, country?: string) => {
      const res = await api.post<Envelope>('/v1/search', { type, query, ...(country ? { country } : {}) }, { key });
      return {
        query,
        status: res.status,
        found: res.body.results.map((r) => [r['full_name'] ?? r['name'], r['matched_on']]),
      };
    };
    const grace = `Grace ${tag} Hopper`;
    const email = `GRACE@${tag}.example`;
    expect(await search('person', email)).toEqual({ query: email, status: 200, found: [[grace, ['email']]] });
    // A national number, read in the operator's default region (US) as a person search reads it.
    expect(await search('person', '(202) 555-0147')).toMatchObject({ status: 200, found: [[grace, ['phone']]] });
    expect(await search('person', `@${handle}`)).toMatchObject({ status: 200, found: [[grace, ['username']]] });
    const company = `${tag} Widgets Limited`;
    const url = `https://www.${tag.toLowerCase()}-widgets.example/about`;
    expect(await search('company', url)).toMatchObject({ status: 200, found: [[company, ['domain']]] });
    // Other tests' companies may hold the same number: this one is among them.
    expect((await search('company', '00445790', 'GB')).found).toContainEqual([
      company,
      ['registration_number', 'country'],
    ]);
    // What is none of the shapes is the name, as before.
    expect(await search('person', grace)).toMatchObject({
      status: 200,
      found: [
        [grace, ['name']],
        [grace, ['name']],
      ],
    });
    // A query its shape sends to a field that refuses it is a 400 naming query; nothing is charged.
    const refused = await api.post<{ error: { details: unknown } }>(
      '/v1/search',
      { type: 'person', query: '555-01' },
      { key },
    );
    expect([refused.status, refused.body.error.details]).toEqual([
      400,
      [{ field: 'query', issue: "is not a phone number in US (read in the operator's default region)" }],
    ]);
  });

  it('answers a person search’s limit and min_score, and says how many items there were', async () => {
    const family = `Many${tag}`;
    await writePeople(
      db,
      Array.from({ length: 30 }, (_, i) =>
        personRowOf({ source, external_id: `many-${i}`, full_name: `Pat ${family}`, birth_year: 1950 + i }),
      ),
    );
    const { key } = await api.register(SIGNUP);
    type Counted = Envelope & { search_id: string; total_results?: number };
    const search = (extra: Record<string, unknown>) =>
      api.post<Counted>('/v1/search/person', { name: `Pat ${family}`, ...extra }, { key });
    const byDefault = await search({});
    expect([byDefault.status, byDefault.body.results.length, byDefault.body.total_results]).toEqual([200, 25, 30]);
    const five = await search({ limit: 5 });
    expect([five.body.results.length, five.body.total_results, five.body.credits_remaining]).toEqual([
      5,
      30,
      SIGNUP - 2,
    ]);
    // The stored search, a batch item and the generic GET say the same.
    const stored = await api.get<Counted>(`/v1/searches/${five.body.search_id}`, { key });
    expect([stored.body.results.length, stored.body.total_results]).toEqual([5, 30]);
    const batch = await api.post<{ items: Counted[] }>(
      '/v1/batch',
      { requests: [{ kind: 'person', input: { name: `Pat ${family}`, limit: 2 } }] },
      { key },
    );
    expect([batch.body.items[0]!.results.length, batch.body.items[0]!.total_results]).toEqual([2, 30]);
    // A name alone scores 0.75: above it, nothing is answered or counted, and nothing is charged.
    const above = await search({ min_score: 0.8 });
    expect([above.status, above.body.results, above.body.total_results, above.body.credits_remaining]).toEqual([
      200,
      [],
      0,
      SIGNUP - 3,
    ]);
    for (const [field, value] of [
      ['limit', 0],
      ['limit', 101],
      ['limit', 2.5],
      ['limit', '5'],
      ['min_score', 1.5],
      ['min_score', -0.1],
    ] as const) {
      const res = await api.post<{ error: { details: { field: string }[] } }>(
        '/v1/search/person',
        { name: `Pat ${family}`, [field]: value },
        { key },
      );
      expect([field, value, res.status, res.body.error.details.map((d) => d.field)]).toEqual([
        field,
        value,
        400,
        [field],
      ]);
    }
    expect((await api.get<{ credits_remaining: number }>('/v1/account', { key })).body.credits_remaining).toBe(
      SIGNUP - 3,
    );
  });

  it('keeps a generic person search to its country, and a search no one there matches is free', async () => {
    const { key } = await api.register(SIGNUP);
    const inIreland = await api.post<Envelope>(
      '/v1/search',
      { query: `Grace ${tag} Hopper`, type: 'person', country: 'ie' },
      { key },
    );
    expect(inIreland.status).toBe(200);
    expect(inIreland.body.results.map((r) => [r['locations'], r['matched_on']])).toEqual([
      [[{ city: 'Dublin', region: null, country: 'IE' }], ['name', 'country']],
    ]);
    expect(inIreland.body.credits_remaining).toBe(SIGNUP - 1);
    const inFrance = await api.post<Envelope>(
      '/v1/search',
      { query: `Grace ${tag} Hopper`, type: 'person', country: 'FR' },
      { key },
    );
    expect([inFrance.status, inFrance.body.results, inFrance.body.credits_remaining]).toEqual([200, [], SIGNUP - 1]);
  });

  it('puts the accounts a username check found on the local person who holds that handle', async () => {
    const { key } = await api.register(SIGNUP);
    const res = await api.post<Envelope>('/v1/search', { query: `@${handle}`, type: 'username' }, { key });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
    expect(res.body.results[0]).toMatchObject({
      full_name: `Grace ${tag} Hopper`,
      usernames: [handle],
      accounts: [{ service: 'Profile', username: handle, url: `${fake.url}/profile/${handle}` }],
      matched_on: ['username'],
      sources: ['local', 'site:Profile'],
    });
  });

  it('finds a company by name without its legal form, by registration number and by URL, within a country', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    for (const body of [
      { company_name: `${tag} widgets ltd`, country: 'GB' },
      { registration_number: '445790' },
      { domain: `https://www.${tag.toLowerCase()}-widgets.example/about` },
    ]) {
      const res = await api.post<Envelope>('/v1/search/company', body, { key });
      expect([body, res.status, res.body.results.length]).toEqual([body, 200, 1]);
      expect(res.body.results[0]).toMatchObject({
        name: `${tag} Widgets Limited`,
        registration_number: '00445790',
        status: 'active',
        incorporated_on: '1999-03-04',
        sources: ['local'],
      });
    }
    const elsewhere = await api.post<Envelope>(
      '/v1/search/company',
      { company_name: `${tag} Widgets`, country: 'US' },
      { key },
    );
    expect(elsewhere.body.results).toEqual([]);
    expect(elsewhere.headers.get('x-credits-spent')).toBe('0');
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 3, { reserves: 4, captures: 3, releases: 1 }));
  });

  it('merges the same company from GLEIF and the local index into one item with both sources', async () => {
    const gleif = await FakeUpstream.start();
    const record = {
      type: 'lei-records',
      id: '5493001KJTIIGC8Y1R12',
      attributes: {
        lei: '5493001KJTIIGC8Y1R12',
        entity: {
          legalName: { name: `${tag.toUpperCase()} WIDGETS LIMITED`, language: 'en' },
          legalAddress: {
            addressLines: ['1 High Street'],
            city: 'London',
            region: null,
            country: 'GB',
            postalCode: 'EC1A 1AA',
          },
          registeredAs: '445790',
          jurisdiction: 'GB',
          status: 'ACTIVE',
          creationDate: '1999-03-04T00:00:00Z',
        },
      },
    };
    gleif.reply((req): FakeAnswer => ({
      status: 200,
      headers: { 'content-type': 'application/vnd.api+json' },
      body: JSON.stringify({ data: decodeURIComponent(req.url).includes(tag) ? [record] : [] }),
    }));
    const withGleif = await Stack.start({
      label: 'people-gleif',
      env: { SIGNUP_CREDITS: String(SIGNUP) },
      workerEnv: { GLEIF_ENABLED: 'true', GLEIF_BASE_URL: gleif.url },
    });
    try {
      const { key, accountId } = await new Api(withGleif.baseUrl).register(SIGNUP);
      const res = await new Api(withGleif.baseUrl).post<Envelope>(
        '/v1/search/company',
        { company_name: `${tag} Widgets Ltd` },
        { key },
      );
      expect(res.status).toBe(200);
      expect(res.body.sources.map((s) => [s.provider, s.outcome])).toEqual([
        ['local', 'found'],
        ['gleif', 'found'],
        ['companies-house', 'skipped'],
        ['opencorporates', 'skipped'],
        ['watchlists', 'skipped'],
      ]);
      expect(res.body.results).toHaveLength(1);
      expect(res.body.results[0]).toMatchObject({
        name: `${tag.toUpperCase()} WIDGETS LIMITED`, // the registry's name: GLEIF's precedence is higher
        registration_number: '445790',
        domain: `${tag.toLowerCase()}-widgets.example`, // only the local record knows it
        status: 'active',
        incorporated_on: '1999-03-04',
        sources: ['gleif', 'local'],
      });
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
    } finally {
      await withGleif.stop();
      await gleif.close();
    }
  });

  it('merges the same person from PDL and the local index into one item, each address and number once', async () => {
    const email = `Sean.Thorne@${tag}.example`;
    const local = personRowOf({
      source,
      external_id: 'sean',
      full_name: `Sean ${tag} Thorne`,
      emails: [email],
      phones: ['020 7946 0321'],
      locations: [{ city: 'London', region: null, country: 'UK' }],
      birth_year: 1990,
    });
    await writePeople(db, [local]);
    // PDL's documented answer, about the same person: the address lower-cased, the number in E.164.
    const found = JSON.parse(
      readFileSync(join(REPO_ROOT, 'libs/providers/src/pdl/fixtures/ok/found.json'), 'utf8'),
    ) as FakeAnswer & { body: { data: Record<string, unknown> } };
    Object.assign(found.body.data, {
      work_email: null,
      emails: [{ address: email.toLowerCase(), type: 'personal' }],
      personal_emails: [email.toLowerCase(), 'sthorne@example.org'],
      mobile_phone: '+442079460321',
      phone_numbers: ['+442079460321', '+447700900123'],
      location_locality: 'London',
      location_region: 'England',
      location_country: 'United Kingdom',
    });
    const pdl = await FakeUpstream.start();
    pdl.reply(found);
    const withPdl = await Stack.start({
      label: 'people-pdl',
      env: { SIGNUP_CREDITS: String(SIGNUP) },
      workerEnv: { PDL_API_KEY: 'e2e-people-pdl-key', PDL_BASE_URL: pdl.url },
    });
    try {
      const pdlApi = new Api(withPdl.baseUrl);
      const { key, accountId } = await pdlApi.register(SIGNUP);
      for (const body of [{ email: email.toUpperCase() }, { phone: '+44 20 7946 0321' }]) {
        const res = await pdlApi.post<Envelope>('/v1/search/person', body, { key });
        expect([body, res.status, res.body.sources.map((s) => [s.provider, s.outcome])]).toEqual([
          body,
          200,
          [
            ['local', 'found'],
            ['pdl', 'found'],
          ],
        ]);
        expect([body, res.body.results]).toEqual([
          body,
          [
            expect.objectContaining({
              id: local.id,
              full_name: `Sean ${tag} Thorne`,
              emails: [email, 'sthorne@example.org'],
              phones: ['+442079460321', '+447700900123'],
              locations: [
                { city: 'London', region: null, country: 'GB' },
                { city: 'London', region: 'England', country: 'GB' },
              ],
              birth_year: 1990,
              sources: ['local', 'pdl'],
            }),
          ],
        ]);
      }
      expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 2, { reserves: 2, captures: 2, releases: 0 }));
    } finally {
      await withPdl.stop();
      await pdl.close();
    }
  });

  it('scores a PDL-only person for the searched place and age as the local index does, and says its age', async () => {
    const email = `pdl-only@${tag.toLowerCase()}.example`;
    const born = new Date().getUTCFullYear() - 35;
    const found = JSON.parse(
      readFileSync(join(REPO_ROOT, 'libs/providers/src/pdl/fixtures/ok/found.json'), 'utf8'),
    ) as FakeAnswer & { body: { data: Record<string, unknown> } };
    // PDL's documented answer (likelihood 9, in San Francisco, California, United States), known to PDL only.
    Object.assign(found.body.data, {
      id: `pdl-only-${tag}`,
      work_email: email,
      emails: [{ address: email, type: 'current_professional' }],
      personal_emails: [],
      mobile_phone: null,
      phone_numbers: [],
      birth_year: born,
      birth_date: null,
    });
    const pdl = await FakeUpstream.start();
    pdl.reply(found);
    const withPdl = await Stack.start({
      label: 'people-pdl-only',
      env: { SIGNUP_CREDITS: String(SIGNUP) },
      workerEnv: { PDL_API_KEY: 'e2e-people-pdl-key', PDL_BASE_URL: pdl.url },
    });
    try {
      const pdlApi = new Api(withPdl.baseUrl);
      const { key } = await pdlApi.register(SIGNUP);
      const search = async (extra: Record<string, string>) => {
        const res = await pdlApi.post<Envelope>('/v1/search/person', { email, ...extra }, { key });
        expect([extra, res.status, res.body.sources.map((s) => [s.provider, s.outcome])]).toEqual([
          extra,
          200,
          [
            ['local', 'not_found'],
            ['pdl', 'found'],
          ],
        ]);
        const [item] = res.body.results;
        return [extra, item!['match_score'], item!['matched_on'], item!['age'], item!['sources']];
      };
      // Elsewhere: 85% of the score; a known age in the range: evidence (0.2), as for a local record.
      for (const extra of [{ location: 'Dublin', age_range: '30-40' }])
        expect(await search(extra)).toEqual([extra, 0.782, ['email', 'age_range'], 35, ['pdl']]);
      // In the searched city: location evidence (0.3) on PDL's 0.9; its region "California" is the state
      // CA, its country "United States" is the USA — every part of the place agrees.
      for (const extra of [
        { location: 'San Francisco' },
        { location: 'San Francisco, CA' },
        { location: 'San Francisco, USA' },
      ])
        expect(await search(extra)).toEqual([extra, 0.93, ['email', 'location'], 35, ['pdl']]);
    } finally {
      await withPdl.stop();
      await pdl.close();
    }
  });

  it.each([
    [{ email: 'nope' }, 'email', 'must be an e-mail address'],
    [{ phone: 'call me' }, 'phone', 'is not a phone number'],
    [{ name: 42 }, 'name', 'must be a string'],
    [{ username: 'two words' }, 'username', 'single handle'],
    [{ name: 'Ada', age_range: 'old' }, 'age_range', 'must look like "30-40"'],
  ])('rejects the person body %j naming %s, and charges nothing', async (body, field, issue) => {
    const { key, accountId } = await api.register(SIGNUP);
    const res = await api.post<{ error: { code: string; details: { field: string; issue: string }[] } }>(
      '/v1/search/person',
      body,
      { key },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details).toEqual([{ field, issue: expect.stringContaining(issue) }]);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 0, captures: 0, releases: 0 }));
  });

  it.each([
    [{ domain: 'not a domain' }, 'domain'],
    [{ registration_number: '12;DROP' }, 'registration_number'],
    [{ company_name: 42 }, 'company_name'],
  ])('rejects the company body %j naming %s', async (body, field) => {
    const { key } = await api.register(SIGNUP);
    const res = await api.post<{ error: { details: { field: string }[] } }>('/v1/search/company', body, { key });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d) => d.field)).toEqual([field]);
  });
});
