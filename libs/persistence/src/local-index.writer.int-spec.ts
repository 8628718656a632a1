import type { DataSource } from 'typeorm';
import { randomUUID } from 'node:crypto';
import {
  companyRowOf,
  foldText,
  personRowOf,
  registrationKey,
  type CompanyRecord,
  type PersonRecord,
  type PersonRow,
} from '@dossier/domain';
import { testEnv } from '@dossier/testing';
import { openDataSource } from './data-source';
import { CompanyCountryCodes1830000000000 } from './migrations/1830000000000-company-country-codes';
import { UsernameKeysAfterAt1850000000000 } from './migrations/1850000000000-username-keys-after-at';
import { PersonCountryCodes1860000000000 } from './migrations/1860000000000-person-country-codes';
import { CompanyRegistrationPlaces1980000000000 } from './migrations/1980000000000-company-registration-places';
import { PersonNameKeys1990000000000 } from './migrations/1990000000000-person-name-keys';
import { CompanyNameKeys2050000000000 } from './migrations/2050000000000-company-name-keys';
import { PersonLocationKeys2110000000000 } from './migrations/2110000000000-person-location-keys';
import { writeCompanies, writePeople } from './local-index.writer';

describe('local index writer', () => {
  let db: DataSource;
  const source = `writer-${randomUUID()}`;

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 2, applicationName: 'writer-spec' });
  });
  afterAll(async () => {
    await db?.query(`DELETE FROM people WHERE source = $1`, [source]);
    await db?.query(`DELETE FROM companies WHERE source = $1`, [source]);
    await db?.destroy();
  });

  const ada: PersonRecord = {
    source,
    external_id: 'p1',
    full_name: 'Ada Lovelace',
    aliases: ['Augusta Ada King'],
    emails: [' Ada@Example.COM '],
    phones: ['020 7946 0018'],
    usernames: ['@adal'],
    locations: [{ city: 'London', region: null, country: 'GB' }],
    birth_year: 1815,
  };

  it('inserts once, leaves an unchanged record alone, and replaces a changed one with its names', async () => {
    expect(await writePeople(db, [personRowOf(ada)])).toEqual({ imported: 1, updated: 0, superseded: 0 });
    expect(await writePeople(db, [personRowOf(ada)])).toEqual({ imported: 0, updated: 0, superseded: 0 });
    const renamed = { ...ada, aliases: ['Countess of Lovelace'] };
    expect(await writePeople(db, [personRowOf(renamed)])).toEqual({ imported: 0, updated: 1, superseded: 0 });

    const [row] = await db.query(
      `SELECT email_keys, phone_keys, username_keys, location_keys, first_name, last_name FROM people WHERE source = $1`,
      [source],
    );
    expect(row).toEqual({
      email_keys: ['ada@example.com'],
      phone_keys: ['+442079460018'],
      username_keys: ['adal'],
      location_keys: ['london', 'gb'],
      first_name: 'Ada',
      last_name: 'Lovelace',
    });
    const names = await db.query(`SELECT name_key, is_alias FROM person_names WHERE person_id = $1 ORDER BY name_key`, [
      personRowOf(ada).id,
    ]);
    expect(names).toEqual([
      { name_key: 'ada lovelace', is_alias: false },
      { name_key: 'countess of lovelace', is_alias: true },
    ]);
  });

  it('writes a name once per person when an alias folds to the full name', async () => {
    const row = personRowOf({
      ...ada,
      external_id: 'p-alias',
      full_name: 'José Díaz',
      aliases: ['Jose Diaz', 'JOSÉ DÍAZ'],
    });
    expect(await writePeople(db, [row])).toEqual({ imported: 1, updated: 0, superseded: 0 });
    const names = await db.query(`SELECT name_key, is_alias FROM person_names WHERE person_id = $1`, [row.id]);
    expect(names).toEqual([{ name_key: 'jose diaz', is_alias: false }]);
  });

  it('keeps every character COPY must escape, and the last of duplicates in one batch', async () => {
    const odd = {
      source,
      external_id: 'p2',
      full_name: 'Tab\tBack\\slash "Quote"',
      aliases: ['{brace}', 'comma, "and" quote', 'new\nline'],
      locations: [{ city: 'Zürich', region: null, country: 'CH' }],
    };
    expect(await writePeople(db, [personRowOf(odd)])).toEqual({ imported: 1, updated: 0, superseded: 0 });
    expect(
      await writePeople(db, [personRowOf({ ...odd, birth_year: 1900 }), personRowOf({ ...odd, birth_year: 1901 })]),
    ).toEqual({
      imported: 0,
      updated: 1,
      superseded: 1,
    });
    const [row] = await db.query(
      `SELECT full_name, aliases, locations, birth_year FROM people WHERE source = $1 AND external_id = 'p2'`,
      [source],
    );
    expect(row).toEqual({ full_name: odd.full_name, aliases: odd.aliases, locations: odd.locations, birth_year: 1901 });
  });

  it('upserts companies by (source, external id) with their comparison keys', async () => {
    const acme = {
      source,
      external_id: 'c1',
      name: 'ACME Widgets Ltd.',
      registration_number: '01234567',
      domain: 'https://www.acme.com/about',
    };
    expect(await writeCompanies(db, [companyRowOf(acme)])).toEqual({ imported: 1, updated: 0, superseded: 0 });
    expect(await writeCompanies(db, [companyRowOf(acme)])).toEqual({ imported: 0, updated: 0, superseded: 0 });
    expect(await writeCompanies(db, [companyRowOf({ ...acme, status: 'dissolved' })])).toEqual({
      imported: 0,
      updated: 1,
      superseded: 0,
    });
    const [row] = await db.query(
      `SELECT name_key, registration_key, domain_key, domain, status FROM companies WHERE source = $1`,
      [source],
    );
    expect(row).toEqual({
      name_key: 'acme widgets',
      registration_key: '1234567',
      domain_key: 'acme.com',
      domain: 'acme.com',
      status: 'dissolved',
    });
  });

  it('stores countries and jurisdictions as searched (uk → GB, us_ny → US-NY, Delaware → US-DE), and migrates rows stored before as written', async () => {
    const places: Pick<CompanyRecord, 'jurisdiction' | 'country'>[] = [
      { jurisdiction: 'uk', country: ' uk ' },
      { jurisdiction: 'UK-ENG', country: 'UK' },
      { jurisdiction: 'us_ny', country: null },
      { jurisdiction: 'gb', country: 'gb' },
      { jurisdiction: 'Delaware', country: 'US' },
      { jurisdiction: 'US-DE', country: 'US' },
      { jurisdiction: null, country: null },
    ];
    const records: CompanyRecord[] = places.map((p, i) => ({ source, external_id: `m${i}`, name: 'Acme', ...p }));
    expect(records.map((r) => [companyRowOf(r).jurisdiction, companyRowOf(r).country])).toEqual([
      ['GB', 'GB'],
      ['GB-ENG', 'GB'],
      ['US-NY', null],
      ['GB', 'GB'],
      ['US-DE', 'US'],
      ['US-DE', 'US'],
      [null, null],
    ]);
    // The rows as imports wrote them before: the jurisdiction as written, the country upper-cased.
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(
        `INSERT INTO companies (id, source, external_id, name, name_key, jurisdiction, country)
         SELECT t.id, $1, t.external_id, 'Acme', 'acme', t.jurisdiction, t.country
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS t(id, external_id, jurisdiction, country)`,
        [
          source,
          records.map((r) => companyRowOf(r).id),
          records.map((r) => r.external_id),
          records.map((r) => r.jurisdiction?.trim() ?? null),
          records.map((r) => r.country?.trim().toUpperCase() ?? null),
        ],
      );
      await new CompanyCountryCodes1830000000000().up(runner);
      await new CompanyRegistrationPlaces1980000000000().up(runner);
      const migrated = (await runner.query(
        `SELECT jurisdiction, country FROM companies WHERE source = $1 AND external_id LIKE 'm_' ORDER BY external_id`,
        [source],
      )) as { jurisdiction: string | null; country: string | null }[];
      expect(migrated).toEqual(
        records.map((r) => ({ jurisdiction: companyRowOf(r).jurisdiction, country: companyRowOf(r).country })),
      );
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('stores a jurisdiction written out as its code and a UK number as the register writes it, and migrates rows stored before', async () => {
    const places: Pick<CompanyRecord, 'registration_number' | 'jurisdiction' | 'country'>[] = [
      { registration_number: '01234567', jurisdiction: 'England and Wales', country: null },
      { registration_number: 'SC12345', jurisdiction: 'Scotland', country: 'GB' },
      { registration_number: 'NI1234', jurisdiction: 'GB', country: 'GB' },
      { registration_number: 'sc 12345', jurisdiction: null, country: 'GB' },
      { registration_number: 'SC12345', jurisdiction: 'Delaware', country: 'US' },
      { registration_number: '4785398', jurisdiction: 'State of New York', country: null },
      { registration_number: 'SC012345', jurisdiction: 'GB', country: 'GB' },
      { registration_number: 'AB123', jurisdiction: 'Atlantis', country: null },
      { registration_number: null, jurisdiction: 'Georgia', country: null },
    ];
    const records: CompanyRecord[] = places.map((p, i) => ({ source, external_id: `r${i}`, name: 'Acme', ...p }));
    expect(records.map((r) => [companyRowOf(r).jurisdiction, companyRowOf(r).registration_key])).toEqual([
      ['GB', '1234567'],
      ['GB', 'SC012345'],
      ['GB', 'NI001234'],
      [null, 'SC012345'],
      ['US-DE', 'SC12345'],
      ['US-NY', '4785398'],
      ['GB', 'SC012345'],
      ['Atlantis', 'AB123'],
      ['Georgia', null],
    ]);
    // The rows as imports wrote them before: a jurisdiction written out as written, a number keyed as written.
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(
        `INSERT INTO companies (id, source, external_id, name, name_key, registration_number, registration_key,
                                jurisdiction, country)
         SELECT t.id, $1, t.external_id, 'Acme', 'acme', t.number, t.key, t.jurisdiction, t.country
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
                AS t(id, external_id, number, key, jurisdiction, country)`,
        [
          source,
          records.map((r) => companyRowOf(r).id),
          records.map((r) => r.external_id),
          records.map((r) => r.registration_number ?? null),
          records.map((r) => (r.registration_number ? registrationKey(r.registration_number) : null)),
          records.map((r) => r.jurisdiction ?? null),
          records.map((r) => r.country ?? null),
        ],
      );
      const stored = () =>
        runner.query(
          `SELECT jurisdiction, registration_key, ctid::text AS ctid FROM companies
            WHERE source = $1 AND external_id LIKE 'r_' ORDER BY external_id`,
          [source],
        ) as Promise<{ jurisdiction: string | null; registration_key: string | null; ctid: string }[]>;
      // In batches of two, so that the walk goes on past a batch with nothing to change.
      await new CompanyRegistrationPlaces1980000000000(2).up(runner);
      const migrated = await stored();
      expect(migrated.map((r) => [r.jurisdiction, r.registration_key])).toEqual(
        records.map((r) => [companyRowOf(r).jurisdiction, companyRowOf(r).registration_key]),
      );
      // Again: nothing left to change, nothing written (an UPDATE would move a row to a new ctid).
      await new CompanyRegistrationPlaces1980000000000(2).up(runner);
      expect(await stored()).toEqual(migrated);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('keys a company name with an apostrophe inside a word as searched, and migrates the keys stored before', async () => {
    // Each name, the key imports wrote before (foldText's words, legal forms folded) and the key now.
    const names: [name: string, before: string, now: string][] = [
      ["McDonald's Corporation", 'mcdonald s', 'mcdonalds'],
      ['Macy\u2019s, Inc.', 'macy s', 'macys'],
      ["L'Or\u00e9al S.A.", 'l oreal', 'loreal'],
      ['Acme Widgets Ltd', 'acme widgets', 'acme widgets'],
      ['Soci\u00e9t\u00e9 G\u00e9n\u00e9rale S.A.', 'societe generale', 'societe generale'],
      ["Jones' Bakery Ltd", 'jones bakery', 'jones bakery'],
    ];
    const records: CompanyRecord[] = names.map(([name], i) => ({ source, external_id: `k${i}`, name }));
    // As the import writes them (companyRowOf, then writeCompanies).
    expect(records.map((r) => companyRowOf(r).name_key)).toEqual(names.map(([, , now]) => now));

    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(
        `INSERT INTO companies (id, source, external_id, name, name_key)
         SELECT t.id, $1, t.external_id, t.name, t.name_key
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS t(id, external_id, name, name_key)`,
        [
          source,
          records.map((r) => companyRowOf(r).id),
          records.map((r) => r.external_id),
          records.map((r) => r.name),
          names.map(([, before]) => before),
        ],
      );
      const stored = () =>
        runner.query(
          `SELECT name_key, ctid::text AS ctid FROM companies WHERE source = $1 AND external_id LIKE 'k_' ORDER BY external_id`,
          [source],
        ) as Promise<{ name_key: string; ctid: string }[]>;
      const before = await stored();
      // In batches of two, so that the walk goes on past a batch with nothing to change.
      await new CompanyNameKeys2050000000000(2).up(runner);
      const migrated = await stored();
      expect(migrated.map((r) => r.name_key)).toEqual(names.map(([, , now]) => now));
      // Only the rows whose key changed were written (an UPDATE moves a row to a new ctid).
      expect(migrated.slice(3)).toEqual(before.slice(3));
      // Again: nothing left to change, nothing written.
      await new CompanyNameKeys2050000000000(2).up(runner);
      expect(await stored()).toEqual(migrated);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('keys a place with an apostrophe inside a word as searched, and migrates the location keys stored before', async () => {
    // Each record's locations, the keys imports wrote before (foldText's) and the keys now.
    const places: [locations: NonNullable<PersonRecord['locations']>, before: string[], now: string[]][] = [
      [[{ city: "St. John's", region: 'NL', country: 'CA' }], ['st john s', 'nl', 'ca'], ['st johns', 'nl', 'ca']],
      [
        [{ city: 'Val-d\u2019Or', region: 'Qu\u00e9bec', country: 'CA' }],
        ['val d or', 'quebec', 'ca'],
        ['val dor', 'quebec', 'ca'],
      ],
      [[{ city: 'Leeds', region: null, country: 'GB' }], ['leeds', 'gb'], ['leeds', 'gb']],
      [[{ city: 'S\u00e3o Paulo', region: 'SP', country: 'BR' }], ['sao paulo', 'sp', 'br'], ['sao paulo', 'sp', 'br']],
      [
        [
          { city: "Coeur d'Alene", region: 'ID', country: 'US' },
          { city: 'Boise', region: 'ID', country: 'US' },
        ],
        ['coeur d alene', 'id', 'us', 'boise'],
        ['coeur dalene', 'id', 'us', 'boise'],
      ],
    ];
    const records: PersonRecord[] = places.map(([locations], i) => ({
      source,
      external_id: `l${i}`,
      full_name: 'Ada',
      locations,
    }));
    // As the import writes them (personRowOf, then writePeople).
    expect(records.map((r) => personRowOf(r).location_keys)).toEqual(places.map(([, , now]) => now));

    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(
        `INSERT INTO people (id, source, external_id, full_name, locations, location_keys)
         SELECT t.id, $1, t.external_id, 'Ada', t.locations::jsonb, ARRAY(SELECT json_array_elements_text(t.keys::json))
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS t(id, external_id, locations, keys)`,
        [
          source,
          records.map((r) => personRowOf(r).id),
          records.map((r) => r.external_id),
          records.map((r) => JSON.stringify(personRowOf(r).locations)),
          places.map(([, before]) => JSON.stringify(before)),
        ],
      );
      const stored = () =>
        runner.query(
          `SELECT location_keys, ctid::text AS ctid FROM people WHERE source = $1 AND external_id LIKE 'l_' ORDER BY external_id`,
          [source],
        ) as Promise<{ location_keys: string[]; ctid: string }[]>;
      const before = await stored();
      // In batches of two, so that the walk goes on past a batch with nothing to change.
      await new PersonLocationKeys2110000000000(2).up(runner);
      const migrated = await stored();
      expect(migrated.map((r) => r.location_keys)).toEqual(places.map(([, , now]) => now));
      // Only the rows whose keys changed were written (an UPDATE moves a row to a new ctid).
      expect([migrated[2], migrated[3]]).toEqual([before[2], before[3]]);
      expect([0, 1, 4].map((i) => migrated[i]!.ctid)).not.toEqual([0, 1, 4].map((i) => before[i]!.ctid));
      // Again: nothing left to change, nothing written.
      await new PersonLocationKeys2110000000000(2).up(runner);
      expect(await stored()).toEqual(migrated);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('keys a username written "@ handle" as handle, and migrates the keys stored before with the space after the @', async () => {
    const handles = [
      ['@ GHopper'],
      ['@\u00a0ghopper', 'ghopper', '@ Amazing Grace'],
      ['@ @odd', ' @Plain '],
      ['untouched', '@already'],
    ];
    const records: PersonRecord[] = handles.map((usernames, i) => ({
      source,
      external_id: `u${i}`,
      full_name: 'Grace Hopper',
      usernames,
    }));
    expect(records.map((r) => personRowOf(r).username_keys)).toEqual([
      ['ghopper'],
      ['ghopper', 'amazing grace'],
      ['@odd', 'plain'],
      ['untouched', 'already'],
    ]);
    // The keys as imports wrote them before: trimmed, then the leading @ dropped, then lower-cased.
    const before = (u: string) => u.trim().replace(/^@+/, '').toLowerCase();
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(
        `INSERT INTO people (id, source, external_id, full_name, username_keys)
         SELECT t.id, $1, t.external_id, 'Grace Hopper', ARRAY(SELECT json_array_elements_text(t.keys::json))
           FROM unnest($2::text[], $3::text[], $4::text[]) AS t(id, external_id, keys)`,
        [
          source,
          records.map((r) => personRowOf(r).id),
          records.map((r) => r.external_id),
          handles.map((usernames) => JSON.stringify(usernames.map(before))),
        ],
      );
      await new UsernameKeysAfterAt1850000000000().up(runner);
      const migrated = (await runner.query(
        `SELECT username_keys FROM people WHERE source = $1 AND external_id LIKE 'u_' ORDER BY external_id`,
        [source],
      )) as { username_keys: string[] }[];
      expect(migrated.map((row) => row.username_keys)).toEqual(records.map((r) => personRowOf(r).username_keys));
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('stores a person in country UK as GB, reads a national phone there, and migrates rows stored before as written', async () => {
    const places: { locations: PersonRecord['locations']; phones: string[] }[] = [
      { locations: [{ city: 'London', region: 'England', country: 'UK' }], phones: ['020 7946 0018'] },
      { locations: [{ city: 'Leeds', region: null, country: 'uk' }], phones: ['+44 113 496 0000'] },
      {
        locations: [
          { city: null, region: 'UK', country: null },
          { city: 'Cardiff', region: 'Wales', country: ' gb ' },
        ],
        phones: ['029 2018 0000', 'not a phone'],
      },
      { locations: [{ city: 'Austin', region: 'TX', country: 'US' }], phones: ['+1 202 555 0147'] },
      { locations: [], phones: [] },
    ];
    const records: PersonRecord[] = places.map((p, i) => ({ source, external_id: `m${i}`, full_name: 'Ada', ...p }));
    expect(records.map((r) => [personRowOf(r).locations.map((l) => l.country), personRowOf(r).phone_keys])).toEqual([
      [['GB'], ['+442079460018']],
      [['GB'], ['+441134960000']],
      [[null, 'GB'], ['+442920180000']],
      [['US'], ['+12025550147']],
      [[], []],
    ]);
    expect(personRowOf(records[2]!).location_keys).toEqual(['uk', 'cardiff', 'wales', 'gb']);
    // The rows as writes made them before: each country as written, its keys folded from it, and a
    // national phone read in no country (no key).
    const before = records.map((r) => {
      const row = personRowOf({ ...r, locations: [], phones: [] });
      const locations = r.locations ?? [];
      return {
        ...row,
        locations,
        phones: r.phones ?? [],
        location_keys: [
          ...new Set(
            locations.flatMap((l) =>
              [l.city, l.region, l.country].filter((v): v is string => !!v).map((v) => v.trim().toLowerCase()),
            ),
          ),
        ],
        phone_keys: (r.phones ?? []).filter((p) => p.startsWith('+')).map((p) => p.replace(/ /g, '')),
      };
    });
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(
        `INSERT INTO people (id, source, external_id, full_name, phones, locations, phone_keys, location_keys)
         SELECT t.id, $1, t.external_id, 'Ada', t.phones::text[], t.locations::jsonb,
                array(SELECT jsonb_array_elements_text(t.phone_keys::jsonb)),
                array(SELECT jsonb_array_elements_text(t.location_keys::jsonb))
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
             AS t(id, external_id, locations, phones, phone_keys, location_keys)`,
        [
          source,
          before.map((r) => r.id),
          before.map((r) => r.external_id),
          before.map((r) => JSON.stringify(r.locations)),
          before.map((r) => `{${r.phones.map((p) => `"${p}"`).join(',')}}`),
          before.map((r) => JSON.stringify(r.phone_keys)),
          before.map((r) => JSON.stringify(r.location_keys)),
        ],
      );
      expect(
        (
          (await runner.query(`SELECT location_keys FROM people WHERE source = $1 AND external_id = 'm0'`, [
            source,
          ])) as { location_keys: string[] }[]
        )[0],
      ).toEqual({ location_keys: ['london', 'england', 'uk'] });
      await new PersonCountryCodes1860000000000().up(runner);
      const migrated = (await runner.query(
        `SELECT locations, location_keys, phone_keys FROM people
          WHERE source = $1 AND external_id LIKE 'm_' ORDER BY external_id`,
        [source],
      )) as Pick<PersonRow, 'locations' | 'location_keys' | 'phone_keys'>[];
      expect(migrated).toEqual(
        records.map((r) => {
          const { locations, location_keys, phone_keys } = personRowOf(r);
          return { locations, location_keys, phone_keys };
        }),
      );
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('keys a name with an apostrophe inside a word, and a CJK name, as searched, and migrates the keys stored before', async () => {
    const names: [fullName: string, aliases: string[], keys: [string, boolean][]][] = [
      ['Conan O\u2019Brien', ["Conan O'Brien", 'Conan OBrien'], [['conan obrien', false]]],
      [
        "D'Angelo Russell",
        ['Russell, D. Angelo'],
        [
          ['dangelo russell', false],
          ['russell d angelo', true],
        ],
      ],
      [
        '王小明',
        ['Wang Xiaoming', 'Xiao-Ming Wang'],
        [
          ['wang xiaoming', false],
          ['xiao ming wang', true],
        ],
      ],
      // Folded as before: nothing of it may change, so its rows are not written again.
      [
        'Ada Lovelace',
        ['Augusta Ada King'],
        [
          ['ada lovelace', false],
          ['augusta ada king', true],
        ],
      ],
      ['Zoë Martínez', [], [['zoe martinez', false]]],
    ];
    const records: PersonRecord[] = names.map(([full_name, aliases], i) => ({
      source,
      external_id: `n${i}`,
      full_name,
      aliases,
    }));
    const sorted = (keys: [string, boolean][]) => [...keys].sort(([a], [b]) => (a < b ? -1 : 1));
    const keysOf = (rows: { name_key: string; is_alias: boolean }[]) =>
      sorted(rows.map((n): [string, boolean] => [n.name_key, n.is_alias]));
    // As the import writes them (personRowOf, then writePeople).
    expect(records.map((r) => keysOf(personRowOf(r).names))).toEqual(names.map(([, , keys]) => sorted(keys)));

    const runner = db.createQueryRunner();
    await runner.startTransaction();
    const stored = async () =>
      (await runner.query(
        `SELECT p.external_id, n.name_key, n.is_alias, n.ctid::text AS ctid FROM person_names n JOIN people p ON p.id = n.person_id
          WHERE p.source = $1 AND p.external_id LIKE 'n_' ORDER BY p.external_id, n.name_key COLLATE "C"`,
        [source],
      )) as { external_id: string; name_key: string; is_alias: boolean; ctid: string }[];
    try {
      const rows = records.map((r) => personRowOf(r));
      await runner.query(
        `INSERT INTO people (id, source, external_id, full_name, aliases)
         SELECT t.id, $1, t.external_id, t.full_name, array(SELECT jsonb_array_elements_text(t.aliases::jsonb))
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS t(id, external_id, full_name, aliases)`,
        [
          source,
          rows.map((r) => r.id),
          rows.map((r) => r.external_id),
          rows.map((r) => r.full_name),
          rows.map((r) => JSON.stringify(r.aliases)),
        ],
      );
      // The keys as imports wrote them before: foldText's words, the full name's winning over an alias's.
      const before = records.flatMap((r, i) => {
        const keys = new Map<string, boolean>();
        for (const alias of r.aliases ?? []) keys.set(foldText(alias), true);
        keys.set(foldText(r.full_name), false);
        return [...keys].map(([name_key, is_alias]) => ({ id: rows[i]!.id, name_key, is_alias }));
      });
      expect(before.filter((n) => n.id === rows[0]!.id).map((n) => n.name_key)).toEqual([
        'conan o brien',
        'conan obrien',
      ]);
      expect(before.filter((n) => n.id === rows[2]!.id).map((n) => n.name_key)).toEqual([
        'wang xiaoming',
        'xiao ming wang',
        'wangxiaoming',
      ]);
      await runner.query(
        `INSERT INTO person_names (person_id, name_key, is_alias) SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[])`,
        [before.map((n) => n.id), before.map((n) => n.name_key), before.map((n) => n.is_alias)],
      );
      const untouched = (await stored()).filter((n) => n.external_id === 'n3' || n.external_id === 'n4');

      await new PersonNameKeys1990000000000().up(runner);
      const migrated = await stored();
      expect(records.map((r) => keysOf(migrated.filter((n) => n.external_id === r.external_id)))).toEqual(
        records.map((r) => keysOf(personRowOf(r).names)),
      );
      // Only the people whose keys changed were written.
      expect(migrated.filter((n) => n.external_id === 'n3' || n.external_id === 'n4')).toEqual(untouched);

      // Idempotent: a second run writes nothing.
      await new PersonNameKeys1990000000000().up(runner);
      expect(await stored()).toEqual(migrated);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
  it('writes two batches of different people at once, sharing words, and a person deleted takes its names along', async () => {
    const person = (k: number): PersonRecord => ({
      source,
      external_id: `pair-${k}`,
      full_name: `Quill Pairwise ${k}`,
    });
    // Two connections, the same new words in both (the case that could deadlock): both commit.
    const [a, b] = await Promise.all([
      writePeople(
        db,
        [0, 2, 4].map((k) => personRowOf(person(k))),
      ),
      writePeople(
        db,
        [1, 3, 5].map((k) => personRowOf(person(k))),
      ),
    ]);
    expect([a.imported, b.imported]).toEqual([3, 3]);
    const names = `SELECT count(*)::int AS n FROM person_names n JOIN people p ON p.id = n.person_id
                    WHERE p.source = $1 AND p.external_id LIKE 'pair-%'`;
    expect(await db.query(names, [source])).toEqual([{ n: 6 }]);
    expect(await db.query(`SELECT word FROM person_words WHERE word IN ('quill', 'pairwise') ORDER BY word`)).toEqual([
      { word: 'pairwise' },
      { word: 'quill' },
    ]);

    const ids = (await db.query(`SELECT id FROM people WHERE source = $1 AND external_id LIKE 'pair-%'`, [source])) as {
      id: string;
    }[];
    await db.query(`DELETE FROM people WHERE source = $1 AND external_id IN ('pair-0', 'pair-1')`, [source]);
    const left = `SELECT count(*)::int AS n FROM person_names WHERE person_id = ANY ($1::text[])`;
    expect(await db.query(left, [ids.map((r) => r.id)])).toEqual([{ n: 4 }]);
  });
});
