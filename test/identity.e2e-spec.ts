import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { personRowOf, subjectId, type PersonRecord } from '@dossier/domain';
import { openDataSource, writePeople } from '@dossier/persistence';
import { Api, FakeUpstream, REPO_ROOT, Stack, testEnv, type FakeAnswer } from '@dossier/testing';

type Item = {
  id: string;
  full_name: string | null;
  emails: string[];
  phones: string[];
  sources: string[];
  linked_by: { record: string; sources: string[]; to: string; on: { type: string; value: string }[] }[];
  kept_apart: { item: string; shared: { type: string; value: string }[]; reason: string }[];
};
type Envelope = { status: string; results: Item[]; sources: { provider: string; outcome: string }[] };

/**
 * Who is the same person (API.md, "Result items"), end to end: records in the operator's index (the run's
 * Postgres), People Data Labs as a loopback fake speaking its documented format, the gateway and a worker
 * as processes. Each case that fools a naive merge: a household line, a role address, a father and son of
 * one name on one landline, a recycled number, a chain, and the same person under a nickname from two
 * sources.
 */
describe('identity resolution over HTTP (local index + PDL, gateway + worker)', () => {
  let db: DataSource;
  let stack: Stack;
  let api: Api;
  let key: string;
  let pdl: FakeUpstream;
  const source = `identity-e2e-${randomUUID()}`;
  // Family names no other test writes, so every record found is this test's.
  const tag = `Qz${randomUUID()
    .slice(0, 6)
    .replace(/[^a-z]/g, 'k')}`;
  const family = (name: string) => `${name}${tag}`;
  const line = (n: number) => `+1202555${String(200 + n).padStart(4, '0')}`;
  const idOf = (externalId: string) => subjectId('person', source, externalId);

  const records: PersonRecord[] = [
    // A household: two people on one line.
    {
      external_id: 'grace',
      full_name: `Grace ${family('Hopper')}`,
      emails: [`grace@${tag}.example`],
      phones: [line(1)],
    },
    {
      external_id: 'marquis',
      full_name: `Marquis ${family('Ortiz')}`,
      emails: [`mo@${tag}.example`],
      phones: [line(1)],
      birth_year: 1961,
    },
    // Colleagues sharing a role address.
    { external_id: 'ann', full_name: `Ann ${family('Lee')}`, emails: [`info@${tag}.example`] },
    { external_id: 'bob', full_name: `Bob ${family('Kim')}`, emails: [`info@${tag}.example`] },
    // A father and son of one name on one landline.
    { external_id: 'sr', full_name: `John ${family('Smith')}`, phones: [line(3)], birth_year: 1960 },
    { external_id: 'jr', full_name: `John ${family('Smith')}`, phones: [line(3)], birth_year: 1990 },
    // A recycled number: other names, decades apart.
    { external_id: 'edna', full_name: `Edna ${family('Park')}`, phones: [line(4)], birth_year: 1931 },
    { external_id: 'tyler', full_name: `Tyler ${family('Nguyen')}`, phones: [line(4)], birth_year: 1998 },
    // A chain: A–B share a phone, B–C an e-mail.
    { external_id: 'alice', full_name: `Alice ${family('Brown')}`, phones: [line(5)] },
    { external_id: 'carlos', full_name: `Carlos ${family('Diaz')}`, phones: [line(5)], emails: [`cd@${tag}.example`] },
    { external_id: 'dana', full_name: `Dana ${family('White')}`, emails: [`cd@${tag}.example`] },
    // The same person PDL knows as "Bob": the number written nationally, read in the record's country.
    {
      external_id: 'robert',
      full_name: `Robert ${family('Chen')}`,
      phones: ['(202) 555-0206'],
      locations: [{ city: 'Washington', region: 'DC', country: 'US' }],
      birth_year: 1975,
    },
  ].map((r) => ({ source, ...r }));

  /** PDL's documented answer (fixtures/ok/found.json) for the profiles it knows here, by the phone asked. */
  const profiles: Record<string, Record<string, unknown>> = {
    [line(6)]: {
      id: 'pdl-bob',
      full_name: `Bob ${family('Chen')}`,
      first_name: 'Bob',
      last_name: family('Chen'),
      birth_year: 1976,
    },
    [line(1)]: {
      id: 'pdl-grace',
      full_name: `Grace ${family('Hopper')}`,
      first_name: 'Grace',
      last_name: family('Hopper'),
      birth_year: null,
    },
  };

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 2, applicationName: 'identity-e2e' });
    await writePeople(
      db,
      records.map((r) => personRowOf(r)),
    );
    const found = JSON.parse(
      readFileSync(join(REPO_ROOT, 'libs/providers/src/pdl/fixtures/ok/found.json'), 'utf8'),
    ) as {
      body: { data: Record<string, unknown> };
    };
    pdl = await FakeUpstream.start();
    pdl.reply((req): FakeAnswer => {
      const phone = new URL(req.url, 'http://x').searchParams.get('phone') ?? '';
      const profile = profiles[phone];
      if (!profile)
        return {
          status: 404,
          body: { status: 404, error: { type: 'not_found', message: 'No records were found matching your request' } },
        };
      const data = {
        ...found.body.data,
        ...profile,
        mobile_phone: phone,
        phone_numbers: [phone],
        emails: [],
        personal_emails: [],
        work_email: null,
        recommended_personal_email: null,
      };
      return { status: 200, headers: { 'content-type': 'application/json' }, body: { ...found.body, data } };
    });
    stack = await Stack.start({
      label: 'identity',
      workerEnv: { PDL_API_KEY: 'e2e-identity-pdl-key', PDL_BASE_URL: pdl.url },
    });
    api = new Api(stack.baseUrl);
    ({ key } = await api.register(100));
  });
  afterAll(async () => {
    await stack?.stop();
    await pdl?.close();
    await db?.query(`DELETE FROM people WHERE source = $1`, [source]);
    await db?.destroy();
  });

  const search = async (body: Record<string, string>): Promise<Item[]> => {
    const res = await api.post<Envelope>('/v1/search/person', body, { key });
    expect([body, res.status]).toEqual([body, 200]);
    return res.body.results;
  };
  const byId = (items: Item[]) => new Map(items.map((i) => [i.id, i]));

  it('keeps a household apart, though it shares a line, and puts a vendor record on the line with no one', async () => {
    const items = byId(await search({ phone: line(1) }));
    // PDL's Grace shares nothing but the household line: it could be Grace, but the line proves nothing.
    expect([...items.keys()].sort()).toEqual(
      [idOf('grace'), idOf('marquis'), subjectId('person', 'pdl', 'pdl-grace')].sort(),
    );
    const grace = items.get(idOf('grace'))!;
    expect(grace).toMatchObject({
      emails: [`grace@${tag}.example`],
      phones: [line(1)],
      sources: ['local'],
      linked_by: [],
    });
    expect(grace.kept_apart).toEqual(
      expect.arrayContaining([
        {
          item: idOf('marquis'),
          shared: [{ type: 'phone', value: line(1) }],
          reason: `family names differ (${family('Hopper')} and ${family('Ortiz')}) and no alias links them`,
        },
      ]),
    );
    expect(items.get(idOf('marquis'))!.emails).toEqual([`mo@${tag}.example`]);
    // Searched by name and phone, Grace first, carrying none of Marquis's details.
    const [first] = await search({ name: `Grace ${family('Hopper')}`, phone: line(1) });
    expect(first).toMatchObject({ id: idOf('grace'), emails: [`grace@${tag}.example`] });
  });

  it('links no one through a role address', async () => {
    const items = await search({ email: `info@${tag}.example` });
    expect(items.map((i) => i.id).sort()).toEqual([idOf('ann'), idOf('bob')].sort());
    for (const item of items) expect(item.kept_apart).toHaveLength(1);
  });

  it('keeps a father and son of one name on one landline apart, saying why', async () => {
    const items = byId(await search({ phone: line(3) }));
    expect([...items.keys()].sort()).toEqual([idOf('jr'), idOf('sr')].sort());
    expect(items.get(idOf('sr'))!.kept_apart).toEqual([
      {
        item: idOf('jr'),
        shared: [{ type: 'phone', value: line(3) }],
        reason: 'born 1960 and 1990, more than a year apart',
      },
    ]);
  });

  it('keeps the holders of a recycled number apart', async () => {
    const items = await search({ phone: line(4) });
    expect(items.map((i) => i.full_name).sort()).toEqual([`Edna ${family('Park')}`, `Tyler ${family('Nguyen')}`]);
  });

  it('never chains: A–B by phone and B–C by e-mail stay three people', async () => {
    for (const body of [{ phone: line(5) }, { email: `cd@${tag}.example` }] as Record<string, string>[]) {
      const items = await search(body);
      expect([body, items.every((i) => i.linked_by.length === 0 && i.sources.length === 1)]).toEqual([body, true]);
    }
    const [carlos] = await search({ name: `Carlos ${family('Diaz')}`, phone: line(5) });
    expect(carlos).toMatchObject({ id: idOf('carlos'), emails: [`cd@${tag}.example`], phones: [line(5)] });
  });

  it('merges the same person under a nickname from two sources, and says which records joined and why', async () => {
    const items = await search({ name: `Bob ${family('Chen')}`, phone: line(6) });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      id: idOf('robert'),
      full_name: `Robert ${family('Chen')}`,
      phones: [line(6)],
      sources: ['local', 'pdl'],
      linked_by: [
        {
          record: subjectId('person', 'pdl', 'pdl-bob'),
          sources: ['pdl'],
          to: idOf('robert'),
          on: [{ type: 'phone', value: line(6) }],
        },
      ],
      kept_apart: [],
    });
  });
});
