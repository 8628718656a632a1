import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeUpstream, REPO_ROOT, type FakeAnswer } from '@dossier/testing';
import type { CompanyInput } from '@dossier/contracts';
import { ProviderError, unguardedContext } from '../provider';
import { jurisdictionKey as jurisdictionOf } from '@dossier/domain';
import { opencorporatesProvider } from './opencorporates.provider';

const fixture = (file: string) =>
  JSON.parse(
    readFileSync(join(REPO_ROOT, 'libs/providers/src/opencorporates/fixtures', file), 'utf8'),
  ) as FakeAnswer & { body: { results: { companies: { company: Record<string, unknown> }[] } } };
const FOUND = fixture('ok/found.json');
const EMPTY = fixture('ok/not-found.json');
const TOKEN = 'oc_token_0123456789abcdef';

/** OpenCorporates' search page with one company, changed. */
function withCompany(company: Record<string, unknown>): FakeAnswer {
  const first = FOUND.body.results.companies[0]!.company;
  return { ...FOUND, body: { results: { ...FOUND.body.results, companies: [{ company: { ...first, ...company } }] } } };
}

describe('opencorporatesProvider', () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await FakeUpstream.start();
  });
  afterAll(async () => {
    await fake.close();
  });

  const lookup = (input: CompanyInput) =>
    opencorporatesProvider.lookup(
      'company',
      input,
      unguardedContext(AbortSignal.timeout(5000), {
        OPENCORPORATES_API_TOKEN: TOKEN,
        OPENCORPORATES_BASE_URL: fake.url,
      }),
    );
  const qs = (from: number) => fake.requests.slice(from).map((r) => new URL(r.url, fake.url).searchParams.get('q'));

  it('writes jurisdictions the ISO way', () => {
    expect(jurisdictionOf('us_de')).toBe('US-DE');
    expect(jurisdictionOf('gb')).toBe('GB');
    expect(jurisdictionOf('ca_bc')).toBe('CA-BC');
  });

  it('is off until OPENCORPORATES_API_TOKEN is set, and asked for a name or a number', () => {
    expect(opencorporatesProvider.isConfigured({})).toBe('not configured: set OPENCORPORATES_API_TOKEN');
    expect(opencorporatesProvider.isConfigured({ OPENCORPORATES_API_TOKEN: TOKEN })).toBe(true);
    expect(opencorporatesProvider.appliesTo!({ registration_number: '4785398' })).toBe(true);
    expect(opencorporatesProvider.appliesTo!({ domain: 'github.com' })).toBe(false);
    expect(() => opencorporatesProvider.validateSettings!({ OPENCORPORATES_BASE_URL: 'nope' })).toThrow(
      /^OPENCORPORATES_BASE_URL: /,
    );
  });

  it('searches by number first, then by name, and credits the jurisdiction-qualified number as the identity', async () => {
    const from = fake.requests.length;
    fake.reply((req) => (req.url.includes('q=0000000') ? EMPTY : FOUND));
    const answer = await lookup({ registration_number: '0000000', company_name: 'GitHub' });
    expect(qs(from)).toEqual(['0000000', 'GitHub']);
    expect(answer.items.map((i) => i.jurisdiction)).toEqual(['US-DE', 'US-CA']);
    expect(answer.identities).toEqual([['opencorporates:us_de/4785398'], ['opencorporates:us_ca/C3268102']]);
    expect(answer.items[0]!.match_score).toBe(0.75);
  });

  it('searches by name when the companies the number found match nothing searched', async () => {
    const from = fake.requests.length;
    // `q` matches names as well as numbers: a number can find a company that merely has it in its name.
    const named = withCompany({
      name: '4785398 LTD',
      company_number: '09999999',
      jurisdiction_code: 'gb',
      previous_names: [],
    });
    fake.reply((req) => (req.url.includes('q=4785398') ? named : FOUND));
    const answer = await lookup({ registration_number: '4785398', company_name: 'GitHub' });
    expect(answer.items[0]).toMatchObject({
      name: 'GITHUB, INC.',
      jurisdiction: 'US-DE',
      matched_on: ['company_name', 'registration_number'],
    });
    expect(qs(from)).toEqual(['4785398', 'GitHub']);
  });

  it("matches a company by a previous name, and reads an inactive one's status", async () => {
    fake.reply(withCompany({ current_status: null, inactive: true }));
    const [item] = (await lookup({ company_name: 'Logical Awesome' })).items;
    expect(item).toMatchObject({
      name: 'GITHUB, INC.',
      status: 'inactive',
      matched_on: ['company_name'],
      match_score: 0.75,
    });
  });

  it('takes the industry from its codes where OpenCorporates has them', async () => {
    fake.reply(
      withCompany({
        industry_codes: [
          {
            industry_code: {
              code: '62.01',
              description: 'Computer programming activities',
              code_scheme_id: 'eu_nace_2',
            },
          },
        ],
      }),
    );
    expect((await lookup({ company_name: 'GitHub' })).items[0]!.industry).toBe('Computer programming activities');
  });

  it("reads its 403 with an error envelope as the plan's allowance used up; a 403 page is a wall", async () => {
    const outcome = async (answer: FakeAnswer) => {
      fake.reply(answer);
      const error = await lookup({ company_name: 'GitHub' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      return error as ProviderError;
    };
    expect(await outcome({ status: 403, body: { error: { message: 'API calls limit exceeded' } } })).toMatchObject({
      code: 'rate_limited',
      message: "opencorporates: the plan's call allowance is used up (403)",
    });
    expect(
      await outcome({ status: 403, body: '<html><title>Attention Required! | Cloudflare</title></html>' }),
    ).toMatchObject({
      code: 'blocked',
    });
    const refused = await outcome({ status: 401, body: { error: { message: `Invalid Api Token ${TOKEN}` } } });
    expect(refused).toMatchObject({ code: 'unrecoverable' });
    expect(refused.message).not.toContain(TOKEN);
  });

  it('is not_found when the search is empty', async () => {
    fake.reply(EMPTY);
    await expect(lookup({ company_name: 'GitHub' })).resolves.toEqual({ outcome: 'not_found', items: [] });
  });
});
