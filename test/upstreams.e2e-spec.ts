import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { companyRowOf } from '@dossier/domain';
import { openDataSource, writeCompanies } from '@dossier/persistence';
import {
  Api,
  FakeUpstream,
  REPO_ROOT,
  Stack,
  ledgerState,
  testEnv,
  type FakeAnswer,
  type SeenRequest,
} from '@dossier/testing';

interface Source {
  provider: string;
  outcome: string;
  took_ms: number;
  detail?: string;
}
interface Envelope {
  status: string;
  results: Record<string, unknown>[];
  credits_remaining: number;
  sources: Source[];
}

/** A vendor's documented answer, from the provider's fixtures. */
const fixture = (path: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'libs/providers/src', path), 'utf8')) as FakeAnswer;
const GLEIF_FOUND = fixture('gleif/fixtures/ok/found.json');
const GLEIF_EMPTY = fixture('gleif/fixtures/ok/not-found.json');
const CH_SEARCH = fixture('companies-house/fixtures/ok/found.json');
const CH_PROFILE = fixture('companies-house/fixtures/ok/profile.json');
const CH_NO_PROFILE = fixture('companies-house/fixtures/not-ok/profile-404.json');
const PDL_FOUND = fixture('pdl/fixtures/ok/found.json');
const PDL_NO_MATCH = fixture('pdl/fixtures/ok/not-found.json');

const CH_KEY = 'e2e-companies-house-key-7d1f';
const PDL_KEY = 'e2e-pdl-key-93ac5e';

const sourcesOf = (body: Envelope) => Object.fromEntries(body.sources.map((s) => [s.provider, s.outcome]));
/**
 * The searches a registry's fake was asked, without the officer, PSC and parent calls that follow one for the
 * best match (ADR 0066; test/company-depth.e2e-spec.ts covers those).
 */
const searches = (requests: SeenRequest[]) =>
  requests.filter(
    (r) => !/\/(officers|persons-with-significant-control|direct-parent|ultimate-parent)(\?|$)/.test(r.url),
  );

/** The result items one provider contributed to (alone, or merged with others). */
const itemsFrom = (body: Envelope, provider: string) =>
  body.results.filter((r) => (r['sources'] as string[]).includes(provider));

