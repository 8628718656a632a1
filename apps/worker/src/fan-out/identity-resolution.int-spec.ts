import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { fakerDE, fakerEN_US, fakerES, fakerFR, type Faker } from '@faker-js/faker';
import { normalizePersonName, personRowOf, subjectId, type PersonRecord } from '@dossier/domain';
import type { PersonInput, PersonResultItem } from '@dossier/contracts';
import { LocalIndexRepository, openDataSource, writePeople } from '@dossier/persistence';
import { conflictOf, localProvider, nameVariants, providersFor } from '@dossier/providers';
import { generatedPhone, inTurns, testEnv } from '@dossier/testing';
import { FanOut } from './fan-out';
import { ProviderMetrics } from './provider-metrics';
import { UpstreamGuards } from './upstream-guards';

/**
 * Identity resolution at scale, measured: 10,000 generated people in the local index (the real Postgres),
 * 5% of them sharing a phone or a role address with someone else — households, fathers and sons of one
 * name, colleagues on `info@`, recycled numbers — and 30% known to a second source, most of them (4 in 5
 * at least) under a nickname of their given name from the shipped list, with no or a slightly different
 * birth year, sharing one identifier with the first. Searches go through the worker's fan-out and merge
 * (the local provider, the index's holders of shared identifiers): by a shared identifier, by name and
 * that identifier, and by name alone for the people who share one; by the identifier the second source
 * shares for the others. Printed: false merges (an item whose records are of two people; target 0) and
 * true merges (a person's two records on one item when the search finds both; target ≥ 0.95), for the
 * nickname pairs and the others apart.
 */
