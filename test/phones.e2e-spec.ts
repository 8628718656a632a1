import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, Stack, ledgerState, runCli, settled, sql } from '@dossier/testing';

type Envelope = {
  status: string;
  results: Record<string, unknown>[];
  credits_remaining: number;
};
type ErrorBody = { error: { code: string; details: { field: string; issue: string }[] } };

const SIGNUP = 100;

/**
 * A person search's phone in any format (ADR 0044), end to end: records imported by the compiled CLI
 * (countries written as names, phones written nationally), the gateway and a worker as processes. A national
 * number is read in the region of `country`, else of the country `location` names, else DEFAULT_REGION.
 */
describe('person search by a phone in any format (CLI import, gateway + worker)', () => {
  let stack: Stack;
  let api: Api;
  let dir: string;
  const source = `phones-e2e-${randomUUID()}`;
  // Names no other test writes, so results are this test's records only.
  const tag = `Ph${randomUUID()
    .slice(0, 6)
    .replace(/[^a-z]/g, 'k')}`;
  const texan = `Pat ${tag} Austin`;
  const londoner = `Lee ${tag} Holborn`;
  const unplaced = `Sam ${tag} Nowhere`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dossier-phones-e2e-'));
    const file = join(dir, 'people.jsonl');
    const record = (id: string, full_name: string, phone: string, country?: string) =>
      JSON.stringify({
        source,
        external_id: id,
        full_name,
        phones: [phone],
        ...(country === undefined ? {} : { locations: [{ city: null, region: null, country }] }),
      });
    writeFileSync(
      file,
      [
        record('texan', texan, '(512) 555-0176', 'USA'),
        record('londoner', londoner, '020 7946 0018', 'United Kingdom'),
        // No country: its phone is read in the CLI's DEFAULT_REGION (US unless set).
        record('unplaced', unplaced, '415 555 0178'),
      ].join('\n'),
    );
    const imported = await runCli(['import', 'person', file]);
    expect([imported.code, imported.stderr.match(/^line .*/gm)]).toEqual([0, null]);

    stack = await Stack.start({ label: 'phones', env: { SIGNUP_CREDITS: String(SIGNUP) } });
    api = new Api(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
    await sql(`DELETE FROM people WHERE source = $1`, [source]);
    rmSync(dir, { recursive: true, force: true });
  });

  const namesOf = (body: Envelope) => body.results.map((r) => r['full_name']);

  it('stores a country written "USA" as US, and finds its national phone by the E.164 number', async () => {
    const { key } = await api.register(SIGNUP);
    const res = await api.post<Envelope>('/v1/search/person', { phone: '+15125550176' }, { key });
    expect([res.status, namesOf(res.body)]).toEqual([200, [texan]]);
    // Shown in E.164, as every person item shows its phones.
    expect(res.body.results[0]).toMatchObject({
      phones: ['+15125550176'],
      locations: [{ city: null, region: null, country: 'US' }],
      matched_on: ['phone'],
    });
    const unplacedRes = await api.post<Envelope>('/v1/search/person', { phone: '+1 415 555 0178' }, { key });
    expect(namesOf(unplacedRes.body)).toEqual([unplaced]);
  });

  it('reads a national phone in the region of country, then of location, then of DEFAULT_REGION (US)', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    for (const [body, name] of [
      [{ phone: '(512) 555-0176', country: 'US' }, texan],
      [{ phone: '020 7946 0018', country: 'gb' }, londoner],
      [{ phone: '512.555.0176', location: 'Austin, TX' }, texan],
      [{ phone: '020 7946 0018', location: 'London, UK' }, londoner],
      [{ phone: '512-555-0176' }, texan],
    ] as const) {
      const res = await api.post<Envelope>('/v1/search/person', body, { key });
      expect([body, res.status, namesOf(res.body)]).toEqual([body, 200, [name]]);
    }
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 5, { reserves: 5, captures: 5, releases: 0 }));
  });

  it('refuses a phone that is no number where it was read with a 400 naming phone and the region, charging nothing', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    for (const [body, issue] of [
      [{ phone: '020 7946 0018' }, "is not a phone number in US (read in the operator's default region)"],
      [
        { phone: '020 7946 0018', location: 'Austin, TX' },
        'is not a phone number in US (read in the region of location)',
      ],
      [{ phone: '(512) 555-0176 99', country: 'US' }, 'is not a phone number in US (read in the region of country)'],
    ] as const) {
      const res = await api.post<ErrorBody>('/v1/search/person', body, { key });
      expect([body, res.status, res.body.error.code, res.body.error.details]).toEqual([
        body,
        400,
        'validation_error',
        [{ field: 'phone', issue }],
      ]);
    }
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 0, captures: 0, releases: 0 }));
  });

  it('reads a national phone in the region a gateway started with DEFAULT_REGION=GB names, in a batch too', async () => {
    const gb = new Api((await stack.startGateway({ DEFAULT_REGION: 'GB' })).baseUrl);
    const { key, accountId } = await gb.register(SIGNUP);
    const res = await gb.post<Envelope>('/v1/search/person', { phone: '020 7946 0018' }, { key });
    expect([res.status, namesOf(res.body)]).toEqual([200, [londoner]]);
    // A batch item is read by the same function as the endpoint: the same regions, the same refusal.
    const batch = await gb.post<{ items: Record<string, unknown>[] }>(
      '/v1/batch',
      {
        requests: [
          { kind: 'person', input: { phone: '020 7946 0018' } },
          { kind: 'person', input: { phone: '(512) 555-0176', location: 'Austin, TX' } },
          { kind: 'person', input: { phone: '1 512 555 0176' } },
        ],
      },
      { key },
    );
    expect(batch.status).toBe(200);
    const [london, austin, refused] = batch.body.items;
    expect([namesOf(london as Envelope), namesOf(austin as Envelope)]).toEqual([[londoner], [texan]]);
    expect(refused).toEqual({
      status: 'error',
      error: {
        code: 'validation_error',
        message: expect.any(String),
        details: [{ field: 'phone', issue: "is not a phone number in GB (read in the operator's default region)" }],
      },
    });
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 3, { reserves: 3, captures: 3, releases: 0 }));
  });
});
