import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { fakerDE, fakerEN_US, fakerES, fakerFR } from '@faker-js/faker';
import { companyRowOf, normalizePersonName, personRowOf, type CompanyRecord, type PersonRecord } from '@dossier/domain';
import type { CompanyInput, PersonInput } from '@dossier/contracts';
import { LocalIndexRepository, openDataSource, writeCompanies, writePeople } from '@dossier/persistence';
import { generatedPhone, inTurns, testEnv } from '@dossier/testing';
import { unguardedContext, type ProviderContext } from '../provider';
import { MAX_ITEMS, localProvider, searchCompanies, searchPeople } from './local.provider';
import { mergeItems, personCandidates } from '../merge';
import { sharedIdentifiers } from '../identity/resolve-people';
import { nameVariants } from '../identity/nicknames';

/**
 * The `local` provider against the real Postgres: what each search field finds, how location and age
 * re-rank and narrow, company search, the plans (indexes, never a table scan), and the search quality
 * over 10,000 generated people, 5% of them sharing a phone or a role address with someone else (recall@1 and
 * recall@5 per kind of query — typos, initials, nicknames, national phones, households on one line, colleagues
 * on `info@` — through the merged answer, printed, held above a floor).
 */
describe('local provider (Postgres)', () => {
  let db: DataSource;
  let ctx: ProviderContext;
  const source = `local-spec-${randomUUID()}`;
  const THIS_YEAR = 2026;

  const people: PersonRecord[] = [
    {
      source,
      external_id: 'ada',
      full_name: 'Ada Lovelace',
      aliases: ['Augusta Ada King'],
      emails: ['ada@analytical.example'],
      phones: ['+44 20 7946 0018'],
      usernames: ['ada_l'],
      locations: [{ city: 'London', region: 'England', country: 'GB' }],
      birth_year: 1990,
    },
    {
      source,
      external_id: 'ada-2',
      full_name: 'Ada Lovelace',
      locations: [{ city: 'Paris', region: null, country: 'FR' }],
      birth_year: 1960,
    },
    // As an operator's file may write it: the UK's common code, a phone written nationally.
    {
      source,
      external_id: 'alan',
      full_name: 'Alan Turing',
      phones: ['01908 640404'],
      locations: [{ city: 'Bletchley', region: null, country: 'uk' }],
    },
    {
      source,
      external_id: 'grace',
      full_name: 'Grace Hopper',
      locations: [{ city: 'Los Angeles', region: 'CA', country: 'US' }],
    },
    {
      source,
      external_id: 'zoe',
      full_name: 'Zoë Martínez-Ortega',
      emails: ['zoe@ortega.example'],
      locations: [{ city: 'São Paulo', region: 'SP', country: 'BR' }],
    },
    // Namesakes: one known in the US, one of no known country.
    {
      source,
      external_id: 'katherine-us',
      full_name: 'Katherine Johnson',
      locations: [{ city: 'Hampton', region: 'VA', country: 'US' }],
    },
    {
      source,
      external_id: 'katherine',
      full_name: 'Katherine Johnson',
      locations: [{ city: 'Somewhere', region: null, country: null }],
    },
    // A city with an apostrophe inside a word.
    {
      source,
      external_id: 'mary',
      full_name: 'Mary Walsh',
      locations: [{ city: "St. John's", region: 'NL', country: 'CA' }],
    },
    // Names with an apostrophe inside a word (a typographic one; none) and one written in Chinese characters.
    { source, external_id: 'conan', full_name: 'Conan O\u2019Brien' },
    { source, external_id: 'dangelo', full_name: 'Dangelo Russell' },
    { source, external_id: 'xiaoming', full_name: '王小明' },
  ];
  const companies: CompanyRecord[] = [
    {
      source,
      external_id: 'acme',
      name: 'Acme Widgets Limited',
      registration_number: '01234567',
      jurisdiction: 'GB',
      country: 'GB',
      domain: 'acme-widgets.example',
      status: 'active',
      incorporated_on: '2001-02-03',
    },
    {
      source,
      external_id: 'acme-de',
      name: 'Acme Widgets Holdings Inc.',
      registration_number: '7654321',
      jurisdiction: 'US-DE',
      country: 'US',
    },
    // As an operator's file may write them: the UK's common code, OpenCorporates' jurisdiction style.
    { source, external_id: 'britannia', name: 'Britannia Tools Ltd', jurisdiction: 'uk', country: 'uk' },
    { source, external_id: 'hudson', name: 'Hudson Tools LLC', jurisdiction: 'us_ny' },
    // Jurisdictions written out, as a register's own export or an operator may write them.
    {
      source,
      external_id: 'highland',
      name: 'Highland Looms Ltd',
      registration_number: 'SC012345',
      jurisdiction: 'Scotland',
    },
    {
      source,
      external_id: 'dover',
      name: 'Dover Quarries Inc',
      registration_number: '5550001',
      jurisdiction: 'Delaware',
    },
    {
      source,
      external_id: 'empire',
      name: 'Empire Quarries Inc',
      registration_number: '5550001',
      jurisdiction: 'State of New York',
    },
    // Names with an apostrophe inside a word: an ASCII one, a typographic one, a possessive.
    { source, external_id: 'mcdonalds', name: "McDonald's Corporation", country: 'US' },
    { source, external_id: 'macys', name: 'Macy\u2019s, Inc.', country: 'US' },
    { source, external_id: 'loreal', name: "L'Or\u00e9al S.A.", country: 'FR' },
  ];

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 4, applicationName: 'local-spec' });
    await writePeople(
      db,
      people.map((r) => personRowOf(r)),
    );
    await writeCompanies(db, companies.map(companyRowOf));
    ctx = unguardedContext(AbortSignal.timeout(30_000), {}, new LocalIndexRepository(db));
  });
  afterAll(async () => {
    await db?.query(`DELETE FROM people WHERE source LIKE 'local-spec-%' OR source LIKE 'quality-%'`);
    await db?.query(`DELETE FROM companies WHERE source = $1`, [source]);
    await db?.destroy();
  });

  const ours = <T extends { id: string }>(items: T[], records: { external_id: string }[], kind: 'p' | 'c') => {
    const ids = new Map(
      records.map((r) => [
        kind === 'p' ? personRowOf(r as PersonRecord).id : companyRowOf(r as CompanyRecord).id,
        r.external_id,
      ]),
    );
    return items.filter((i) => ids.has(i.id)).map((i) => ({ ...i, external_id: ids.get(i.id)! }));
  };
  const findPeople = async (input: PersonInput) =>
    ours(await searchPeople(input, ctx, THIS_YEAR), people, 'p').map((p) => ({
      id: p.external_id,
      score: p.match_score,
      on: p.matched_on,
    }));
  const findCompanies = async (input: CompanyInput) =>
    ours((await searchCompanies(input, ctx)).items, companies, 'c').map((c) => ({
      id: c.external_id,
      score: c.match_score,
      on: c.matched_on,
    }));

  describe('person search', () => {
    it('finds by name in either order, with a typo, by an initial and by an alias', async () => {
      for (const name of ['Ada Lovelace', 'lovelace, ada', 'Ada Lovelance', 'A. Lovelace']) {
        const found = await findPeople({ name });
        expect([name, found.map((f) => f.id).sort()]).toEqual([name, ['ada', 'ada-2']]);
        expect(found.every((f) => f.on.includes('name'))).toBe(true);
      }
      expect((await findPeople({ name: 'Augusta Ada King' })).map((f) => [f.id, f.score])).toEqual([['ada', 0.75]]);
      expect((await findPeople({ name: 'zoe martinez ortega' }))[0]).toMatchObject({ id: 'zoe', score: 0.75 });
    });

    it("finds a name with an apostrophe inside a word (O'Brien) by every spelling of it, and a CJK name by its pinyin", async () => {
      for (const name of ["Conan O'Brien", 'Conan OBrien', 'Conan O\u02bcBrien', 'OBrien, Conan']) {
        expect([name, await findPeople({ name })]).toEqual([name, [{ id: 'conan', score: 0.75, on: ['name'] }]]);
      }
      expect(await findPeople({ name: 'Conan O Brien' })).toEqual([{ id: 'conan', score: 0.712, on: ['name'] }]);
      expect(await findPeople({ name: "D'Angelo Russell" })).toEqual([{ id: 'dangelo', score: 0.75, on: ['name'] }]);
      for (const name of ['Wang Xiaoming', 'Xiaoming Wang', '王小明']) {
        expect([name, await findPeople({ name })]).toEqual([name, [{ id: 'xiaoming', score: 0.75, on: ['name'] }]]);
      }
      for (const name of ['Wang Xiao Ming', 'Wangxiaoming']) {
        expect([name, await findPeople({ name })]).toEqual([name, [{ id: 'xiaoming', score: 0.712, on: ['name'] }]]);
      }
      // Another person of the same given name is not them.
      expect(await findPeople({ name: 'Li Xiaoming' })).toEqual([]);
    });

    it('finds by e-mail (any case), phone (any format, national with the country) and username (with @)', async () => {
      expect(await findPeople({ email: ' ADA@Analytical.example' })).toEqual([
        { id: 'ada', score: 0.95, on: ['email'] },
      ]);
      expect((await findPeople({ phone: '020 7946 0018', country: 'GB' })).map((f) => f.id)).toEqual(['ada']);
      expect((await findPeople({ phone: '+442079460018' })).map((f) => f.id)).toEqual(['ada']);
      expect((await findPeople({ username: '@Ada_L' })).map((f) => [f.id, f.on])).toEqual([['ada', ['username']]]);
    });

    it('puts the namesake in the searched city first, and fields that agree raise the score', async () => {
      const inParis = await findPeople({ name: 'Ada Lovelace', location: 'Paris, FR' });
      expect(inParis.map((f) => f.id)).toEqual(['ada-2', 'ada']);
      expect(inParis[0]!.on).toEqual(['name', 'location']);
      const inLondon = await findPeople({ name: 'Ada Lovelace', location: 'London' });
      expect(inLondon.map((f) => f.id)).toEqual(['ada', 'ada-2']);
      const both = await findPeople({ name: 'Ada Lovelace', email: 'ada@analytical.example' });
      expect(both[0]).toMatchObject({ id: 'ada', on: ['name', 'email'] });
      expect(both[0]!.score).toBeGreaterThan(0.95);
    });

    it('reads a country as its code or its name (GB, UK, United Kingdom), on the record and in the search', async () => {
      const inLondon = await findPeople({ name: 'Ada Lovelace', location: 'London, GB' });
      const inGb = await findPeople({ name: 'Ada Lovelace', location: 'GB' });
      for (const location of ['London, UK', 'london, united kingdom', 'London, U.K.']) {
        expect([location, await findPeople({ name: 'Ada Lovelace', location })]).toEqual([location, inLondon]);
      }
      for (const location of ['UK', 'United Kingdom']) {
        expect([location, await findPeople({ name: 'Ada Lovelace', location })]).toEqual([location, inGb]);
      }
      expect(inGb.map((f) => [f.id, f.on])).toEqual([
        ['ada', ['name', 'location']],
        ['ada-2', ['name']],
      ]);
      // A record imported with country `uk`: stored and shown as GB, found there and by its national phone.
      for (const location of ['GB', 'UK', 'United Kingdom', 'Bletchley']) {
        expect([location, await findPeople({ name: 'Alan Turing', location })]).toEqual([
          location,
          [{ id: 'alan', score: 0.825, on: ['name', 'location'] }],
        ]);
      }
      // A country's name is compared with countries only: Canada is not California (CA).
      expect(await findPeople({ name: 'Grace Hopper', location: 'Canada' })).toEqual([
        { id: 'grace', score: 0.638, on: ['name'] },
      ]);
      for (const location of ['CA', 'United States', 'Los Angeles, US']) {
        expect([location, await findPeople({ name: 'Grace Hopper', location })]).toEqual([
          location,
          [{ id: 'grace', score: 0.825, on: ['name', 'location'] }],
        ]);
      }
      const [alan] = await searchPeople({ phone: '+44 1908 640404' }, ctx, THIS_YEAR);
      expect(alan).toMatchObject({
        full_name: 'Alan Turing',
        locations: [{ city: 'Bletchley', region: null, country: 'GB' }],
        matched_on: ['phone'],
      });
    });

    it('finds a city with an apostrophe inside a word however the apostrophe is written, or left out', async () => {
      for (const location of ['St Johns', 'St. John\u2019s', "st john's, NL", 'St Johns, Canada']) {
        expect([location, await findPeople({ name: 'Mary Walsh', location })]).toEqual([
          location,
          [{ id: 'mary', score: 0.825, on: ['name', 'location'] }],
        ]);
      }
      expect(await findPeople({ name: 'Mary Walsh', location: 'St John' })).toEqual([
        { id: 'mary', score: 0.638, on: ['name'] },
      ]);
    });

    it('keeps to a country: a record known only elsewhere is left out, one of no known country stays', async () => {
      expect(await findPeople({ name: 'Ada Lovelace', country: 'FR' })).toEqual([
        { id: 'ada-2', score: 0.75, on: ['name', 'country'] },
      ]);
      expect((await findPeople({ name: 'Ada Lovelace', country: 'GB' })).map((f) => f.id)).toEqual(['ada']);
      // Imported with `uk`: in GB.
      expect((await findPeople({ name: 'Alan Turing', country: 'GB' })).map((f) => f.id)).toEqual(['alan']);
      expect(await findPeople({ name: 'Katherine Johnson', country: 'DE' })).toEqual([
        { id: 'katherine', score: 0.75, on: ['name'] },
      ]);
      expect((await findPeople({ name: 'Katherine Johnson', country: 'US' })).map((f) => [f.id, f.on]).sort()).toEqual([
        ['katherine', ['name']],
        ['katherine-us', ['name', 'country']],
      ]);
      // Every path keeps to it, not the name's only.
      expect(await findPeople({ email: 'ada@analytical.example', country: 'FR' })).toEqual([]);
      expect(await findPeople({ username: 'ada_l', country: 'GB' })).toEqual([
        { id: 'ada', score: 0.7, on: ['username', 'country'] },
      ]);
    });

    it('leaves out those born outside an age range (and keeps those without a birth year)', async () => {
      expect((await findPeople({ name: 'Ada Lovelace', age_range: '30-40' })).map((f) => f.id)).toEqual(['ada']);
      expect((await findPeople({ name: 'Ada Lovelace', age_range: '65+' })).map((f) => f.id)).toEqual(['ada-2']);
      expect((await findPeople({ name: 'Zoe Martinez Ortega', age_range: '-25' })).map((f) => f.id)).toEqual(['zoe']);
    });

    it('answers every person field, the age from the birth year, and not_found for a miss', async () => {
      const answer = await localProvider.lookup('person', { email: 'ada@analytical.example' }, ctx);
      expect(answer.outcome).toBe('found');
      expect(answer.items[0]).toMatchObject({
        full_name: 'Ada Lovelace',
        first_name: 'Ada',
        last_name: 'Lovelace',
        aliases: ['Augusta Ada King'],
        locations: [{ city: 'London', region: 'England', country: 'GB' }],
        birth_year: 1990,
        age: new Date().getUTCFullYear() - 1990,
        sources: ['local'],
      });
      const miss = await localProvider.lookup('person', { name: 'Qwxz Vbnmk' }, ctx);
      expect(miss).toEqual({ outcome: 'not_found', items: [] });
    });
  });

  describe('company search', () => {
    it('finds by a name with or without its legal form, and a part of a longer name', async () => {
      expect((await findCompanies({ company_name: 'ACME WIDGETS LTD' }))[0]).toMatchObject({
        id: 'acme',
        score: 0.75,
        on: ['company_name'],
      });
      expect((await findCompanies({ company_name: 'Acme Widgets' })).map((f) => f.id).sort()).toEqual([
        'acme',
        'acme-de',
      ]);
    });

    it("finds a name with an apostrophe inside a word (McDonald's, Macy’s) by every spelling of it", async () => {
      const spellings: [string, string][] = [
        ['mcdonalds', "McDonald's Corporation"],
        ['mcdonalds', 'McDonalds Corporation'],
        ['mcdonalds', 'McDonald\u2019s'],
        ['mcdonalds', 'MCDONALDS CORP'],
        ['macys', "Macy's"],
        ['macys', 'Macys Inc'],
        ['macys', 'Macy\u2019s, Inc.'],
        ['loreal', 'Loreal'],
        ['loreal', 'L\u2019Or\u00e9al SA'],
      ];
      for (const [id, company_name] of spellings) {
        expect([company_name, await findCompanies({ company_name })]).toEqual([
          company_name,
          [{ id, score: 0.75, on: ['company_name'] }],
        ]);
      }
      // Written apart, as "O Brien" is: one word joined, at 95% of the name's score.
      for (const [id, company_name] of [
        ['macys', 'Macy s'],
        ['loreal', 'L Oreal'],
        ['mcdonalds', 'McDonald s'],
      ] as const) {
        expect([company_name, await findCompanies({ company_name })]).toEqual([
          company_name,
          [{ id, score: 0.712, on: ['company_name'] }],
        ]);
      }
    });

    it('finds by registration number as written with or without leading zeros, and by domain or URL', async () => {
      expect(await findCompanies({ registration_number: '1234567' })).toEqual([
        { id: 'acme', score: 0.95, on: ['registration_number'] },
      ]);
      expect((await findCompanies({ registration_number: '0123 4567' })).map((f) => f.id)).toEqual(['acme']);
      expect((await findCompanies({ domain: 'https://www.acme-widgets.example/about' })).map((f) => f.on)).toEqual([
        ['domain'],
      ]);
    });

    it('keeps to a country, a jurisdiction of it counting (US-DE is in US)', async () => {
      expect((await findCompanies({ company_name: 'Acme Widgets', country: 'US' })).map((f) => [f.id, f.on])).toEqual([
        ['acme-de', ['company_name', 'country']],
      ]);
      expect((await findCompanies({ registration_number: '1234567', country: 'US' })).map((f) => f.id)).toEqual([]);
    });

    it('keeps a record written with UK (not GB) or a jurisdiction like us_ny to its country, shown the ISO way', async () => {
      expect((await findCompanies({ company_name: 'Britannia Tools', country: 'GB' })).map((f) => f.id)).toEqual([
        'britannia',
      ]);
      expect((await findCompanies({ company_name: 'Hudson Tools', country: 'US' })).map((f) => f.id)).toEqual([
        'hudson',
      ]);
      const { items } = await searchCompanies({ company_name: 'Britannia Tools Ltd' }, ctx);
      expect(ours(items, companies, 'c').map((c) => [c.external_id, c.jurisdiction, c.country])).toEqual([
        ['britannia', 'GB', 'GB'],
      ]);
    });

    it('reads a jurisdiction written out as its code, a state as itself (not its country), and keeps to its country', async () => {
      expect((await findCompanies({ company_name: 'Dover Quarries', country: 'US' })).map((f) => f.id)).toEqual([
        'dover',
      ]);
      const { items } = await searchCompanies({ registration_number: '5550001' }, ctx);
      expect(
        ours(items, companies, 'c')
          .map((c) => [c.external_id, c.jurisdiction])
          .sort(),
      ).toEqual([
        ['dover', 'US-DE'],
        ['empire', 'US-NY'],
      ]);
    });

    it('finds a UK number typed without the zeros after its prefix, in GB or with no country, not elsewhere', async () => {
      expect(await findCompanies({ registration_number: 'SC12345' })).toEqual([
        { id: 'highland', score: 0.95, on: ['registration_number'] },
      ]);
      expect((await findCompanies({ registration_number: 'sc 12345', country: 'GB' })).map((f) => f.id)).toEqual([
        'highland',
      ]);
      expect((await findCompanies({ registration_number: 'SC12345', country: 'US' })).map((f) => f.id)).toEqual([]);
      const { items } = await searchCompanies({ registration_number: 'SC012345' }, ctx);
      expect(ours(items, companies, 'c').map((c) => [c.external_id, c.jurisdiction])).toEqual([['highland', 'GB']]);
    });

    it('answers the fields as recorded', async () => {
      const answer = await localProvider.lookup('company', { registration_number: '01234567' }, ctx);
      expect(answer.items[0]).toMatchObject({
        name: 'Acme Widgets Limited',
        registration_number: '01234567',
        jurisdiction: 'GB',
        country: 'GB',
        domain: 'acme-widgets.example',
        status: 'active',
        incorporated_on: '2001-02-03',
        sources: ['local'],
      });
    });
  });

  describe('search quality over generated people', () => {
    const fakers = [fakerEN_US, fakerDE, fakerFR, fakerES];
    /** People of their own; with the one each pair adds, 10,000 in the set. */
    const COUNT = 9_750;
    /** One person in PAIR_EVERY shares their phone or a role address with someone else: 250 pairs, 5% of 10,000. */
    const PAIR_EVERY = 39;
    const generated: PersonRecord[] = [];
    /** Each record's id in the index (personRowOf reads its phones: once per record, not once per query). */
    const idOf = new Map<PersonRecord, string>();
    /** The people who share a line (households, fathers and sons), with the number as written nationally. */
    const onSharedLine = new Map<PersonRecord, { phone: string; country: string }>();
    /** The colleagues who share a role address (`info@…`), with the address. */
    const onRoleAddress = new Map<PersonRecord, string>();
    /** Both people of every pair. */
    const paired: PersonRecord[] = [];
    const nationalPhones = new Map<PersonRecord, { phone: string; country: string }>();
    const qualitySource = `quality-${randomUUID()}`;
    /** Queries of each kind (fewer where fewer records have that form): each against all 10,000 people. */
    const PER_KIND = 500;
    /** Searches at once: one at a time took 69 s for 4,012 searches on a loaded two-core machine, four 25 s. */
    const SEARCHES_AT_ONCE = 4;

    beforeAll(async () => {
      for (const [i, f] of fakers.entries()) f.seed(20261122 + i);
      for (let i = 0; i < COUNT; i++) {
        const f = fakers[i % fakers.length]!;
        const first = f.person.firstName();
        const last = f.person.lastName();
        const middle = i % 3 === 0 ? ` ${f.person.middleName()}` : '';
        const country = f.location.countryCode();
        const phone = generatedPhone(country, i);
        const record: PersonRecord = {
          source: qualitySource,
          external_id: String(i),
          full_name: `${first}${middle} ${last}`,
          first_name: first,
          last_name: last,
          // As operators' files write them: half in E.164, half nationally (read in the record's country).
          phones: phone ? [i % 2 ? phone.e164 : phone.national] : [],
          locations: [{ city: f.location.city(), region: null, country }],
          birth_year: 1940 + (i % 60),
        };
        generated.push(record);
        if (phone) nationalPhones.set(record, { phone: phone.national, country });
        if (i % PAIR_EVERY !== 7) continue;
        // Someone else on the same line or address, in turn: a household member (the same family name,
        // another given name), a son of the same name thirty years younger, a colleague on `info@…` (of a
        // country without a phone to share, always a colleague).
        const pair = Math.floor(i / PAIR_EVERY);
        const kind = phone ? (['household', 'son', 'colleague'] as const)[pair % 3]! : 'colleague';
        if (kind === 'colleague') {
          const role = `info@corp${pair}.example`;
          const [cFirst, cLast] = [f.person.firstName(), f.person.lastName()];
          const own = generatedPhone(country, COUNT + pair);
          const colleague: PersonRecord = {
            source: qualitySource,
            external_id: `${i}-colleague`,
            full_name: `${cFirst} ${cLast}`,
            first_name: cFirst,
            last_name: cLast,
            emails: [role],
            phones: own ? [own.e164] : [],
            locations: [{ city: f.location.city(), region: null, country }],
            birth_year: 1945 + ((i * 7) % 55),
          };
          record.emails = [role];
          generated.push(colleague);
          if (own) nationalPhones.set(colleague, { phone: own.national, country });
          onRoleAddress.set(record, role).set(colleague, role);
          paired.push(record, colleague);
          continue;
        }
        const son = kind === 'son';
        const other = f.person.firstName();
        const member: PersonRecord = {
          ...record,
          external_id: `${i}-${kind}`,
          full_name: son ? record.full_name : `${other} ${last}`,
          first_name: son ? first : other,
          birth_year: (record.birth_year ?? 1960) + (son ? 30 : 2),
        };
        generated.push(member);
        const line = { phone: phone!.national, country };
        nationalPhones.set(member, line);
        onSharedLine.set(record, line).set(member, line);
        paired.push(record, member);
      }
      for (const r of generated) idOf.set(r, personRowOf(r).id);
      for (let i = 0; i < generated.length; i += 2000)
        await writePeople(
          db,
          generated.slice(i, i + 2000).map((r) => personRowOf(r)),
        );
      await db.query('ANALYZE people');
      await db.query('ANALYZE person_names');
    }, 120_000);

    /** What the worker answers from the local index alone: its items, merged by identity (API.md). */
    const answer = async (input: PersonInput) => {
      // Each search within a deadline of its own, as each job has.
      const own = unguardedContext(AbortSignal.timeout(10_000), {}, ctx.localIndex);
      const items = await searchPeople(input, own, THIS_YEAR);
      const contributions = [{ precedence: 10, items }];
      const shared = await sharedIdentifiers(personCandidates(contributions), ctx.localIndex!);
      return mergeItems('person', contributions, shared);
    };

    /** A nickname or variant of the record's given name (the first in order), if it has one. */
    const nicknameOf = (r: PersonRecord): string | null => {
      const given = normalizePersonName(r.first_name!).split(' ')[0]!;
      return [...nameVariants(given)].sort()[0] ?? null;
    };

    /** The query kinds the issues name, each a search for a record, or null when the record has no such form. */
    const unaccented = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
    const VARIANTS: Record<string, (r: PersonRecord) => PersonInput | null> = {
      exact: (r) => ({ name: r.full_name }),
      typo: (r) => {
        const last = r.last_name!;
        if (last.length < 5) return null;
        const at = Math.floor(last.length / 2);
        const swapped = last.slice(0, at) + last[at + 1] + last[at] + last.slice(at + 2);
        return { name: `${r.first_name} ${swapped}` };
      },
      swapped: (r) => ({ name: `${r.last_name} ${r.first_name}` }),
      'no middle name': (r) => (r.full_name.split(' ').length > 2 ? { name: `${r.first_name} ${r.last_name}` } : null),
      'accents stripped': (r) => {
        const stripped = unaccented(r.full_name);
        return stripped === r.full_name ? null : { name: stripped };
      },
      'accents added': (r) => (/e/.test(r.full_name) ? { name: r.full_name.replace('e', 'é') } : null),
      initial: (r) => ({ name: `${unaccented(r.first_name![0]!)}. ${r.last_name}` }),
      nickname: (r) => {
        const nickname = nicknameOf(r);
        return nickname ? { name: `${nickname} ${r.last_name}` } : null;
      },
      'national phone': (r) => {
        const phone = nationalPhones.get(r);
        return phone ? { phone: phone.phone, country: phone.country } : null;
      },
      'name + household phone': (r) => {
        const line = onSharedLine.get(r);
        return line ? { name: r.full_name, phone: line.phone, country: line.country } : null;
      },
      'name + role address': (r) => {
        const role = onRoleAddress.get(r);
        return role ? { name: r.full_name, email: role } : null;
      },
    };
    /**
     * The other queries of a kind a record is as much a corruption of: "B. Michel" is as much Pélagie Blaise
     * Michel's initial (her middle name's) as Bohémond Michel's, and the search cannot tell them apart either.
     */
    const ALSO_MADE_AS: Record<string, (r: PersonRecord) => PersonInput[]> = {
      initial: (r) =>
        r.full_name
          .slice(0, -r.last_name!.length)
          .trim()
          .split(/\s+/)
          .slice(1)
          .map((given) => ({ name: `${unaccented(given[0]!)}. ${r.last_name}` })),
    };
    /** Floors just below what was measured (see the printed table): only a regression breaks them. */
    const FLOORS: Record<string, { at1: number; at5: number }> = {
      exact: { at1: 0.99, at5: 0.99 },
      typo: { at1: 0.98, at5: 0.98 },
      swapped: { at1: 0.99, at5: 0.99 },
      'no middle name': { at1: 0.99, at5: 0.99 },
      'accents stripped': { at1: 0.99, at5: 0.99 },
      'accents added': { at1: 0.99, at5: 0.99 },
      initial: { at1: 0.97, at5: 0.99 },
      nickname: { at1: 0.98, at5: 0.99 },
      'national phone': { at1: 0.99, at5: 0.99 },
      'name + household phone': { at1: 0.99, at5: 0.99 },
      'name + role address': { at1: 0.99, at5: 0.99 },
    };

    it('finds the right record first (recall@1) and in the top five (recall@5) for each kind of query', async () => {
      const rows: string[] = [];
      const measured: Record<string, { at1: number; at5: number }> = {};
      const started = Date.now();
      let searches = 0;
      for (const [variant, make] of Object.entries(VARIANTS)) {
        // The records each query is this kind of corruption of: a query made from several ("A. Laurent" from
        // Annette and Ariel Laurent, a phone two people hold) cannot tell them apart, so any of them is right.
        const madeFrom = new Map<string, Set<string>>();
        for (const r of generated) {
          const input = make(r);
          for (const made of [...(input ? [input] : []), ...(ALSO_MADE_AS[variant]?.(r) ?? [])]) {
            const key = JSON.stringify(made);
            madeFrom.set(key, (madeFrom.get(key) ?? new Set()).add(idOf.get(r)!));
          }
        }
        // PER_KIND of the records that have this form of query, evenly spread over the set (a pair's as often
        // as any other), or all of them where fewer have it.
        const all = generated.flatMap((record) => {
          const input = make(record);
          return input ? [{ record, input }] : [];
        });
        const every = Math.max(1, Math.floor(all.length / PER_KIND));
        const queries = all.filter((_, k) => k % every === 0).slice(0, PER_KIND);
        // A few searches at once, as the worker's jobs run (SEARCHES_AT_ONCE).
        const found = await inTurns(queries, SEARCHES_AT_ONCE, async ({ record, input }) => {
          const items = await answer(input);
          // A namesake with exactly the same name cannot be told apart by name alone, nor one named exactly as
          // searched (a real "Bob Chen" for "Bob Chen"): either is right.
          const right = (i: { id: string; full_name: string | null }) =>
            i.id === idOf.get(record) ||
            madeFrom.get(JSON.stringify(input))!.has(i.id) ||
            i.full_name === record.full_name ||
            (input.name !== undefined && normalizePersonName(i.full_name ?? '') === normalizePersonName(input.name));
          return { first: items[0] !== undefined && right(items[0]), top5: items.slice(0, 5).some(right) };
        });
        const asked = found.length;
        const at1 = found.filter((f) => f.first).length;
        const at5 = found.filter((f) => f.top5).length;
        searches += asked;
        measured[variant] = { at1: at1 / asked, at5: at5 / asked };
        rows.push(
          `${variant.padEnd(22)} ${String(asked).padStart(4)} queries  recall@1 ${(at1 / asked).toFixed(3)}  recall@5 ${(at5 / asked).toFixed(3)}`,
        );
      }
      console.log(
        [
          `local person search quality over ${generated.length} generated people (${paired.length} sharing a phone or role address)`,
          ...rows,
          `${searches} searches, ${SEARCHES_AT_ONCE} at once, in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        ].join('\n'),
      );
      for (const [variant, floor] of Object.entries(FLOORS)) {
        expect([variant, measured[variant]!.at1 >= floor.at1, measured[variant]!.at5 >= floor.at5]).toEqual([
          variant,
          true,
          true,
        ]);
      }
    }, 300_000);

    it('answers every person it matched, best first (the worker cuts them to the search’s limit)', async () => {
      const family = `Many${randomUUID()
        .slice(0, 8)
        .replace(/[^a-z]/g, 'q')}`;
      const namesakes = Array.from({ length: MAX_ITEMS + 5 }, (_, i) =>
        personRowOf({
          source: qualitySource,
          external_id: `many-${i}`,
          full_name: `Pat ${family}`,
          birth_year: 1950 + i,
        }),
      );
      await writePeople(db, namesakes);
      const items = await answer({ name: `Pat ${family}` });
      expect(items.length).toBe(MAX_ITEMS + 5);
      const scores = items.map((i) => i.match_score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
    });
  });
});
