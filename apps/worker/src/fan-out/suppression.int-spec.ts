import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { parseSuppressionSubject } from '@dossier/domain';
import type { PersonResultItem, PhoneResultItem, SourceReport } from '@dossier/contracts';
import { emailItem } from '@dossier/providers';
import { SuppressionsRepository, openDataSource } from '@dossier/persistence';
import { personItem, testEnv } from '@dossier/testing';
import type { FanOutResult } from './fan-out';
import { SuppressionFilter, personKeys } from './suppression';

const person = (over: Partial<PersonResultItem>) =>
  personItem({
    id: `per_${randomUUID()}`,
    full_name: null,
    first_name: null,
    last_name: null,
    match_score: 0.9,
    ...over,
  });

const found = (provider: string): SourceReport => ({ provider, outcome: 'found', took_ms: 1 });

/** The worker's suppression step against the real list in Postgres. */
describe('SuppressionFilter (real Postgres)', () => {
  let db: DataSource;
  let list: SuppressionsRepository;
  let filter: SuppressionFilter;
  const tag = randomUUID().slice(0, 8);
  const subjects = [
    parseSuppressionSubject({ email: `optout-${tag}@example.com` }, 'US'),
    parseSuppressionSubject({ phone: '+44 20 7946 0321' }, 'US'),
    parseSuppressionSubject({ name: `Mina ${tag} Harker`, birth_year: 1971 }, 'US'),
  ];
  let queries = 0;

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 2, applicationName: 'int-spec' });
    list = new SuppressionsRepository(db);
    for (const s of subjects) await list.add(s);
    filter = new SuppressionFilter(
      {
        matching: (keys) => {
          queries++;
          return list.matching(keys);
        },
      },
      new Set(['gravatar']),
    );
  });
  afterAll(async () => {
    for (const s of subjects) await list?.remove(s);
    await db?.destroy();
  });

  it('drops every person listed by e-mail, phone, or name with birth year (or an age that gives it), in one query', async () => {
    const thisYear = new Date().getUTCFullYear();
    const listed = [
      person({ full_name: 'Somebody', emails: [`OptOut-${tag}@EXAMPLE.com`] }),
      person({
        full_name: 'Somebody',
        phones: ['020 7946 0321'],
        locations: [{ city: null, region: null, country: 'GB' }],
      }),
      person({ full_name: `Harker, Mina ${tag}`, first_name: 'Mina', last_name: 'Harker', birth_year: 1971 }),
      person({ full_name: `MINA ${tag} HARKER`, age: thisYear - 1971 }),
      person({ full_name: 'Mrs H', aliases: [`Mina ${tag} Harker`], birth_year: 1971 }),
    ];
    const kept = [
      person({ full_name: `Mina ${tag} Harker`, birth_year: 1990 }),
      person({ full_name: `Mina ${tag} Harker` }), // no year: a name entry needs one
      person({ full_name: 'Lucy Westenra', emails: ['lucy@example.com'], phones: ['+442079460322'] }),
      person({ full_name: null, usernames: ['mina'] }),
    ];
    queries = 0;
    const outcome: FanOutResult<'person'> = {
      items: [...listed, ...kept],
      sources: [found('local'), found('pdl')],
      charge: true,
    };
    const result = await filter.apply('person', { name: 'x' }, outcome);
    expect(result).toEqual({ ...outcome, items: kept });
    expect(queries).toBe(1);
  });

  it('leaves a lookup whose every item was listed empty, free, and without a found source', async () => {
    const result = await filter.apply(
      'person',
      { email: `optout-${tag}@example.com` },
      {
        items: [person({ full_name: 'Anyone', emails: [`optout-${tag}@example.com`] })],
        sources: [found('local'), { provider: 'pdl', outcome: 'timeout', took_ms: 5 }],
        charge: true,
      },
    );
    expect(result).toEqual({
      items: [],
      sources: [
        { provider: 'local', outcome: 'not_found', took_ms: 1 },
        { provider: 'pdl', outcome: 'timeout', took_ms: 5 },
      ],
      charge: false,
    });
  });

  it('drops the people found through a listed e-mail or phone that was searched for, keeping the rest', async () => {
    const throughEmail = person({ full_name: 'Anyone', matched_on: ['email'] });
    const throughPhone = person({ full_name: 'Anyone Else', matched_on: ['name', 'phone'] });
    const byName = person({ full_name: 'Lucy Westenra', matched_on: ['name'] });
    const outcome: FanOutResult<'person'> = {
      items: [throughEmail, throughPhone, byName],
      sources: [found('pdl')],
      charge: true,
    };
    queries = 0;
    const result = await filter.apply(
      'person',
      { name: 'Lucy Westenra', email: `OPTOUT-${tag}@example.com`, phone: '020 7946 0321', country: 'GB' },
      outcome,
    );
    expect(result).toEqual({ ...outcome, items: [byName] });
    expect(queries).toBe(1);
    expect(await filter.apply('person', { email: 'lucy@example.com' }, outcome)).toBe(outcome);
  });

  it("keeps a listed address's verification and drops its accounts; other addresses keep theirs", async () => {
    const account = { service: 'gravatar', username: 'mina', url: 'https://gravatar.com/mina' };
    const item = emailItem(`optout-${tag}@example.com`, 'email', {
      accounts: [account],
      deliverability: 'deliverable',
    });
    const outcome: FanOutResult<'email'> = {
      items: [item],
      sources: [found('email'), found('gravatar')],
      charge: true,
    };
    const listed = await filter.apply('email', { email: ` OPTOUT-${tag}@example.com` }, outcome);
    expect(listed).toEqual({
      items: [{ ...item, accounts: [] }],
      sources: [found('email'), { ...found('gravatar'), outcome: 'not_found' }],
      charge: true,
    });
    const other = { ...outcome, items: [emailItem('lucy@example.com', 'email', { accounts: [account] })] };
    expect(await filter.apply('email', { email: 'lucy@example.com' }, other)).toBe(other);
  });

  it('charges nothing for a listed address whose only finding was its accounts, and does not tell they were there', async () => {
    const account = { service: 'gravatar', username: 'mina', url: 'https://gravatar.com/mina' };
    const merged = { ...emailItem(`optout-${tag}@example.com`, 'email', { accounts: [account] }) };
    merged.sources = ['email', 'gravatar'];
    const outcome: FanOutResult<'email'> = {
      items: [merged],
      // DNS could not answer: the profile was all that was found
      sources: [{ provider: 'email', outcome: 'unknown', took_ms: 1, detail: 'no answer' }, found('gravatar')],
      charge: true,
    };
    const listed = await filter.apply('email', { email: `optout-${tag}@example.com` }, outcome);
    expect(listed.charge).toBe(false);
    expect(listed.items).toEqual([{ ...merged, accounts: [], sources: ['email'] }]);
    expect(listed.sources.map((s) => [s.provider, s.outcome])).toEqual([
      ['email', 'unknown'],
      ['gravatar', 'not_found'],
    ]);
  });

  it('has nothing to drop from phone and company items (no owner data in the schema)', async () => {
    queries = 0;
    const outcome = {
      items: [{ e164: '+442079460321' } as PhoneResultItem],
      sources: [found('libphonenumber')],
      charge: true,
    };
    expect(await filter.apply('phone', { phone: '+442079460321' }, outcome)).toBe(outcome);
    expect(queries).toBe(0);
  });

  it("drops a person listed by a name however its apostrophes and CJK script are written (O'Brien, O’Brien, OBrien; 王小明, Wang Xiaoming)", async () => {
    const entries = [
      parseSuppressionSubject({ name: `Sean O'Brien ${tag}`, birth_year: 1980 }, 'US'),
      parseSuppressionSubject({ name: `Liam OConnor ${tag}`, birth_year: 1981 }, 'US'),
      parseSuppressionSubject({ name: '王小明', birth_year: 1901 }, 'US'),
      parseSuppressionSubject({ name: '김민수', birth_year: 1902 }, 'US'),
    ];
    for (const e of entries) await list.add(e);
    try {
      const listed = [
        person({ full_name: `Sean OBrien ${tag}`, birth_year: 1980 }),
        person({ full_name: `Sean O\u2019Brien ${tag}`, birth_year: 1980 }),
        person({ full_name: `Sean O Brien ${tag}`, birth_year: 1980 }),
        person({ full_name: `Liam O'Connor ${tag}`, birth_year: 1981 }),
        person({ full_name: `Liam O\u2019Connor ${tag}`, birth_year: 1981 }),
        person({ full_name: 'Wang Xiaoming', birth_year: 1901 }),
        person({ full_name: 'Gim Minsu', birth_year: 1902 }),
      ];
      const kept = [
        person({ full_name: `Sean OBrien ${tag}`, birth_year: 1990 }),
        person({ full_name: `Liam O Connor ${tag}`, birth_year: 1981 }), // spaced: another spelling
        person({ full_name: 'Wang Xiaoming', birth_year: 1990 }),
      ];
      const outcome: FanOutResult<'person'> = {
        items: [...listed, ...kept],
        sources: [found('local')],
        charge: true,
      };
      const result = await filter.apply('person', { name: 'x' }, outcome);
      expect(result.items.map((p) => p.id)).toEqual(kept.map((p) => p.id));
    } finally {
      for (const e of entries) await list.remove(e);
    }
  });

  it('keys a person by each name it goes by, with both years an age can mean', () => {
    const thisYear = new Date().getUTCFullYear();
    expect(personKeys(person({ full_name: 'Jonathan Q. Harker', aliases: ['Jon Harker'], age: 40 })).sort()).toEqual(
      [
        `name:jon harker:${thisYear - 40}`,
        `name:jon harker:${thisYear - 41}`,
        `name:jonathan harker:${thisYear - 40}`,
        `name:jonathan harker:${thisYear - 41}`,
        `name:jonathan q harker:${thisYear - 40}`,
        `name:jonathan q harker:${thisYear - 41}`,
      ].sort(),
    );
  });
});