describe('company registries and People Data Labs against fakes of their vendors (gateway + worker processes)', () => {
  let gleif: FakeUpstream;
  let companiesHouse: FakeUpstream;
  let pdl: FakeUpstream;
  let stack: Stack;
  let api: Api;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    [gleif, companiesHouse, pdl] = await Promise.all([
      FakeUpstream.start(),
      FakeUpstream.start(),
      FakeUpstream.start(),
    ]);
    stack = await Stack.start({
      label: 'upstreams',
      env: {
        GLEIF_ENABLED: 'true',
        GLEIF_BASE_URL: gleif.url,
        COMPANIES_HOUSE_API_KEY: CH_KEY,
        COMPANIES_HOUSE_BASE_URL: companiesHouse.url,
        PDL_API_KEY: PDL_KEY,
        PDL_BASE_URL: pdl.url,
      },
    });
    api = new Api(stack.baseUrl);
    ({ key, accountId } = await api.register());
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([gleif?.close(), companiesHouse?.close(), pdl?.close()]);
  });

  /** A lookup, with what it did to the account's ledger. */
  async function charged(path: string, body: unknown) {
    const before = await ledgerState(accountId);
    const res = await api.post<Envelope>(path, body, { key });
    expect(res.status).toBe(200);
    const after = await ledgerState(accountId);
    expect(after.ledger_sum).toBe(after.balance);
    expect(res.body.credits_remaining).toBe(after.balance);
    expect(res.headers.get('x-credits-spent')).toBe(String(before.balance - after.balance));
    return { res, spent: before.balance - after.balance };
  }

  describe('a company search', () => {
    it("answers GLEIF's and Companies House's items, each crediting its registry, and is charged", async () => {
      gleif.reply(GLEIF_FOUND);
      companiesHouse.reply(CH_SEARCH);
      const { res, spent } = await charged('/v1/search/company', { company_name: 'BP p.l.c.', country: 'GB' });
      expect(res.body.status).toBe('success');
      expect(sourcesOf(res.body)).toEqual({
        local: 'not_found',
        gleif: 'found',
        'companies-house': 'found',
        opencorporates: 'skipped',
        watchlists: 'skipped',
      });
      expect(res.body.sources.find((s) => s.provider === 'opencorporates')).toMatchObject({
        detail: 'not configured: set OPENCORPORATES_API_TOKEN',
      });
      expect(itemsFrom(res.body, 'companies-house')).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            name: 'BP P.L.C.',
            registration_number: '00102498',
            jurisdiction: 'GB',
            incorporated_on: '1909-04-14',
            match_score: 0.75,
            matched_on: ['company_name', 'country'],
          }),
        ]),
      );
      expect(itemsFrom(res.body, 'gleif')).toEqual(
        expect.arrayContaining([expect.objectContaining({ registration_number: '00102498', jurisdiction: 'GB' })]),
      );
      // Best first: the exact names before "BP International".
      const scores = res.body.results.map((r) => r['match_score'] as number);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect(res.body.results.at(-1)).toMatchObject({ name: 'BP INTERNATIONAL LIMITED' });
      expect(spent).toBe(1);

      const asked = new URL(searches(gleif.requests).at(-1)!.url, gleif.url).searchParams;
      expect(Object.fromEntries(asked)).toEqual({
        'filter[entity.names]': 'BP p.l.c.',
        'page[size]': '10',
        'filter[entity.legalAddress.country]': 'GB',
      });
      expect(searches(companiesHouse.requests).at(-1)!.headers['authorization']).toBe(
        `Basic ${Buffer.from(`${CH_KEY}:`).toString('base64')}`,
      );
    });

    it("looks a company number up in the register's profile, and by registration number at GLEIF", async () => {
      gleif.reply(GLEIF_FOUND);
      companiesHouse.reply((req) => (req.url === '/company/00102498' ? CH_PROFILE : CH_NO_PROFILE));
      const { res } = await charged('/v1/search/company', { registration_number: '102498' });
      expect(searches(companiesHouse.requests).at(-1)!.url).toBe('/company/00102498');
      expect(
        new URL(searches(gleif.requests).at(-1)!.url, gleif.url).searchParams.get('filter[entity.registeredAs]'),
      ).toBe('102498');
      expect(itemsFrom(res.body, 'companies-house')).toEqual([
        expect.objectContaining({
          name: 'BP P.L.C.',
          industry: 'SIC 06100, 19201',
          matched_on: ['registration_number'],
        }),
      ]);
    });

    it('asks each registry by name when the number finds nothing there that matches the search', async () => {
      const bp = (GLEIF_FOUND as { body: { data: { attributes: { entity: Record<string, unknown> } }[] } }).body
        .data[0]!;
      // GLEIF's number search answers a record registered under another number, with another name.
      const elsewhere = {
        ...GLEIF_FOUND,
        body: {
          data: [
            {
              ...bp,
              attributes: {
                ...bp.attributes,
                entity: {
                  ...bp.attributes.entity,
                  legalName: { name: 'NORDSEE HANDEL GMBH', language: 'de' },
                  otherNames: [],
                  registeredAs: 'HRB 998877',
                },
              },
            },
          ],
        },
      };
      gleif.reply((req) => (req.url.includes('registeredAs') ? elsewhere : GLEIF_FOUND));
      companiesHouse.reply((req) => (req.url.startsWith('/company/') ? CH_NO_PROFILE : CH_SEARCH));
      const [gleifFrom, houseFrom] = [gleif.requests.length, companiesHouse.requests.length];
      const { res, spent } = await charged('/v1/search/company', {
        registration_number: '998877',
        company_name: 'BP p.l.c.',
      });
      expect(sourcesOf(res.body)).toMatchObject({ gleif: 'found', 'companies-house': 'found' });
      expect(res.body.results[0]).toMatchObject({
        name: 'BP P.L.C.',
        matched_on: ['company_name'],
        sources: ['companies-house', 'gleif'],
      });
      expect(
        searches(gleif.requests.slice(gleifFrom)).map((r) => [...new URL(r.url, gleif.url).searchParams.keys()][0]),
      ).toEqual(['filter[entity.registeredAs]', 'filter[entity.names]']);
      expect(
        searches(companiesHouse.requests.slice(houseFrom)).map((r) => new URL(r.url, companiesHouse.url).pathname),
      ).toEqual(['/company/00998877', '/search/companies']);
      expect(spent).toBe(1);
    });

    it("makes one item of the register's company and a local record of it written as an operator may (Scotland, SC98765)", async () => {
      const db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 1, applicationName: 'upstreams-e2e' });
      const source = `upstreams-e2e-${randomUUID()}`;
      try {
        await writeCompanies(db, [
          companyRowOf({
            source,
            external_id: 'highland',
            name: 'Highland Looms Ltd',
            registration_number: 'SC98765',
            jurisdiction: 'Scotland',
          }),
        ]);
        gleif.reply(GLEIF_EMPTY);
        const profile = {
          ...(CH_PROFILE.body as object),
          company_name: 'HIGHLAND LOOMS LIMITED',
          company_number: 'SC098765',
        };
        companiesHouse.reply((req) =>
          req.url === '/company/SC098765' ? { ...CH_PROFILE, body: profile } : CH_NO_PROFILE,
        );
        const { res } = await charged('/v1/search/company', { registration_number: 'SC98765' });
        expect(searches(companiesHouse.requests).at(-1)!.url).toBe('/company/SC098765');
        expect(res.body.results).toEqual([
          expect.objectContaining({
            name: 'HIGHLAND LOOMS LIMITED',
            registration_number: 'SC098765',
            jurisdiction: 'GB',
            matched_on: ['registration_number'],
            sources: ['companies-house', 'local'],
          }),
        ]);
        // The name and number shown are the register's; the local record wrote them otherwise (ADR 0068).
        const profileRecord = { provider: 'companies-house', record_id: '/company/SC098765' };
        const fieldSources = res.body.results[0]!['field_sources'] as Record<string, unknown[]>;
        expect(fieldSources).toMatchObject({ name: [profileRecord], registration_number: [profileRecord] });
        expect(fieldSources['jurisdiction']![0]).toEqual(profileRecord);
        expect(fieldSources['address']).toEqual([profileRecord]);
      } finally {
        await db.query(`DELETE FROM companies WHERE source = $1`, [source]);
        await db.destroy();
      }
    });

    it('finds nothing and charges nothing when no registry has the company', async () => {
      gleif.reply(GLEIF_EMPTY);
      companiesHouse.reply(fixture('companies-house/fixtures/ok/not-found.json'));
      const { res, spent } = await charged('/v1/search/company', { company_name: 'Nonexistent Widgets Ltd' });
      expect(res.body.results).toEqual([]);
      expect(sourcesOf(res.body)).toEqual({
        local: 'not_found',
        gleif: 'not_found',
        'companies-house': 'not_found',
        opencorporates: 'skipped',
        watchlists: 'skipped',
      });
      expect(spent).toBe(0);
    });

    // Last of the company searches: GLEIF stays held off after its 429 (ADR 0038).
    it('still answers the register when GLEIF is rate limited, saying so in sources, and holds GLEIF off for the wait it names', async () => {
      gleif.reply(fixture('gleif/fixtures/not-ok/429.json'));
      companiesHouse.reply(CH_SEARCH);
      const { res, spent } = await charged('/v1/search/company', { company_name: 'BP p.l.c.' });
      expect(res.body.sources.find((s) => s.provider === 'gleif')).toMatchObject({
        outcome: 'rate_limited',
        detail: 'gleif: rate limited (429, retry after 60s)',
      });
      expect(itemsFrom(res.body, 'gleif')).toEqual([]);
      expect(itemsFrom(res.body, 'companies-house').length).toBeGreaterThan(0);
      expect(spent).toBe(1);

      // GLEIF asked for 60 s: until then no worker calls it, and the sources say until when.
      const asked = gleif.requests.length;
      const next = await charged('/v1/search/company', { company_name: 'BP p.l.c.' });
      expect(next.res.body.sources.find((s) => s.provider === 'gleif')).toMatchObject({
        outcome: 'skipped',
        detail: expect.stringMatching(/^gleif: not called until \S+Z, the wait its last 429 asked for \(at most 1h\)$/),
      });
      expect(gleif.requests.length).toBe(asked);
      expect(itemsFrom(next.res.body, 'companies-house').length).toBeGreaterThan(0);
    });
  });

  describe('a person search', () => {
    it("answers PDL's profile, scored by its likelihood, and is charged", async () => {
      pdl.reply(PDL_FOUND);
      const { res, spent } = await charged('/v1/search/person', {
        name: 'Sean Thorne',
        email: 'sean@peopledatalabs.com',
      });
      expect(res.body.sources).toEqual([
        { provider: 'local', outcome: 'not_found', took_ms: expect.any(Number) },
        { provider: 'pdl', outcome: 'found', took_ms: expect.any(Number) },
        {
          provider: 'watchlists',
          outcome: 'skipped',
          took_ms: 0,
          detail: 'no watchlist imported (cli watchlists:import <list> FILE)',
        },
      ]);
      expect(res.body.results).toEqual([
        expect.objectContaining({
          full_name: 'Sean Thorne',
          emails: ['sean@peopledatalabs.com', 'sthorne@example.org'],
          phones: ['+14155688415'],
          locations: [{ city: 'San Francisco', region: 'California', country: 'US' }],
          birth_year: 1990,
          match_score: 0.9,
          matched_on: ['email', 'name'],
          sources: ['pdl'],
        }),
      ]);
      expect(spent).toBe(1);
      expect(pdl.requests.at(-1)!.headers['x-api-key']).toBe(PDL_KEY);
    });

    it('charges nothing when PDL has no match (its 404)', async () => {
      pdl.reply(PDL_NO_MATCH);
      const { res, spent } = await charged('/v1/search/person', { email: 'nobody@example.com' });
      expect(res.body).toMatchObject({
        results: [],
        sources: [
          { provider: 'local', outcome: 'not_found' },
          { provider: 'pdl', outcome: 'not_found' },
        ],
      });
      expect(spent).toBe(0);
    });

    it('does not ask PDL for a name alone (it cannot match one), and never shows a key', async () => {
      const before = pdl.requests.length;
      const { res, spent } = await charged('/v1/search/person', { name: 'Sean Thorne' });
      expect(res.body.sources.map((s) => s.provider)).not.toContain('pdl');
      expect(pdl.requests.length).toBe(before);
      expect(spent).toBe(0);
      pdl.reply({ status: 500, body: { status: 500, error: { type: 'api_error', message: PDL_KEY } } });
      const failed = await charged('/v1/search/person', { email: 'sean@peopledatalabs.com' });
      expect(failed.res.body.sources).toEqual([
        { provider: 'local', outcome: 'not_found', took_ms: expect.any(Number) },
        { provider: 'pdl', outcome: 'error', took_ms: expect.any(Number), detail: 'pdl: upstream error (500)' },
      ]);
      expect(failed.res.text).not.toContain(PDL_KEY);
      expect(stack.logs).not.toContain(PDL_KEY);
      expect(stack.logs).not.toContain(CH_KEY);
    });
  });
});
