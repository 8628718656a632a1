import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeUpstream, REPO_ROOT, type FakeAnswer, type SeenRequest } from '@dossier/testing';
import type { CompanyInput } from '@dossier/contracts';
import { unguardedContext } from '../provider';
import { gleifProvider } from './gleif.provider';

type LeiPage = FakeAnswer & { body: { data: { attributes: { lei: string; entity: Record<string, unknown> } }[] } };
const fixture = (file: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'libs/providers/src/gleif/fixtures', file), 'utf8')) as FakeAnswer;
const FOUND = fixture('ok/found.json') as LeiPage;
const EMPTY = fixture('ok/not-found.json');
const PARENT = fixture('ok/parent.json');
const NO_PARENT = fixture('not-ok/parent-404.json');
const BP = FOUND.body.data[0]!;

/** GLEIF's page with the first record's entity changed. */
function withEntity(entity: Record<string, unknown>): FakeAnswer {
  const record = { ...BP, attributes: { ...BP.attributes, entity: { ...BP.attributes.entity, ...entity } } };
  return { ...FOUND, body: { ...FOUND.body, data: [record] } };
}

describe('gleifProvider', () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await FakeUpstream.start();
  });
  afterAll(async () => {
    await fake.close();
  });

  const lookup = (input: CompanyInput) =>
    gleifProvider.lookup('company', input, unguardedContext(AbortSignal.timeout(5000), { GLEIF_BASE_URL: fake.url }));
  /** The query parameters of the searches made since `from` (not the parent calls that follow one). */
  const queries = (from: number) =>
    fake.requests
      .slice(from)
      .filter((r) => !r.url.endsWith('-parent'))
      .map((r: SeenRequest) => Object.fromEntries(new URL(r.url, fake.url).searchParams));

  it('is on unless GLEIF_ENABLED=false, and refuses a malformed base URL or switch at boot', () => {
    expect(gleifProvider.isConfigured({})).toBe(true);
    expect(gleifProvider.isConfigured({ GLEIF_ENABLED: 'false' })).toBe('disabled (GLEIF_ENABLED=false)');
    expect(() => gleifProvider.validateSettings!({ GLEIF_BASE_URL: 'api.gleif.org/api/v1' })).toThrow(
      /^GLEIF_BASE_URL: /,
    );
    expect(() => gleifProvider.validateSettings!({ GLEIF_ENABLED: 'no' })).toThrow(/^GLEIF_ENABLED: /);
    expect(() => gleifProvider.validateSettings!({ GLEIF_BASE_URL: 'https://proxy.example/gleif/' })).not.toThrow();
  });

  it('is asked for a name or a registration number, never for a domain alone (GLEIF has none)', () => {
    expect(gleifProvider.appliesTo!({ company_name: 'BP' })).toBe(true);
    expect(gleifProvider.appliesTo!({ registration_number: '00102498' })).toBe(true);
    expect(gleifProvider.appliesTo!({ domain: 'bp.com' })).toBe(false);
    expect(gleifProvider.appliesTo!({ company_name: '  ', domain: 'bp.com' })).toBe(false);
  });

  it('never exceeds its published 60 requests a minute, and ranks between Companies House and OpenCorporates', () => {
    const { max, perMs } = gleifProvider.rateLimit!;
    expect(max + (max * 60_000) / perMs).toBeLessThanOrEqual(60);
    expect(gleifProvider.precedence).toBe(15);
  });

  it('searches by registration number in the country given, and answers the LEI as the identity', async () => {
    const from = fake.requests.length;
    fake.reply(FOUND);
    const answer = await lookup({ registration_number: '00102498', country: 'gb' });
    expect(queries(from)).toEqual([
      {
        'filter[entity.registeredAs]': '00102498',
        'page[size]': '10',
        'filter[entity.legalAddress.country]': 'GB',
      },
    ]);
    // Only the record with that number matches a search by number.
    expect(answer.items.map((i) => [i.name, i.match_score, i.matched_on])).toEqual([
      ['BP P.L.C.', 0.95, ['registration_number', 'country']],
    ]);
    expect(answer.identities).toEqual([['lei:213800LBDB8WB3QGVN21']]);
  });

  it('falls back to the names when the number finds nothing', async () => {
    const from = fake.requests.length;
    fake.reply((req) => (req.url.includes('registeredAs') ? EMPTY : FOUND));
    const answer = await lookup({ registration_number: '99999999', company_name: 'The British Petroleum Company' });
    expect(queries(from).map((q) => Object.keys(q)[0])).toEqual([
      'filter[entity.registeredAs]',
      'filter[entity.names]',
    ]);
    // Its former name matches (the number does not): a name's evidence, as the local index scores it.
    expect(answer.items[0]).toMatchObject({ name: 'BP P.L.C.', match_score: 0.75, matched_on: ['company_name'] });
  });

  it('falls back to the names when the records the number found match nothing searched', async () => {
    const from = fake.requests.length;
    // The number search answers a record registered under another number (`HRB 102498` is not `102498`):
    // neither its number nor its name matches, so it is no answer, and the name is asked.
    const other = withEntity({
      legalName: { name: 'NORDSEE HANDEL GMBH', language: 'de' },
      otherNames: [],
      registeredAs: 'HRB 102498',
    });
    fake.reply((req) => (req.url.includes('registeredAs') ? other : FOUND));
    const answer = await lookup({ registration_number: '102498', company_name: 'BP p.l.c.' });
    expect(answer.items[0]).toMatchObject({
      name: 'BP P.L.C.',
      match_score: 0.988,
      matched_on: ['company_name', 'registration_number'],
    });
    expect(queries(from).map((q) => Object.keys(q)[0])).toEqual([
      'filter[entity.registeredAs]',
      'filter[entity.names]',
    ]);
  });

  it('asks no name when a record the number found matches', async () => {
    const from = fake.requests.length;
    fake.reply(FOUND);
    await lookup({ registration_number: '00102498', company_name: 'Royal Dutch Shell' });
    expect(queries(from).map((q) => Object.keys(q)[0])).toEqual(['filter[entity.registeredAs]']);
  });

  it('writes a sub-national jurisdiction as GLEIF does (US-DE), and leaves unknown fields null', async () => {
    fake.reply(
      withEntity({
        legalName: { name: 'GITHUB, INC.', language: 'en' },
        otherNames: null,
        jurisdiction: 'US-DE',
        legalAddress: { addressLines: [], city: 'Wilmington', region: 'US-DE', country: 'US', postalCode: '19808' },
        registeredAs: null,
        status: 'INACTIVE',
        creationDate: null,
      }),
    );
    const answer = await lookup({ company_name: 'GitHub' });
    expect(answer.items[0]).toMatchObject({
      name: 'GITHUB, INC.',
      jurisdiction: 'US-DE',
      country: 'US',
      registration_number: null,
      status: 'inactive',
      incorporated_on: null,
      address: 'Wilmington, 19808, US',
    });
  });

  it('is not_found when GLEIF has no record, or none that matches', async () => {
    fake.reply(EMPTY);
    await expect(lookup({ company_name: 'BP' })).resolves.toEqual({ outcome: 'not_found', items: [] });
    fake.reply(FOUND);
    await expect(lookup({ company_name: 'Royal Dutch Shell' })).resolves.toEqual({ outcome: 'not_found', items: [] });
  });

  it("gives the best match its direct and ultimate parent (Level 2), each with the relationship's key", async () => {
    fake.reply((req) => (req.url.endsWith('-parent') ? PARENT : FOUND));
    const from = fake.requests.length;
    const [item] = (await lookup({ company_name: 'BP International Limited' })).items;
    expect(item!.name).toBe('BP INTERNATIONAL LIMITED');
    const parent = (level: string) => ({
      lei: '213800LBDB8WB3QGVN21',
      name: 'BP P.L.C.',
      source: { provider: 'gleif', record_id: `549300HS2O6PKL6QM186>${level}>213800LBDB8WB3QGVN21` },
    });
    expect(item!.parents).toEqual({
      direct: parent('IS_DIRECTLY_CONSOLIDATED_BY'),
      ultimate: parent('IS_ULTIMATELY_CONSOLIDATED_BY'),
    });
    expect(
      fake.requests
        .slice(from + 1)
        .map((r) => r.url)
        .sort(),
    ).toEqual(['/lei-records/549300HS2O6PKL6QM186/direct-parent', '/lei-records/549300HS2O6PKL6QM186/ultimate-parent']);
  });

  it("says none reported (null parents) on GLEIF's 404, and not known (parents: null) when a call fails", async () => {
    fake.reply((req) => (req.url.endsWith('-parent') ? NO_PARENT : FOUND));
    const [top] = (await lookup({ company_name: 'BP p.l.c.' })).items;
    expect(top!.parents).toEqual({ direct: null, ultimate: null });
    for (const failing of [
      { status: 500, body: '' },
      { status: 404, body: '' },
    ] as FakeAnswer[]) {
      fake.reply((req) =>
        req.url.endsWith('ultimate-parent') ? failing : req.url.endsWith('-parent') ? PARENT : FOUND,
      );
      const answer = await lookup({ company_name: 'BP p.l.c.' });
      expect(answer.outcome).toBe('found');
      expect(answer.items[0]!.parents).toBeNull();
    }
  });

  it('refuses a record whose LEI is not one (malformed)', async () => {
    fake.reply({ ...FOUND, body: { data: [{ ...BP, attributes: { ...BP.attributes, lei: 'not-an-lei' } }] } });
    await expect(lookup({ company_name: 'BP' })).rejects.toMatchObject({ code: 'malformed' });
  });
});
