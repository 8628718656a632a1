import type { IdentifierHolder, LocalIndex } from '@dossier/domain';
import type { PersonRecordItem } from '@dossier/contracts';
import { personItem } from '@dossier/testing';
import { MAX_HOLDERS, resolvePeople, sharedIdentifiers, type PersonCandidate } from './resolve-people';

/** A provider's record: a person item without what the merge adds. */
function record(over: Partial<PersonRecordItem>): PersonRecordItem {
  const { linked_by: _l, kept_apart: _k, ...item } = personItem({ first_name: null, last_name: null, ...over });
  return item;
}

const local = (item: PersonRecordItem): PersonCandidate => ({ precedence: 10, item, identities: [] });
const vendor = (item: PersonRecordItem, identities: string[] = []): PersonCandidate => ({
  precedence: 0,
  item: { ...item, sources: ['pdl'] },
  identities,
});

const idsOf = (items: { id: string }[]) => items.map((i) => i.id).sort();

describe('resolving people: one item per subject', () => {
  it('keeps a household apart though it shares a phone, and says why on both items', () => {
    const grace = record({ id: 'grace', full_name: 'Grace Hopper', phones: ['+12025550142'], emails: ['g@x.example'] });
    const marquis = record({
      id: 'marquis',
      full_name: 'Marquis Ortiz',
      phones: ['+1 (202) 555-0142'],
      birth_year: 1961,
    });
    const items = resolvePeople([local(grace), local(marquis)]);
    expect(idsOf(items)).toEqual(['grace', 'marquis']);
    const g = items.find((i) => i.id === 'grace')!;
    expect(g.emails).toEqual(['g@x.example']);
    expect(g.linked_by).toEqual([]);
    expect(g.kept_apart).toEqual([
      {
        item: 'marquis',
        shared: [{ type: 'phone', value: '+12025550142' }],
        reason: 'family names differ (Hopper and Ortiz) and no alias links them',
      },
    ]);
    expect(items.find((i) => i.id === 'marquis')!.kept_apart[0]!.item).toBe('grace');
  });

  it('links no one through a role address, even people whose names agree', () => {
    const ann = record({ id: 'ann', full_name: 'Ann Lee', emails: ['info@acme.example'] });
    const bob = record({ id: 'bob', full_name: 'Bob Kim', emails: ['Info@Acme.example'] });
    const ann2 = vendor(record({ id: 'ann-pdl', full_name: 'Ann Lee', emails: ['info@acme.example'] }));
    const items = resolvePeople([local(ann), local(bob), ann2]);
    expect(idsOf(items)).toEqual(['ann', 'ann-pdl', 'bob']);
    const reasons = items.find((i) => i.id === 'ann')!.kept_apart.map((k) => [k.item, k.reason]);
    expect(reasons).toEqual(
      expect.arrayContaining([
        ['ann-pdl', 'the email info@acme.example is a role address, shared by whoever holds the role'],
        ['bob', 'family names differ (Lee and Kim) and no alias links them'],
      ]),
    );
  });

  it('keeps a father and son of one name on one landline apart, and puts a third record on neither', () => {
    const father = record({ id: 'sr', full_name: 'John Smith', phones: ['+15125550100'], birth_year: 1960 });
    const son = record({ id: 'jr', full_name: 'John Smith', phones: ['+15125550100'], birth_year: 1990 });
    // The vendor knows no birth year: either could be it, so the line links it to no one.
    const third = vendor(record({ id: 'pdl', full_name: 'John Smith', phones: ['+1 512 555 0100'] }));
    const items = resolvePeople([local(father), local(son), third]);
    expect(idsOf(items)).toEqual(['jr', 'pdl', 'sr']);
    const pdl = items.find((i) => i.id === 'pdl')!;
    expect(pdl.kept_apart.map((k) => k.item).sort()).toEqual(['jr', 'sr']);
    expect(pdl.kept_apart[0]!.reason).toBe(
      'the phone +15125550100 is held here by people who cannot be one, so it links no one by itself',
    );
    expect(items.find((i) => i.id === 'sr')!.kept_apart.find((k) => k.item === 'jr')!.reason).toBe(
      'born 1960 and 1990, more than a year apart',
    );
  });

  it('keeps a recycled number apart: other names, decades apart', () => {
    const before = record({ id: 'old', full_name: 'Edna Park', phones: ['+13125550111'], birth_year: 1931 });
    const after = vendor(record({ id: 'new', full_name: 'Tyler Nguyen', phones: ['+13125550111'], birth_year: 1998 }));
    expect(idsOf(resolvePeople([local(before), after]))).toEqual(['new', 'old']);
  });

  it('never chains through a conflict: A–B by phone and B–C by e-mail leaves three people apart', () => {
    const a = record({ id: 'a', full_name: 'Alice Brown', phones: ['+14155550101'] });
    const b = record({ id: 'b', full_name: 'Carlos Diaz', phones: ['+14155550101'], emails: ['cd@x.example'] });
    const c = vendor(record({ id: 'c', full_name: 'Dana White', emails: ['cd@x.example'] }));
    expect(idsOf(resolvePeople([local(a), local(b), c]))).toEqual(['a', 'b', 'c']);
  });

  it('puts a record linked to two people who cannot be one with neither', () => {
    // B's names agree with A's and C's; A and C are born decades apart.
    const a = record({ id: 'a', full_name: 'Sam Reed', phones: ['+16175550100'], birth_year: 1950 });
    const b = vendor(record({ id: 'b', full_name: 'Sam Reed', phones: ['+16175550100'], emails: ['sam@r.example'] }));
    const c = record({ id: 'c', full_name: 'Samuel Reed', emails: ['sam@r.example'], birth_year: 1985 });
    const items = resolvePeople([local(a), local(c), b]);
    expect(idsOf(items)).toEqual(['a', 'b', 'c']);
    expect(items.find((i) => i.id === 'b')!.kept_apart.map((k) => [k.item, k.reason])).toEqual([
      ['a', 'one of them shares identifiers with two people who cannot be one, so it is put with neither'],
      ['c', 'one of them shares identifiers with two people who cannot be one, so it is put with neither'],
    ]);
  });

  it('checks every pair a join would make, not only the link: a chain stops before a conflict', () => {
    // A–B by phone, B–D by e-mail, D–C by another e-mail; A (1950) and C (1985) cannot be one person.
    const a = record({ id: 'a', full_name: 'Sam Reed', phones: ['+16175550100'], birth_year: 1950 });
    const b = vendor(record({ id: 'b', full_name: 'Sam Reed', phones: ['+16175550100'], emails: ['s1@r.example'] }));
    const d = vendor(record({ id: 'd', full_name: 'Sam Reed', emails: ['s1@r.example', 's2@r.example'] }));
    const c = record({ id: 'c', full_name: 'Sam Reed', emails: ['s2@r.example'], birth_year: 1985 });
    const items = resolvePeople([local(a), local(c), b, d]);
    expect(idsOf(items)).toEqual(['a', 'c']);
    // A–B and D–C join first (one identifier each, in rank order); B–D would put A and C together.
    expect(items.map((i) => [i.id, i.linked_by.map((l) => [l.record, l.to])])).toEqual(
      expect.arrayContaining([
        ['a', [['b', 'a']]],
        ['c', [['d', 'c']]],
      ]),
    );
    expect(items.find((i) => i.id === 'a')!.kept_apart).toEqual([
      {
        item: 'c',
        shared: [{ type: 'email', value: 's1@r.example' }],
        reason: 'joining them would put Sam Reed and Sam Reed on one item: born 1950 and 1985, more than a year apart',
      },
    ]);
  });

  it('merges the same person under a nickname from two sources, and says which records and identifiers joined', () => {
    const robert = record({
      id: 'rob',
      full_name: 'Robert Chen',
      phones: ['(415) 555-0199'],
      locations: [{ city: 'San Francisco', region: 'CA', country: 'US' }],
      birth_year: 1975,
    });
    const bob = vendor(record({ id: 'bob', full_name: 'Bob Chen', phones: ['+14155550199'], birth_year: 1976 }), [
      'pdl:42',
    ]);
    const [item, ...rest] = resolvePeople([local(robert), bob]);
    expect(rest).toEqual([]);
    expect(item).toMatchObject({
      id: 'rob',
      full_name: 'Robert Chen',
      phones: ['+14155550199'],
      sources: ['local', 'pdl'],
      linked_by: [{ record: 'bob', sources: ['pdl'], to: 'rob', on: [{ type: 'phone', value: '+14155550199' }] }],
      kept_apart: [],
    });
  });

  it('shows phones in E.164, a national one read in the person’s country', () => {
    const [item] = resolvePeople([
      local(
        record({
          phones: ['020 7946 0018', 'not a number'],
          locations: [{ city: 'London', region: null, country: 'GB' }],
        }),
      ),
    ]);
    expect(item!.phones).toEqual(['+442079460018', 'not a number']);
  });

  it('takes an identifier the local index says many hold as linking no one, with the index’s reason', () => {
    const a = record({ id: 'a', full_name: 'Ann Lee', phones: ['+12125550100'] });
    const b = vendor(record({ id: 'b', full_name: 'Ann Lee', phones: ['+12125550100'] }));
    const shared = new Map([['phone:+12125550100', 'the switchboard reason']]);
    const items = resolvePeople([local(a), b], shared);
    expect(idsOf(items)).toEqual(['a', 'b']);
    expect(items[0]!.kept_apart[0]!.reason).toBe('the switchboard reason');
    expect(resolvePeople([local(a), b])).toHaveLength(1);
  });

  it('links no one through an identifier more than MAX_HOLDERS records of the answer hold', () => {
    const line = '+13125550199';
    const staff = Array.from({ length: MAX_HOLDERS + 1 }, (_, i) =>
      local(record({ id: `s${i}`, full_name: 'Ann Lee', phones: [line] })),
    );
    const items = resolvePeople(staff);
    expect(items).toHaveLength(MAX_HOLDERS + 1);
    expect(items.every((i) => i.linked_by.length === 0)).toBe(true);
  });

  it('puts presence accounts on the one person holding the handle, and on no one when two people hold it', () => {
    const presence = record({
      id: 'per_usr',
      full_name: null,
      first_name: null,
      last_name: null,
      usernames: ['jsmith'],
      accounts: [{ service: 'GitHub', username: 'jsmith', url: 'https://github.com/jsmith' }],
      matched_on: ['username'],
      sources: ['site:GitHub'],
    });
    const one = record({ id: 'one', full_name: 'Jane Smith', usernames: ['JSmith'], birth_year: 1980 });
    const [holder] = resolvePeople([local(one), { precedence: 0, item: presence, identities: [] }]);
    expect(holder).toMatchObject({
      id: 'one',
      accounts: presence.accounts,
      linked_by: [
        { record: 'per_usr', sources: ['site:GitHub'], to: 'one', on: [{ type: 'username', value: 'jsmith' }] },
      ],
    });
    const two = record({ id: 'two', full_name: 'John Smith', usernames: ['jsmith'], birth_year: 1950 });
    const items = resolvePeople([local(one), local(two), { precedence: 0, item: presence, identities: [] }]);
    expect(idsOf(items)).toEqual(['one', 'per_usr', 'two']);
    const alone = items.find((i) => i.id === 'per_usr')!;
    expect(alone.accounts).toEqual(presence.accounts);
    expect(alone.kept_apart.map((k) => k.item).sort()).toEqual(['one', 'two']);
    expect(items.find((i) => i.id === 'one')!.accounts).toEqual([]);
  });
});

