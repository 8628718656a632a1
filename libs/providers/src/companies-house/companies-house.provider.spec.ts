import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FOREIGN_404S, FakeUpstream, REPO_ROOT, type FakeAnswer } from '@dossier/testing';
import type { CompanyInput } from '@dossier/contracts';
import { ProviderError, unguardedContext } from '../provider';
import { companiesHouseProvider, companyNumberOf } from './companies-house.provider';

const fixture = (file: string) =>
  JSON.parse(
    readFileSync(join(REPO_ROOT, 'libs/providers/src/companies-house/fixtures', file), 'utf8'),
  ) as FakeAnswer & { body: Record<string, unknown> };
const PROFILE = fixture('ok/profile.json');
const PROFILE_404 = fixture('not-ok/profile-404.json');
const FOUND = fixture('ok/found.json');
const OFFICERS = fixture('ok/officers.json');
const PSC = fixture('ok/psc.json');
const KEY = 'ch_live_0123456789';

describe('companiesHouseProvider', () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await FakeUpstream.start();
  });
  afterAll(async () => {
    await fake.close();
  });

  const lookup = (input: CompanyInput) =>
    companiesHouseProvider.lookup(
      'company',
      input,
      unguardedContext(AbortSignal.timeout(5000), { COMPANIES_HOUSE_API_KEY: KEY, COMPANIES_HOUSE_BASE_URL: fake.url }),
    );
  async function failure(answer: FakeAnswer): Promise<ProviderError> {
    fake.reply(answer);
    const error = await lookup({ company_name: 'BP' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }

  it('writes company numbers as the register does', () => {
    expect(companyNumberOf('102498')).toBe('00102498');
    expect(companyNumberOf(' 00102498 ')).toBe('00102498');
    expect(companyNumberOf('sc 123456')).toBe('SC123456');
    expect(companyNumberOf('SC12345')).toBe('SC012345');
    expect(companyNumberOf('ni1234')).toBe('NI001234');
    expect(companyNumberOf('SC1234567')).toBeNull();
    expect(companyNumberOf('HRB 12345 B')).toBeNull();
    expect(companyNumberOf('123456789')).toBeNull();
    expect(companyNumberOf('')).toBeNull();
  });

  it('is off until COMPANIES_HOUSE_API_KEY is set; asked only for UK searches by name or company number', () => {
    expect(companiesHouseProvider.isConfigured({})).toBe('not configured: set COMPANIES_HOUSE_API_KEY');
    expect(companiesHouseProvider.isConfigured({ COMPANIES_HOUSE_API_KEY: KEY })).toBe(true);
    expect(companiesHouseProvider.appliesTo!({ company_name: 'BP' })).toBe(true);
    expect(companiesHouseProvider.appliesTo!({ company_name: 'BP', country: 'gb' })).toBe(true);
    expect(companiesHouseProvider.appliesTo!({ company_name: 'BP', country: 'DE' })).toBe(false);
    expect(companiesHouseProvider.appliesTo!({ registration_number: '102498' })).toBe(true);
    expect(companiesHouseProvider.appliesTo!({ registration_number: 'HRB 12345 B' })).toBe(false);
    expect(companiesHouseProvider.appliesTo!({ registration_number: 'HRB 12345 B', company_name: 'BP' })).toBe(true);
    expect(companiesHouseProvider.appliesTo!({ domain: 'bp.com' })).toBe(false);
    expect(() => companiesHouseProvider.validateSettings!({ COMPANIES_HOUSE_BASE_URL: 'ftp://x' })).toThrow(
      /^COMPANIES_HOUSE_BASE_URL: /,
    );
  });

  it('holds its 600 requests per five minutes, and outranks GLEIF and OpenCorporates', () => {
    const { max, perMs } = companiesHouseProvider.rateLimit!;
    expect(max + (max * 300_000) / perMs).toBeLessThanOrEqual(600);
    expect(companiesHouseProvider.precedence).toBe(20);
  });

  it("answers a company number with the company's profile, its SIC codes as the industry", async () => {
    fake.reply((req) => (req.url === '/company/00102498' ? PROFILE : PROFILE_404));
    const from = fake.requests.length;
    const answer = await lookup({ registration_number: '102498', company_name: 'BP plc' });
    expect(fake.requests[from]!.url).toBe('/company/00102498');
    expect(answer).toEqual({
      outcome: 'found',
      items: [
        {
          id: expect.stringMatching(/^com_/),
          name: 'BP P.L.C.',
          registration_number: '00102498',
          jurisdiction: 'GB',
          country: 'GB',
          domain: null,
          status: 'active',
          incorporated_on: '1909-04-14',
          address: "1 St James's Square, London, SW1Y 4PD",
          industry: 'SIC 06100, 19201',
          match_score: 0.988, // a name and a number that agree: 1 − (1 − 0.75)(1 − 0.95)
          matched_on: ['company_name', 'registration_number'],
          sources: ['companies-house'],
          // The register's own 404 on the officer and PSC lists: it holds none.
          officers: [],
          controllers: [],
          parents: null,
          // Each field from the profile, by its link (ADR 0068).
          field_sources: Object.fromEntries(
            [
              'name',
              'registration_number',
              'jurisdiction',
              'country',
              'status',
              'incorporated_on',
              'address',
              'industry',
            ].map((field) => [field, [{ provider: 'companies-house', record_id: '/company/00102498' }]]),
          ),
        },
      ],
      identities: [['companies-house:00102498']],
    });
  });

  it('asks for a number typed without the zeros after its prefix as the register writes it, and scores it a match', async () => {
    fake.reply((req) =>
      req.url === '/company/SC012345'
        ? { ...PROFILE, body: { ...PROFILE.body, company_number: 'SC012345' } }
        : PROFILE_404,
    );
    const from = fake.requests.length;
    const answer = await lookup({ registration_number: 'SC12345' });
    expect(fake.requests[from]!.url).toBe('/company/SC012345');
    expect(answer.items.map((i) => [i.registration_number, i.matched_on])).toEqual([
      ['SC012345', ['registration_number']],
    ]);
  });

  it('is not_found when the register has no such company (404 on the profile)', async () => {
    fake.reply(PROFILE_404);
    await expect(lookup({ registration_number: 'SC999999' })).resolves.toEqual({ outcome: 'not_found', items: [] });
    expect(fake.requests.at(-1)!.url).toBe('/company/SC999999');
  });

  it("reads only the register's own 404 as no such company: another 404 on the profile is an error, and no name search follows", async () => {
    for (const page of FOREIGN_404S) {
      const from = fake.requests.length;
      fake.reply((req) => (req.url.startsWith('/company/') ? page : FOUND));
      await expect(lookup({ registration_number: 'SC999999', company_name: 'BP p.l.c.' })).rejects.toMatchObject({
        name: 'ProviderError',
        code: 'malformed',
        message: "companies-house: a 404 that is not the vendor's answer (is COMPANIES_HOUSE_BASE_URL right?)",
      });
      expect(fake.requests.slice(from).map((r) => new URL(r.url, fake.url).pathname)).toEqual(['/company/SC999999']);
    }
  });

  it('searches by name when the register has no company by that number (404), as GLEIF and OpenCorporates do', async () => {
    const from = fake.requests.length;
    fake.reply((req) => (req.url.startsWith('/company/') ? PROFILE_404 : FOUND));
    const answer = await lookup({ registration_number: 'SC999999', company_name: 'BP p.l.c.' });
    expect(answer.items.map((i) => [i.name, i.match_score, i.matched_on])).toEqual([
      ['BP P.L.C.', 0.75, ['company_name']],
      ['BP INTERNATIONAL LIMITED', 0.694, ['company_name']],
    ]);
    expect(fake.requests.slice(from).map((r) => new URL(r.url, fake.url).pathname)).toEqual([
      '/company/SC999999',
      '/search/companies',
      '/company/00102498/officers',
      '/company/00102498/persons-with-significant-control',
    ]);
  });

  it("gives the best match its officers and PSCs, serving ones first, each with its record's link", async () => {
    fake.reply((req) =>
      req.url.startsWith('/company/00102498/officers')
        ? OFFICERS
        : req.url.startsWith('/company/00102498/persons-with-significant-control')
          ? PSC
          : PROFILE,
    );
    const [item] = (await lookup({ registration_number: '00102498' })).items;
    expect(item!.officers).toEqual([
      {
        name: 'BP SECRETARIAL SERVICES LIMITED',
        role: 'corporate-secretary',
        appointed_on: '2020-06-30',
        resigned_on: null,
        nationality: null,
        country_of_residence: null,
        birth_year: null,
        birth_month: null,
        source: {
          provider: 'companies-house',
          record_id: '/company/00102498/appointments/Hh1Gg2Ff3Ee4Dd5Cc6Bb7Aa8Zz9',
        },
      },
      {
        name: 'GILVARY, Brian',
        role: 'director',
        appointed_on: '2012-01-01',
        resigned_on: null,
        nationality: 'British',
        country_of_residence: 'England',
        birth_year: 1962,
        birth_month: 3,
        source: {
          provider: 'companies-house',
          record_id: '/company/00102498/appointments/Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1',
        },
      },
      expect.objectContaining({ name: 'LOONEY, Bernard', resigned_on: '2023-09-12', birth_year: 1970, birth_month: 8 }),
    ]);
    // Never a full birth date: only the month and year the register shows.
    expect(JSON.stringify(item!.officers)).not.toMatch(/date_of_birth|"day"/);
    expect(item!.controllers).toEqual([
      {
        name: 'BP Holdings Limited',
        kind: 'corporate',
        natures_of_control: ['ownership-of-shares-75-to-100-percent', 'voting-rights-75-to-100-percent'],
        notified_on: '2019-11-30',
        ceased_on: null,
        source: {
          provider: 'companies-house',
          record_id: '/company/00102498/persons-with-significant-control/corporate-entity/Ps9Cc8Oo7Rr6Pp5Oo4Rr3Aa2Tt1',
        },
      },
      expect.objectContaining({ name: 'Mr John Edward Smith', kind: 'individual', ceased_on: '2019-11-30' }),
    ]);
  });

  it('leaves officers and PSCs unknown (null) when their calls fail, and still answers the company', async () => {
    for (const failing of [{ status: 500, body: '' }, { status: 429, body: '' }, { hang: true }] as FakeAnswer[]) {
      fake.reply((req) => (req.url === '/company/00102498' ? PROFILE : failing));
      const answer = await companiesHouseProvider.lookup(
        'company',
        { registration_number: '00102498' },
        {
          ...unguardedContext(AbortSignal.timeout(5000), {
            COMPANIES_HOUSE_API_KEY: KEY,
            COMPANIES_HOUSE_BASE_URL: fake.url,
          }),
          // The lookup's deadline, as the fan-out's guard ends each further call at it.
          upstream: (_u, call) => call(AbortSignal.timeout(300)),
        },
      );
      expect(answer.outcome).toBe('found');
      expect(answer.items[0]).toMatchObject({ name: 'BP P.L.C.', officers: null, controllers: null });
    }
  });

  it('writes a named building apart from its street, as the register does', async () => {
    fake.reply({
      ...PROFILE,
      body: {
        ...PROFILE.body,
        registered_office_address: {
          premises: 'Boswell Cottage',
          address_line_1: 'Main Street',
          locality: 'Retford',
          country: 'England',
          postal_code: 'DN22 0AD',
        },
        sic_codes: null,
      },
    });
    const [item] = (await lookup({ registration_number: '00102498' })).items;
    expect(item).toMatchObject({ address: 'Boswell Cottage, Main Street, Retford, DN22 0AD, England', industry: null });
  });

  it('waits for the window Companies House names in X-Ratelimit-Reset when it says 429', async () => {
    const reset = Math.floor(Date.now() / 1000) + 120;
    const error = await failure({ status: 429, headers: { 'x-ratelimit-reset': String(reset) }, body: '' });
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfterMs).toBeGreaterThan(100_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(120_000);
    expect(error.message).toMatch(/^companies-house: rate limited \(429, retry after 1[12]\ds\)$/);
  });

  it('says refused credentials (401) and never shows the key', async () => {
    const error = await failure({ status: 401, body: { error: 'Invalid Authorization', type: 'ch:service' } });
    expect(error).toMatchObject({ code: 'unrecoverable', message: 'companies-house: credentials refused (401)' });
    expect(error.message).not.toContain(KEY);
  });
});
