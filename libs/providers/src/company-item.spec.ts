import { companyRowOf, type CompanyRow, type LocalIndex } from '@dossier/domain';
import { unguardedContext } from './provider';
import { localProvider } from './local/local.provider';
import {
  isoDate,
  joinAddress,
  matchCompany,
  registryAnswer,
  searchByNumberThenName,
  statusOf,
  type RegistryCompany,
} from './company-item';

function record(fields: Partial<RegistryCompany> = {}): RegistryCompany {
  return {
    externalId: '00102498',
    recordId: '/company/00102498',
    identities: ['companies-house:00102498'],
    names: ['BP P.L.C.', 'THE BRITISH PETROLEUM COMPANY P.L.C.'],
    registration_number: '00102498',
    jurisdiction: 'GB',
    country: 'GB',
    status: 'active',
    incorporated_on: '1909-04-14',
    address: "1 St James's Square, London, SW1Y 4PD",
    ...fields,
  };
}

describe('matchCompany', () => {
  it('scores an exact name (legal forms folded) as the local index does: 0.75 on the name alone', () => {
    expect(matchCompany({ company_name: 'bp plc' }, record())).toEqual({
      match_score: 0.75,
      matched_on: ['company_name'],
    });
  });

  it("matches a former name as well as the current one, at the best of the record's names", () => {
    expect(matchCompany({ company_name: 'British Petroleum Company' }, record())).toEqual({
      match_score: 0.75,
      matched_on: ['company_name'],
    });
  });

  it('keeps a name holding every searched word below the exact one, and drops a name that shares too little', () => {
    const international = matchCompany({ company_name: 'BP' }, record({ names: ['BP INTERNATIONAL LIMITED'] }))!;
    expect(international.matched_on).toEqual(['company_name']);
    // "BP" is every word of the name searched but not all of the record's: below an exact name (0.75).
    expect(international.match_score).toBeGreaterThan(0.6);
    expect(international.match_score).toBeLessThan(0.75);
    expect(matchCompany({ company_name: 'Shell' }, record())).toBeNull();
  });

  it('compares registration numbers by their key (leading zeros, spaces); a name that differs adds nothing', () => {
    expect(matchCompany({ registration_number: '102 498' }, record())).toEqual({
      match_score: 0.95,
      matched_on: ['registration_number'],
    });
    // Renamed since: the number matches, the name does not.
    expect(matchCompany({ registration_number: '00102498', company_name: 'Quorvex' }, record())).toEqual({
      match_score: 0.95,
      matched_on: ['registration_number'],
    });
    expect(matchCompany({ registration_number: '99999999' }, record())).toBeNull();
  });

  it('counts a domain only where the record has one, compared as a domain', () => {
    expect(matchCompany({ domain: 'https://www.bp.com/en' }, record({ domain: 'bp.com' }))).toEqual({
      match_score: 0.9,
      matched_on: ['domain'],
    });
    expect(matchCompany({ domain: 'bp.com' }, record())).toBeNull();
  });

  it('says the country matched, and drops a record registered elsewhere', () => {
    expect(matchCompany({ company_name: 'BP', country: 'gb' }, record())).toEqual({
      match_score: 0.75,
      matched_on: ['company_name', 'country'],
    });
    expect(matchCompany({ company_name: 'BP', country: 'US' }, record())).toBeNull();
    // A jurisdiction such as US-DE stands for its country.
    expect(
      matchCompany({ company_name: 'BP', country: 'US' }, record({ country: null, jurisdiction: 'US-DE' }))?.matched_on,
    ).toEqual(['company_name', 'country']);
  });
});

describe('registryAnswer', () => {
  it('answers the matching records best first, capped, with their identities in the same order', () => {
    const answer = registryAnswer(
      'gleif',
      { company_name: 'BP' },
      [
        record({ externalId: 'A', names: ['BP INTERNATIONAL LIMITED'], identities: ['lei:A'] }),
        record({ externalId: 'B', names: ['SHELL PLC'], identities: ['lei:B'] }),
        record({ externalId: 'C', identities: ['lei:C'] }),
      ],
      10,
    );
    expect(answer.outcome).toBe('found');
    expect(answer.items.map((i) => i.name)).toEqual(['BP P.L.C.', 'BP INTERNATIONAL LIMITED']);
    expect(answer.identities).toEqual([['lei:C'], ['lei:A']]);
    expect(answer.items[0]).toMatchObject({ sources: ['gleif'], id: expect.stringMatching(/^com_/) });
    expect(registryAnswer('gleif', { company_name: 'BP' }, [record(), record()], 1).items).toHaveLength(1);
  });

  it('is not_found with no items when nothing matches', () => {
    expect(registryAnswer('gleif', { company_name: 'Shell' }, [record()], 10)).toEqual({
      outcome: 'not_found',
      items: [],
    });
  });

  it('credits each field the record gives to the provider and the record (field_sources, ADR 0068)', () => {
    const [item] = registryAnswer('companies-house', { company_name: 'BP' }, [record()], 10).items;
    const house = [{ provider: 'companies-house', record_id: '/company/00102498' }];
    expect(item!.field_sources).toEqual({
      name: house,
      registration_number: house,
      jurisdiction: house,
      country: house,
      status: house,
      incorporated_on: house,
      address: house,
    });
  });

  it('gives the same record the same id in every search, and another source another id', () => {
    const id = (source: string) => registryAnswer(source, { company_name: 'BP' }, [record()], 10).items[0]!.id;
    expect(id('gleif')).toBe(id('gleif'));
    expect(id('gleif')).not.toBe(id('companies-house'));
  });
});