describe('identifiers the local index says link no one', () => {
  const holder = (
    field: 'email' | 'phone',
    key: string,
    id: string,
    full_name: string,
    birth_year: number | null = null,
  ): IdentifierHolder => ({
    field,
    key,
    id,
    full_name,
    first_name: null,
    last_name: null,
    aliases: [],
    birth_year,
  });
  const index = (holders: IdentifierHolder[] | Error): Pick<LocalIndex, 'holdersOf'> & { asked: unknown[] } => {
    const asked: unknown[] = [];
    return {
      asked,
      holdersOf: (keys) => {
        asked.push(keys);
        return holders instanceof Error ? Promise.reject(holders) : Promise.resolve(holders);
      },
    };
  };
  const a = local(record({ id: 'a', full_name: 'Ann Lee', phones: ['+12125550100'], emails: ['ann@x.example'] }));
  const b = vendor(record({ id: 'b', full_name: 'Ann Lee', phones: ['+12125550100'] }));

  it('asks only about the identifiers two candidates share, and none when none is shared', async () => {
    const idx = index([]);
    expect(await sharedIdentifiers([a, b], idx)).toEqual(new Map());
    expect(idx.asked).toEqual([{ email_keys: [], phone_keys: ['+12125550100'] }]);
    const alone = index([]);
    await sharedIdentifiers([a], alone);
    expect(alone.asked).toEqual([]);
  });

  it('marks a number held by more than MAX_HOLDERS records (a switchboard) or by people who conflict (a household)', async () => {
    const many = Array.from({ length: MAX_HOLDERS + 1 }, (_, i) => holder('phone', '+12125550100', `h${i}`, 'Ann Lee'));
    expect([...(await sharedIdentifiers([a, b], index(many))).values()]).toEqual([
      `the phone +12125550100 is held by more than ${MAX_HOLDERS} records in the local index (a switchboard or a shared inbox), so it links no one by itself`,
    ]);
    const household = [
      holder('phone', '+12125550100', 'a', 'Ann Lee'),
      holder('phone', '+12125550100', 'z', 'Zed Lee'),
    ];
    expect([...(await sharedIdentifiers([a, b], index(household))).keys()]).toEqual(['phone:+12125550100']);
    const samePerson = [
      holder('phone', '+12125550100', 'a', 'Ann Lee'),
      holder('phone', '+12125550100', 'a2', 'Ann Lee'),
    ];
    expect(await sharedIdentifiers([a, b], index(samePerson))).toEqual(new Map());
  });

  it('links no one through an identifier it could not check (the index failed)', async () => {
    const shared = await sharedIdentifiers([a, b], index(new Error('connection terminated')));
    expect([...shared.keys()]).toEqual(['phone:+12125550100']);
    expect(resolvePeople([a, b], shared)).toHaveLength(2);
  });
});