describe('identity resolution over 10,000 generated people (fan-out + merge, Postgres)', () => {
  let db: DataSource;
  let fan: FanOut;
  const source = `identity-${randomUUID()}`;
  const crm = `${source}-crm`;
  const PEOPLE = 10_000;
  /** People in a sharing pair: 5%. */
  const SHARING_PAIRS = PEOPLE / 40;
  /** One person in this many is known to the second source too: 30%. */
  const SECOND_SOURCE_EVERY = 10 / 3;
  /** Searches at once, as the worker's jobs run: one at a time leaves the database idle between answers. */
  const SEARCHES_AT_ONCE = 4;
  const LOCALES: [Faker, string][] = [
    [fakerEN_US, 'US'],
    [fakerDE, 'DE'],
    [fakerFR, 'FR'],
    [fakerES, 'ES'],
  ];

  /** What each generated person is: their records' external ids point back here. */
  interface Person {
    first: string;
    last: string;
    birthYear: number;
    country: string;
    email: string;
    phone: string;
    national: string;
    extraEmails: string[];
  }
  const people: Person[] = [];
  const sharing: { a: number; b: number; kind: string; search: PersonInput }[] = [];
  const seconds: { person: number; search: PersonInput; nickname: boolean }[] = [];
  /** The person each record describes, by item id. */
  const personOf = new Map<string, number>();

  const nameless = { first_name: null, last_name: null, aliases: [], birth_year: null };
  /** Another given name of the person's locale that cannot be theirs (not equal, not a nickname). */
  const otherGiven = (f: Faker, given: string): string => {
    for (;;) {
      const other = f.person.firstName();
      if (conflictOf({ ...nameless, full_name: `${other} X` }, { ...nameless, full_name: `${given} X` })) return other;
    }
  };

  /** The nickname (or the name it is a nickname of) the second source writes for a given name, if it has one. */
  const nicknameOf = (given: string): string | null => {
    const nickname = [...nameVariants(normalizePersonName(given).split(' ')[0]!)].sort()[0];
    return nickname ? nickname[0]!.toUpperCase() + nickname.slice(1) : null;
  };
  /** The people the second source knows too, and of them those (4 in 5) given a name it writes as a nickname. */
  const secondSource = Array.from({ length: Math.ceil(PEOPLE / SECOND_SOURCE_EVERY) }, (_, k) =>
    Math.floor(k * SECOND_SOURCE_EVERY),
  );
  const nicknamed = new Set(secondSource.filter((_, k) => k % 5 !== 4));

  beforeAll(async () => {
    for (const [i, [f]] of LOCALES.entries()) f.seed(20261206 + i);
    for (let i = 0; i < PEOPLE; i++) {
      const [f, country] = LOCALES[i % LOCALES.length]!;
      let first = f.person.firstName();
      for (let tries = 0; nicknamed.has(i) && !nicknameOf(first) && tries < 200; tries++) first = f.person.firstName();
      const last = f.person.lastName();
      const phone = generatedPhone(country, i)!;
      people.push({
        first,
        last,
        birthYear: 1940 + ((i * 7) % 65),
        country,
        email: `p${i}.${randomUUID().slice(0, 6)}@mail${i % 50}.example`,
        phone: phone.e164,
        national: phone.national,
        extraEmails: [],
      });
    }
    // Pairs of different people sharing a line or a role address: person a and person b = a + PEOPLE / 2.
    const KINDS = ['household', 'father and son', 'role address', 'recycled number'] as const;
    for (let n = 0; n < SHARING_PAIRS; n++) {
      const a = n * 17;
      const b = a + PEOPLE / 2;
      const [pa, pb] = [people[a]!, people[b]!];
      const [f] = LOCALES[a % LOCALES.length]!;
      const kind = KINDS[n % KINDS.length]!;
      if (kind === 'household')
        Object.assign(pb, {
          last: pa.last,
          first: otherGiven(f, pa.first),
          phone: pa.phone,
          national: pa.national,
          country: pa.country,
          birthYear: pa.birthYear + 2,
        });
      if (kind === 'father and son')
        Object.assign(pb, {
          first: pa.first,
          last: pa.last,
          phone: pa.phone,
          national: pa.national,
          country: pa.country,
          birthYear: pa.birthYear + 30,
        });
      if (kind === 'recycled number')
        Object.assign(pb, {
          phone: pa.phone,
          national: pa.national,
          country: pa.country,
          birthYear: pa.birthYear > 1970 ? pa.birthYear - 35 : pa.birthYear + 35,
        });
      if (kind === 'role address') {
        const role = `info@corp${n}.example`;
        pa.extraEmails.push(role);
        pb.extraEmails.push(role);
      }
      sharing.push({
        a,
        b,
        kind,
        search: kind === 'role address' ? { email: `info@corp${n}.example` } : { phone: pa.phone },
      });
    }
    const records: PersonRecord[] = people.map((p, i) => ({
      source,
      external_id: String(i),
      full_name: `${p.first} ${p.last}`,
      first_name: p.first,
      last_name: p.last,
      emails: [p.email, ...p.extraEmails],
      // Half written nationally, read in the record's country as the index reads them.
      phones: [i % 2 ? p.phone : p.national],
      locations: [{ city: null, region: null, country: p.country }],
      birth_year: p.birthYear,
    }));
    // The second source: a nickname where the given name has one, no birth year or one a year off, and one
    // identifier in common — the e-mail for two in three, else the phone (written nationally).
    for (const [i, person] of secondSource.entries()) {
      const p = people[person]!;
      const given = nicknameOf(p.first) ?? p.first;
      const byEmail = i % 3 !== 2;
      records.push({
        source: crm,
        external_id: String(person),
        full_name: `${given} ${p.last}`,
        emails: byEmail ? [p.email.toUpperCase()] : [],
        phones: byEmail ? [] : [p.national],
        locations: [{ city: null, region: null, country: p.country }],
        birth_year: i % 2 ? null : p.birthYear + (i % 4 === 0 ? 1 : 0),
      });
      seconds.push({ person, search: byEmail ? { email: p.email } : { phone: p.phone }, nickname: given !== p.first });
    }
    for (const r of records) personOf.set(subjectId('person', r.source, r.external_id), Number(r.external_id));

    db = await openDataSource({
      url: testEnv.databaseUrl,
      poolSize: SEARCHES_AT_ONCE,
      applicationName: 'identity-spec',
    });
    for (let i = 0; i < records.length; i += 2000)
      await writePeople(
        db,
        records.slice(i, i + 2000).map((r) => personRowOf(r)),
      );
    await db.query('ANALYZE people');
    await db.query('ANALYZE person_names');

    const metrics = new ProviderMetrics(new Registry());
    const bucket = {
      take: () => Promise.resolve({ allowed: true, vetoed: false, remaining: 1, retryMs: 0, resetMs: 0 }),
      veto: () => Promise.resolve(),
    };
    const guards = new UpstreamGuards(
      bucket,
      'identity-spec',
      { breakerThreshold: 1000, halfOpenAfterMs: 1000, maxAttempts: 1 },
      metrics,
    );
    fan = new FanOut(guards, metrics, {}, { localIndex: new LocalIndexRepository(db) });
  }, 120_000);
  afterAll(async () => {
    await db?.query(`DELETE FROM people WHERE source = $1 OR source = $2`, [source, crm]);
    await db?.destroy();
  });

  const search = async (input: PersonInput): Promise<PersonResultItem[]> =>
    (await fan.run('person', input, providersFor('person', [localProvider]), Date.now() + 10_000)).items;
  /** The people an item's records describe. */
  const peopleOf = (item: PersonResultItem) =>
    new Set([item.id, ...item.linked_by.map((l) => l.record)].map((id) => personOf.get(id)));

  it('puts no two people on one item, and one person’s two records on one', async () => {
    const falseMerges = new Map<string, string>();
    const check = (items: PersonResultItem[], kind: string) => {
      for (const item of items)
        if (peopleOf(item).size > 1)
          falseMerges.set(
            [item.id, ...item.linked_by.map((l) => l.record)].sort().join(),
            `${kind}: ${item.full_name}`,
          );
    };
    // The people who share an identifier, searched for as an investigator would: by the shared identifier, by
    // each one's name and it (the phone as written nationally, with its country), and by each one's name alone.
    const sharingSearches = sharing.flatMap(({ a, b, kind, search: input }) => [
      { kind: `${kind}, by the identifier`, input },
      ...[a, b].flatMap((n) => {
        const p = people[n]!;
        const name = `${p.first} ${p.last}`;
        const withIt: PersonInput =
          input.email !== undefined ? { name, email: input.email } : { name, phone: p.national, country: p.country };
        return [
          { kind: `${kind}, by name and the identifier`, input: withIt },
          { kind: `${kind}, by name`, input: { name } },
        ];
      }),
    ]);
    const modes = new Map<string, number>();
    await inTurns(sharingSearches, SEARCHES_AT_ONCE, async ({ kind, input }) => {
      check(await search(input), kind);
      const mode = kind.slice(kind.indexOf(', ') + 2);
      modes.set(mode, (modes.get(mode) ?? 0) + 1);
    });
    const found = await inTurns(seconds, SEARCHES_AT_ONCE, async ({ person, search: input, nickname }) => {
      const items = await search(input);
      check(items, 'second source');
      const ids = [subjectId('person', source, String(person)), subjectId('person', crm, String(person))];
      const together = items.some((i) => ids.every((id) => i.id === id || i.linked_by.some((l) => l.record === id)));
      const why = together
        ? null
        : `${JSON.stringify(input)}: ${items.length} items, ${items[0]?.kept_apart[0]?.reason ?? 'none'}`;
      return { nickname, together, why };
    });
    const rate = (of: typeof found) => ({
      merged: of.filter((f) => f.together).length,
      of: of.length,
      rate: of.filter((f) => f.together).length / of.length,
    });
    const nicknames = rate(found.filter((f) => f.nickname));
    const others = rate(found.filter((f) => !f.nickname));
    const all = rate(found);
    const line = (r: ReturnType<typeof rate>) => `${r.merged} of ${r.of} (${r.rate.toFixed(3)})`;
    console.log(
      [
        `identity resolution over ${PEOPLE} generated people (${SHARING_PAIRS * 2} sharing a phone or role address, ${seconds.length} in a second source, ${nicknames.of} of them under a nickname)`,
        `searches for the people who share an identifier: ${[...modes].map(([mode, n]) => `${n} ${mode}`).join(', ')}`,
        `searches for the second source's people: ${seconds.length}, by the identifier its record shares`,
        `false merges: ${falseMerges.size}`,
        `true merges, nickname pairs: ${line(nicknames)}`,
        `true merges, others:         ${line(others)}`,
        `true merges, all:            ${line(all)}`,
        ...found
          .filter((f) => f.why)
          .slice(0, 3)
          .map((f) => `  missed: ${f.why}`),
      ].join('\n'),
    );
    expect([...falseMerges.values()]).toEqual([]);
    expect(nicknames.of).toBeGreaterThanOrEqual(seconds.length * 0.75);
    expect(nicknames.rate).toBeGreaterThanOrEqual(0.95);
    expect(others.rate).toBeGreaterThanOrEqual(0.95);
  }, 300_000);
});