describe('searchByNumberThenName', () => {
  const bp = record();
  const other = record({ externalId: 'x', names: ['Nordsee Handel GmbH'], registration_number: 'HRB 102498' });
  /** A registry holding `hits` per number or name, and the filters it was asked. */
  const registry = (hits: Record<string, RegistryCompany[]>) => {
    const asked: unknown[] = [];
    const search = (by: { number: string } | { name: string }) => {
      asked.push(by);
      return Promise.resolve(hits['number' in by ? by.number : by.name] ?? []);
    };
    return { asked, search };
  };
  const names = (answer: { items: { name: string }[] }) => answer.items.map((i) => i.name);

  it('asks by number first, and by name only when the number finds nothing that matches', async () => {
    const found = registry({ '00102498': [bp], BP: [bp] });
    const input = { registration_number: ' 00102498 ', company_name: ' BP ' };
    expect(names(await searchByNumberThenName('gleif', input, found.search, 10))).toEqual(['BP P.L.C.']);
    expect(found.asked).toEqual([{ number: '00102498' }]);

    const nothing = registry({ BP: [bp] });
    const unknown = { registration_number: '2', company_name: 'BP' };
    expect(names(await searchByNumberThenName('gleif', unknown, nothing.search, 10))).toEqual(['BP P.L.C.']);
    expect(nothing.asked).toEqual([{ number: '2' }, { name: 'BP' }]);

    // What the number found is neither that number nor that name: no answer, so the name is asked.
    const loose = registry({ '102498': [other], BP: [bp] });
    const both = { registration_number: '102498', company_name: 'BP' };
    expect(names(await searchByNumberThenName('gleif', both, loose.search, 10))).toEqual(['BP P.L.C.']);
    expect(loose.asked).toEqual([{ number: '102498' }, { name: 'BP' }]);
  });

  it('answers by name alone without a number, and not_found without asking twice when no name was given', async () => {
    const byName = registry({ BP: [bp] });
    expect(names(await searchByNumberThenName('gleif', { company_name: ' BP ' }, byName.search, 10))).toEqual([
      'BP P.L.C.',
    ]);
    expect(byName.asked).toEqual([{ name: 'BP' }]);
    const byNumber = registry({ '102498': [other] });
    expect(await searchByNumberThenName('gleif', { registration_number: '102498' }, byNumber.search, 10)).toEqual({
      outcome: 'not_found',
      items: [],
    });
    expect(byNumber.asked).toEqual([{ number: '102498' }]);
  });
});

describe('field helpers', () => {
  it('writes dates as ISO dates, statuses as lower-case phrases, addresses from their known parts', () => {
    expect(isoDate('1996-06-20T00:00:00Z')).toBe('1996-06-20');
    expect(isoDate('1909-04-14')).toBe('1909-04-14');
    expect(isoDate('14/04/1909')).toBeNull();
    // A date's shape is not a date: no 30 February, month 13 or day 0 (what a registry's placeholder can hold).
    expect(isoDate('2023-02-30')).toBeNull();
    expect(isoDate('2023-13-01T00:00:00Z')).toBeNull();
    expect(isoDate('0000-00-00')).toBeNull();
    expect(isoDate('2024-02-29')).toBe('2024-02-29');
    expect(isoDate(null)).toBeNull();
    expect(statusOf('ACTIVE')).toBe('active');
    expect(statusOf(' In  Existence ')).toBe('in existence');
    expect(statusOf('')).toBeNull();
    expect(joinAddress(['1 Main St', null, ' ', 'Springfield'])).toBe('1 Main St, Springfield');
    expect(joinAddress([undefined])).toBeNull();
  });
});

describe('company status', () => {
  it.each([
    ['voluntary-arrangement', 'Voluntary Arrangement', 'VOLUNTARY_ARRANGEMENT'],
    ['converted-closed', 'Converted/Closed', 'converted closed'],
    ['active', 'ACTIVE', 'Active'],
  ])('says %j, %j and %j the same way, as a lower-case phrase', (...written) => {
    const said = new Set(written.map(statusOf));
    expect(said.size).toBe(1);
    expect([...said][0]).toMatch(/^[a-z]+( [a-z]+)*$/);
  });

  it("says a local record's status as the registries say theirs, however the import wrote it", async () => {
    const rows: CompanyRow[] = [
      companyRowOf({ source: 'ch-csv', external_id: '1', name: 'Acme Widgets Ltd', status: 'Voluntary Arrangement' }),
      companyRowOf({ source: 'gleif-csv', external_id: '2', name: 'Acme Widgets Inc', status: 'ACTIVE' }),
    ];
    const index: LocalIndex = {
      findPeople: () => Promise.resolve([]),
      findCompanies: () => Promise.resolve(rows),
      holdersOf: () => Promise.resolve([]),
    };
    const ctx = unguardedContext(new AbortController().signal, {}, index);
    const answer = await localProvider.lookup('company', { company_name: 'Acme Widgets' }, ctx);
    expect(answer.items.map((i) => 'status' in i && i.status).sort()).toEqual([
      statusOf('active'),
      statusOf('voluntary-arrangement'),
    ]);
    // Each field credited to its row, `<source>:<external id>` (ADR 0068).
    expect(answer.items.map((i) => 'field_sources' in i && i.field_sources.status)).toEqual(
      expect.arrayContaining([
        [{ provider: 'local', record_id: 'ch-csv:1' }],
        [{ provider: 'local', record_id: 'gleif-csv:2' }],
      ]),
    );
  });
});
