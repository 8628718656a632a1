import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api, FakeUpstream, REPO_ROOT, Stack, ledgerState, type FakeAnswer, type SeenRequest } from '@dossier/testing';

interface Envelope {
  status: string;
  results: Record<string, unknown>[];
  sources: { provider: string; outcome: string }[];
}

/** A vendor's documented answer, from the provider's fixtures. */
const fixture = (path: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'libs/providers/src', path), 'utf8')) as FakeAnswer & {
    body: Record<string, unknown>;
  };
const GLEIF_FOUND = fixture('gleif/fixtures/ok/found.json');
const GLEIF_PARENT = fixture('gleif/fixtures/ok/parent.json');
const CH_PROFILE = fixture('companies-house/fixtures/ok/profile.json');
const CH_OFFICERS = fixture('companies-house/fixtures/ok/officers.json');
const CH_PSC = fixture('companies-house/fixtures/ok/psc.json');

const NUMBER = '00542515';
const LEI = '549300HS2O6PKL6QM186';
const BP_LEI = '213800LBDB8WB3QGVN21';

/** Companies House: BP International's profile, officers and PSCs; `people` in place of the last two. */
function companiesHouseAnswer(people?: FakeAnswer) {
  return (req: SeenRequest): FakeAnswer => {
    const path = req.url.split('?')[0];
    if (path === `/company/${NUMBER}`)
      return {
        ...CH_PROFILE,
        body: { ...CH_PROFILE.body, company_name: 'BP INTERNATIONAL LIMITED', company_number: NUMBER },
      };
    if (path === `/company/${NUMBER}/officers`) return people ?? CH_OFFICERS;
    if (path === `/company/${NUMBER}/persons-with-significant-control`) return people ?? CH_PSC;
    return { status: 404, body: { errors: [{ error: 'not-found', type: 'ch:service' }] } };
  };
}

describe('company depth: officers, persons with significant control and parents (gateway + worker processes)', () => {
  let gleif: FakeUpstream;
  let companiesHouse: FakeUpstream;
  let stack: Stack;
  let api: Api;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    [gleif, companiesHouse] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
    gleif.reply((req) => (req.url.endsWith('-parent') ? GLEIF_PARENT : GLEIF_FOUND));
    stack = await Stack.start({
      label: 'company-depth',
      env: {
        GLEIF_ENABLED: 'true',
        GLEIF_BASE_URL: gleif.url,
        COMPANIES_HOUSE_API_KEY: 'e2e-companies-house-key-0c4d',
        COMPANIES_HOUSE_BASE_URL: companiesHouse.url,
      },
    });
    api = new Api(stack.baseUrl);
    ({ key, accountId } = await api.register());
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([gleif?.close(), companiesHouse?.close()]);
  });

  const search = () =>
    api.post<Envelope>(
      '/v1/search/company',
      { registration_number: NUMBER, company_name: 'BP International Limited', country: 'GB' },
      { key },
    );

  it("answers one company with Companies House's officers and PSCs and GLEIF's parents, each fact with its source", async () => {
    companiesHouse.reply(companiesHouseAnswer());
    const res = await search();
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    const [item] = res.body.results;
    expect(item).toMatchObject({
      name: 'BP INTERNATIONAL LIMITED',
      registration_number: NUMBER,
      sources: expect.arrayContaining(['companies-house', 'gleif']),
    });
    const officers = item!['officers'] as Record<string, unknown>[];
    expect(officers.map((o) => [o['name'], o['resigned_on']])).toEqual([
      ['BP SECRETARIAL SERVICES LIMITED', null],
      ['GILVARY, Brian', null],
      ['LOONEY, Bernard', '2023-09-12'],
    ]);
    expect(officers[1]).toMatchObject({ birth_year: 1962, birth_month: 3 });
    const controllers = item!['controllers'] as Record<string, unknown>[];
    expect(controllers.map((c) => [c['name'], c['kind'], c['ceased_on']])).toEqual([
      ['BP Holdings Limited', 'corporate', null],
      ['Mr John Edward Smith', 'individual', '2019-11-30'],
    ]);
    for (const fact of [...officers, ...controllers])
      expect(fact['source']).toEqual({ provider: 'companies-house', record_id: expect.stringMatching(/^\/company\//) });
    expect(item!['parents']).toEqual({
      direct: {
        lei: BP_LEI,
        name: 'BP P.L.C.',
        source: { provider: 'gleif', record_id: `${LEI}>IS_DIRECTLY_CONSOLIDATED_BY>${BP_LEI}` },
      },
      ultimate: {
        lei: BP_LEI,
        name: 'BP P.L.C.',
        source: { provider: 'gleif', record_id: `${LEI}>IS_ULTIMATELY_CONSOLIDATED_BY>${BP_LEI}` },
      },
    });
    const after = await ledgerState(accountId);
    expect(after.ledger_sum).toBe(after.balance);
  });

  it('says which records gave each field: both where the register and GLEIF agree, the register first', async () => {
    companiesHouse.reply(companiesHouseAnswer());
    const res = await search();
    expect(res.status).toBe(200);
    const [item] = res.body.results;
    const profile = { provider: 'companies-house', record_id: `/company/${NUMBER}` };
    const leiRecord = { provider: 'gleif', record_id: `/lei-records/${LEI}` };
    // GLEIF's creation date (1955-01-18) and legal address differ from the profile's shown: not credited.
    expect(item).toMatchObject({ incorporated_on: '1909-04-14', address: "1 St James's Square, London, SW1Y 4PD" });
    expect(item!['field_sources']).toEqual({
      name: [profile, leiRecord],
      registration_number: [profile, leiRecord],
      jurisdiction: [profile, leiRecord],
      country: [profile, leiRecord],
      status: [profile, leiRecord],
      incorporated_on: [profile],
      address: [profile],
      industry: [profile],
    });
  });

  it('still answers the company when the officer and PSC calls fail: those facts are null, not empty', async () => {
    companiesHouse.reply(companiesHouseAnswer({ status: 503, body: '' }));
    const res = await search();
    expect(res.status).toBe(200);
    expect(res.body.sources.find((s) => s.provider === 'companies-house')).toMatchObject({ outcome: 'found' });
    const [item] = res.body.results;
    expect(item).toMatchObject({ registration_number: NUMBER, officers: null, controllers: null });
    expect(item!['parents']).toMatchObject({ direct: { lei: BP_LEI } });
  });
});
