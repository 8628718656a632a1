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
    const answer = await lookup({ registration_number: '102498', company_name: 'BP plc' });
    expect(fake.requests.at(-1)!.url).toBe('/company/00102498');
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
    const answer = await lookup({ registration_number: 'SC12345' });
    expect(fake.requests.at(-1)!.url).toBe('/company/SC012345');
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
    ]);
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
