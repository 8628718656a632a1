import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeUpstream, REPO_ROOT, type FakeAnswer } from '@dossier/testing';
import type { PersonInput } from '@dossier/contracts';
import { ProviderError, unguardedContext } from '../provider';
import { DEFAULT_MIN_LIKELIHOOD, matchScoreOf, pdlProvider } from './pdl.provider';

const fixture = (file: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'libs/providers/src/pdl/fixtures', file), 'utf8')) as FakeAnswer & {
    body: Record<string, unknown>;
  };
const FOUND = fixture('ok/found.json');
const HIDDEN = fixture('ok/hidden-fields.json');
const KEY = 'pdl_live_0123456789abcdef';

describe('pdlProvider', () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await FakeUpstream.start();
  });
  afterAll(async () => {
    await fake.close();
  });

  const lookup = (input: PersonInput, settings: Record<string, string> = {}) =>
    pdlProvider.lookup(
      'person',
      input,
      unguardedContext(AbortSignal.timeout(5000), { PDL_API_KEY: KEY, PDL_BASE_URL: fake.url, ...settings }),
    );
  const sent = () => Object.fromEntries(new URL(fake.requests.at(-1)!.url, fake.url).searchParams);

  it('is off until PDL_API_KEY is set; PDL_MIN_LIKELIHOOD is an integer 1–10', () => {
    expect(pdlProvider.isConfigured({})).toBe('not configured: set PDL_API_KEY');
    expect(pdlProvider.isConfigured({ PDL_API_KEY: KEY })).toBe(true);
    for (const bad of ['0', '11', '6.5', 'high'])
      expect(() => pdlProvider.validateSettings!({ PDL_MIN_LIKELIHOOD: bad })).toThrow(/^PDL_MIN_LIKELIHOOD: /);
    expect(() => pdlProvider.validateSettings!({ PDL_MIN_LIKELIHOOD: '8' })).not.toThrow();
    expect(() => pdlProvider.validateSettings!({ PDL_BASE_URL: 'peopledatalabs' })).toThrow(/^PDL_BASE_URL: /);
  });

  it('is asked only for what PDL can match: an e-mail, a phone, or a name with a place', () => {
    expect(pdlProvider.appliesTo!({ email: 'sean@peopledatalabs.com' })).toBe(true);
    expect(pdlProvider.appliesTo!({ phone: '+1 415 568 8415' })).toBe(true);
    expect(pdlProvider.appliesTo!({ name: 'Sean Thorne', location: 'San Francisco' })).toBe(true);
    // A country is a place to PDL: a name with one is a request it can match.
    expect(pdlProvider.appliesTo!({ name: 'Sean Thorne', country: 'US' })).toBe(true);
    expect(pdlProvider.appliesTo!({ name: 'Sean Thorne' })).toBe(false);
    expect(pdlProvider.appliesTo!({ username: 'seanthorne' })).toBe(false);
    expect(pdlProvider.appliesTo!({ email: 'not an address' })).toBe(false);
  });

  it("holds PDL's 100 enrichments a minute for free accounts", () => {
    const { max, perMs } = pdlProvider.rateLimit!;
    expect(max + (max * 60_000) / perMs).toBeLessThanOrEqual(100);
  });

  it('maps the likelihood onto match_score, keeping its order', () => {
    expect([1, 6, 9, 10].map(matchScoreOf)).toEqual([0.1, 0.6, 0.9, 1]);
  });

  it('sends the phone in E.164 (the country as default region) with the name and place, and the floor', async () => {
    fake.reply(FOUND);
    await lookup({ phone: '(415) 568-8415', country: 'US', name: ' Sean Thorne ', location: 'San Francisco, CA' });
    expect(sent()).toEqual({
      phone: '+14155688415',
      name: 'Sean Thorne',
      location: 'San Francisco, CA',
      country: 'United States',
      min_likelihood: String(DEFAULT_MIN_LIKELIHOOD),
      include_if_matched: 'true',
      titlecase: 'true',
    });
    expect(fake.requests.at(-1)!.headers['x-api-key']).toBe(KEY);
    await lookup({ email: 'sean@peopledatalabs.com' }, { PDL_MIN_LIKELIHOOD: '8' });
    expect(sent()).toMatchObject({ email: 'sean@peopledatalabs.com', min_likelihood: '8' });
    expect(sent()).not.toHaveProperty('name');
  });

  it('sends the searched country by the name PDL writes, and holds its answer to it', async () => {
    fake.reply(FOUND); // San Francisco, California, United States
    const [item] = (await lookup({ name: 'Sean Thorne', country: 'US' })).items;
    expect(sent()).toEqual({
      name: 'Sean Thorne',
      country: 'United States',
      min_likelihood: String(DEFAULT_MIN_LIKELIHOOD),
      include_if_matched: 'true',
      titlecase: 'true',
    });
    expect(item).toMatchObject({ match_score: 0.9, matched_on: ['name', 'country'] });
    // PDL's match is known only in another country: not the person searched for there (PDL has billed it).
    fake.reply(FOUND);
    await expect(lookup({ email: 'sean@peopledatalabs.com', country: 'GB' })).resolves.toEqual({
      outcome: 'not_found',
      items: [],
    });
    expect(sent()).toMatchObject({ email: 'sean@peopledatalabs.com', country: 'United Kingdom' });
    // Of no known country, it stays, without saying the country matched.
    const data = { ...(FOUND.body['data'] as object), location_country: null, location_region: null };
    fake.reply({ ...FOUND, body: { ...FOUND.body, data } });
    expect((await lookup({ email: 'sean@peopledatalabs.com', country: 'GB' })).items[0]).toMatchObject({
      matched_on: ['email'],
    });
  });

  it('answers one person with the identity pdl:<id>, its score and the fields PDL says it matched', async () => {
    fake.reply(FOUND);
    const answer = await lookup({ email: 'sean@peopledatalabs.com', name: 'Sean Thorne' });
    expect(answer.outcome).toBe('found');
    expect(answer.identities).toEqual([['pdl:qEnOZ5Oh0poWnQ1luFBfVw_0000']]);
    expect(answer.items[0]).toMatchObject({ match_score: 0.9, matched_on: ['email', 'name'], sources: ['pdl'] });
  });

  it('falls back to the fields sent when PDL names none, leaving out what it did not match', async () => {
    fake.reply({ ...FOUND, body: { ...FOUND.body, matched: undefined } });
    expect((await lookup({ name: 'Sean Thorne', location: 'San Francisco' })).items[0]!.matched_on).toEqual([
      'name',
      'location',
    ]);
    fake.reply({ ...FOUND, body: { ...FOUND.body, matched: ['location', 'company'] } });
    expect((await lookup({ name: 'Sean Thorne', location: 'San Francisco' })).items[0]!.matched_on).toEqual([
      'location',
    ]);
  });

  it('says the age as the local index does, from birth_year or else the year of birth_date', async () => {
    const thisYear = new Date().getUTCFullYear();
    fake.reply(FOUND); // birth_year 1990
    expect((await lookup({ email: 'sean@peopledatalabs.com' })).items[0]).toMatchObject({
      birth_year: 1990,
      age: thisYear - 1990,
    });
    const data = { ...(FOUND.body['data'] as object), birth_year: true, birth_date: '1961-07-23' };
    fake.reply({ ...FOUND, body: { ...FOUND.body, data } });
    expect((await lookup({ email: 'sean@peopledatalabs.com' })).items[0]).toMatchObject({
      birth_year: 1961,
      age: thisYear - 1961,
    });
    // A birth date alone holds the profile to the searched age range too.
    fake.reply({ ...FOUND, body: { ...FOUND.body, data } });
    expect((await lookup({ email: 'sean@peopledatalabs.com', age_range: '-30' })).outcome).toBe('not_found');
  });

  it('weighs the searched location and age range on the score as on local records (placeAndAgeOf)', async () => {
    const score = async (input: PersonInput) => {
      fake.reply(FOUND); // likelihood 9; San Francisco, California, United States; born 1990
      const [item] = (await lookup({ email: 'sean@peopledatalabs.com', ...input })).items;
      return [item!.match_score, item!.matched_on];
    };
    expect(await score({})).toEqual([0.9, ['email']]);
    // Known only elsewhere: 85% of PDL's 0.9, as a local record elsewhere keeps 85%.
    expect(await score({ location: 'Dublin' })).toEqual([0.765, ['email']]);
    // In the place, of a known age in the range: each one more piece of evidence (location 0.3, age 0.2).
    expect(await score({ location: 'San Francisco' })).toEqual([0.93, ['email', 'location']]);
    expect(await score({ location: 'San Francisco, United States', age_range: '18+' })).toEqual([
      0.944,
      ['email', 'location', 'age_range'],
    ]);
    expect(await score({ location: 'San Francisco, Dublin' })).toEqual([0.915, ['email', 'location']]);
  });

  it("reads the fields a plan does not include (PDL's `true`) as unknown", async () => {
    fake.reply(HIDDEN);
    expect((await lookup({ email: 'sean@peopledatalabs.com' })).items[0]).toMatchObject({
      full_name: 'Sean Thorne',
      emails: [],
      phones: [],
      birth_year: null,
      age: null,
      locations: [{ city: 'San Francisco', region: 'California', country: 'US' }],
      usernames: ['seanthorne'],
      match_score: 0.7,
    });
  });

  it('is not_found on its 404, and below the floor however PDL answered', async () => {
    fake.reply(fixture('ok/not-found.json'));
    await expect(lookup({ email: 'nobody@example.com' })).resolves.toEqual({ outcome: 'not_found', items: [] });
    fake.reply({ ...FOUND, body: { ...FOUND.body, likelihood: 5 } });
    await expect(lookup({ email: 'sean@peopledatalabs.com' })).resolves.toEqual({ outcome: 'not_found', items: [] });
  });

  it('is not_found for a profile born outside the searched age range; one in it, or of unknown age, is kept', async () => {
    fake.reply(FOUND); // born 1990
    await expect(lookup({ email: 'sean@peopledatalabs.com', age_range: '65+' })).resolves.toEqual({
      outcome: 'not_found',
      items: [],
    });
    expect((await lookup({ email: 'sean@peopledatalabs.com', age_range: '18+' })).outcome).toBe('found');
    fake.reply(HIDDEN); // birth_year: true — the plan does not include it
    expect((await lookup({ email: 'sean@peopledatalabs.com', age_range: '65+' })).outcome).toBe('found');
  });

  it('reads 402 (credits used up) as rate_limited, a 429 with the wait its x-ratelimit-reset names, and never shows the key', async () => {
    const failure = async (answer: FakeAnswer) => {
      fake.reply(answer);
      const error = await lookup({ email: 'sean@peopledatalabs.com' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).message).not.toContain(KEY);
      return error as ProviderError;
    };
    expect(await failure(fixture('not-ok/402.json'))).toMatchObject({
      code: 'rate_limited',
      message: "pdl: the account's credits are used up (402)",
    });
    // PDL's 429 names the end of its window in x-ratelimit-reset (a UTC time), not in Retry-After.
    const reset = new Date(Math.floor(Date.now() / 1000) * 1000 + 120_000).toISOString().replace('.000Z', 'Z');
    const limited = await failure({
      ...fixture('not-ok/429.json'),
      headers: { ...fixture('not-ok/429.json').headers, 'x-ratelimit-reset': reset },
    });
    expect(limited.code).toBe('rate_limited');
    expect(limited.retryAfterMs).toBeGreaterThan(100_000);
    expect(limited.retryAfterMs).toBeLessThanOrEqual(120_000);
    expect(limited.message).toMatch(/^pdl: rate limited \(429, retry after 1[12]\ds\)$/);
    expect(await failure({ status: 403, body: '<html><title>Access Denied</title></html>' })).toMatchObject({
      code: 'blocked',
    });
    expect(
      await failure({ status: 400, body: { status: 400, error: { type: 'invalid_request_error', message: KEY } } }),
    ).toMatchObject({
      code: 'rejected',
    });
  });
});
