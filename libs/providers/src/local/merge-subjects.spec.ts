import type { CompanyResultItem } from '@dossier/contracts';
import { personItem } from '@dossier/testing';
import { mergeItems } from '../merge';
import { sourcedBy } from '../field-sources';

const person = personItem;

/** A provider's company item; unless `over` says otherwise, each field with a value credited to its record `id`. */
const company = (over: Partial<CompanyResultItem>): CompanyResultItem => {
  const item: CompanyResultItem = { ...companyFields, field_sources: {}, ...over };
  return over.field_sources
    ? item
    : { ...item, field_sources: sourcedBy(item, { provider: item.sources[0]!, record_id: item.id }) };
};

const companyFields = {
  id: 'com_x',
  name: 'Acme Widgets Ltd',
  registration_number: null,
  jurisdiction: null,
  country: null,
  domain: null,
  status: null,
  incorporated_on: null,
  address: null,
  industry: null,
  match_score: 0.5,
  matched_on: ['company_name'],
  sources: ['local'],
  officers: null,
  controllers: null,
  parents: null,
};

describe('merging people', () => {
  it('makes one item of people sharing an e-mail (any case), scalars by precedence, lists unioned', () => {
    const local = person({
      id: 'per_local',
      aliases: ['Augusta Ada King'],
      emails: ['Ada@Example.com'],
      phones: ['020 7946 0018'],
      usernames: ['Ada_L'],
      locations: [{ city: 'London', region: null, country: 'GB' }],
      birth_year: 1815,
      match_score: 0.75,
    });
    const pdl = person({
      id: 'per_pdl',
      full_name: 'Augusta Ada King',
      emails: ['ada@example.com', 'countess@example.org'],
      phones: ['+442079460018', '+442079460999'],
      usernames: ['ada_l', 'countess'],
      birth_year: null,
      match_score: 0.9,
      matched_on: ['email'],
      sources: ['pdl'],
    });
    const [merged, ...rest] = mergeItems('person', [
      { precedence: 0, items: [pdl] },
      { precedence: 10, items: [local] },
    ]);
    expect(rest).toEqual([]);
    expect(merged).toMatchObject({
      id: 'per_local',
      full_name: 'Ada Lovelace',
      birth_year: 1815,
      // Each address and handle once, as the highest precedence wrote it; each number once, in E.164.
      emails: ['Ada@Example.com', 'countess@example.org'],
      phones: ['+442079460018', '+442079460999'],
      usernames: ['Ada_L', 'countess'],
      match_score: 0.9,
      matched_on: ['name', 'email'],
      sources: ['local', 'pdl'],
      linked_by: [
        {
          record: 'per_pdl',
          sources: ['pdl'],
          to: 'per_local',
          on: [
            { type: 'email', value: 'ada@example.com' },
            { type: 'phone', value: '+442079460018' },
          ],
        },
      ],
      kept_apart: [],
    });
  });

  it('joins items through a shared phone, and through an identity a provider passed', () => {
    const a = person({ id: 'a', phones: ['+14155552671'] });
    const b = person({ id: 'b', phones: ['+1 415 555 2671'], sources: ['pdl'] });
    const c = person({ id: 'c', full_name: 'Someone Else', sources: ['other'] });
    const d = person({ id: 'd', full_name: 'Someone Else', sources: ['pdl'] });
    const merged = mergeItems('person', [
      { precedence: 10, items: [a, c], identities: [[], ['pdl:77']] },
      { precedence: 0, items: [b, d], identities: [[], ['pdl:77']] },
    ]);
    expect(merged.map((m) => m.sources)).toEqual([
      ['local', 'pdl'],
      ['other', 'pdl'],
    ]);
  });

  it("joins a phone written nationally, read in the person's country as the index reads it, and no other", () => {
    const london = { city: 'London', region: null, country: 'GB' };
    const local = person({ id: 'per_local', phones: ['020 7946 0018'], locations: [london], matched_on: ['phone'] });
    const pdl = person({ id: 'per_pdl', phones: ['+442079460018'], matched_on: ['phone'], sources: ['pdl'] });
    // The same digits written nationally in another country are another number.
    const dc = { city: 'Washington', region: 'DC', country: 'US' };
    const elsewhere = person({ id: 'per_us', phones: ['020 7946 0018'], locations: [dc], sources: ['other'] });
    const merged = mergeItems('person', [
      { precedence: 10, items: [local, elsewhere] },
      { precedence: 0, items: [pdl] },
    ]);
    expect(merged.map((m) => [m.id, m.sources])).toEqual(
      expect.arrayContaining([
        ['per_local', ['local', 'pdl']],
        ['per_us', ['other']],
      ]),
    );
    expect(merged).toHaveLength(2);
  });

  it('joins a nameless vendor profile to the named person sharing its e-mail, and leaves out one no name joins', () => {
    const local = person({ id: 'per_local', emails: ['sean@example.com'] });
    const nameless = person({
      id: 'per_pdl',
      full_name: null,
      first_name: null,
      last_name: null,
      emails: ['sean@example.com'],
      phones: ['+14155550123'],
      matched_on: ['email'],
      sources: ['pdl'],
    });
    const stray = person({ id: 'per_pdl2', full_name: null, emails: ['nobody@example.com'], matched_on: ['email'] });
    const merged = mergeItems('person', [
      { precedence: 0, items: [nameless, stray] },
      { precedence: 10, items: [local] },
    ]);
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({
      id: 'per_local',
      full_name: 'Ada Lovelace',
      phones: ['+14155550123'],
      sources: ['local', 'pdl'],
    });
  });

  it('keeps namesakes without a shared identifier apart, best first', () => {
    const merged = mergeItems('person', [
      { precedence: 10, items: [person({ id: 'p1', match_score: 0.6 }), person({ id: 'p2', match_score: 0.8 })] },
    ]);
    expect(merged.map((m) => m.id)).toEqual(['p2', 'p1']);
  });

  it("puts a username presence item's accounts on the person holding that handle, else keeps it alone", () => {
    const holder = person({ id: 'per_local', usernames: ['AdaL'] });
    const presence = person({
      id: 'per_usr',
      full_name: null,
      first_name: null,
      last_name: null,
      usernames: ['adal'],
      accounts: [{ service: 'GitHub', username: 'adal', url: 'https://github.com/adal' }],
      matched_on: ['username'],
      sources: ['site:GitHub'],
    });
    const merged = mergeItems('person', [
      { precedence: 10, items: [holder] },
      { precedence: 0, items: [presence] },
    ]);
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({
      id: 'per_local',
      accounts: [{ service: 'GitHub', username: 'adal', url: 'https://github.com/adal' }],
      matched_on: ['name', 'username'],
      sources: ['local', 'site:GitHub'],
    });
    expect(mergeItems('person', [{ precedence: 0, items: [presence] }])).toEqual([presence]);
  });
});

describe('merging companies', () => {
  it('makes one item of a registration number in the same jurisdiction, written differently', () => {
    const local = company({ id: 'com_local', registration_number: '01234567', jurisdiction: 'GB', status: null });
    const house = company({
      id: 'com_ch',
      name: 'ACME WIDGETS LIMITED',
      registration_number: '1234567',
      jurisdiction: 'uk',
      status: 'active',
      match_score: 0.95,
      sources: ['companies-house'],
    });
    const merged = mergeItems('company', [
      { precedence: 10, items: [local] },
      { precedence: 20, items: [house] },
    ]);
    expect(merged).toEqual([
      expect.objectContaining({
        id: 'com_ch',
        name: 'ACME WIDGETS LIMITED',
        status: 'active',
        sources: ['companies-house', 'local'],
      }),
    ]);
  });

  it('reads a jurisdiction written out as the code the registries write (England and Wales, Delaware), never as its country alone', () => {
    const merged = mergeItems('company', [
      {
        precedence: 10,
        items: [
          company({ id: 'l-ew', registration_number: '01234567', jurisdiction: 'England and Wales' }),
          company({ id: 'l-sc', registration_number: 'SC123456', jurisdiction: 'Scotland' }),
          company({ id: 'l-de', registration_number: '4785398', jurisdiction: 'Delaware' }),
          company({ id: 'l-ny', registration_number: '4785398', jurisdiction: 'State of New York' }),
        ],
      },
      {
        precedence: 20,
        items: [
          company({ id: 'ch-1', registration_number: '01234567', jurisdiction: 'GB', sources: ['companies-house'] }),
          company({ id: 'ch-2', registration_number: 'SC123456', jurisdiction: 'GB', sources: ['companies-house'] }),
        ],
      },
      {
        precedence: 12,
        items: [
          company({ id: 'oc-de', registration_number: '4785398', jurisdiction: 'US-DE', sources: ['opencorporates'] }),
        ],
      },
    ]);
    expect(merged.map((m) => [m.id, m.sources]).sort()).toEqual([
      ['ch-1', ['companies-house', 'local']],
      ['ch-2', ['companies-house', 'local']],
      ['l-ny', ['local']],
      ['oc-de', ['opencorporates', 'local']],
    ]);
  });

  it('reads a UK number typed without the zeros after its prefix as the register writes it, in GB only', () => {
    const merged = mergeItems('company', [
      {
        precedence: 10,
        items: [
          company({ id: 'l-sc', registration_number: 'SC12345', jurisdiction: 'GB' }),
          company({ id: 'l-ni', registration_number: 'ni 1234', country: 'GB' }),
          company({ id: 'l-us', registration_number: 'SC12345', jurisdiction: 'US-DE' }),
        ],
      },
      {
        precedence: 20,
        items: [
          company({ id: 'ch-sc', registration_number: 'SC012345', jurisdiction: 'GB', sources: ['companies-house'] }),
          company({ id: 'ch-ni', registration_number: 'NI001234', jurisdiction: 'GB', sources: ['companies-house'] }),
        ],
      },
      {
        precedence: 12,
        items: [
          company({ id: 'oc-us', registration_number: 'SC012345', jurisdiction: 'US-DE', sources: ['opencorporates'] }),
        ],
      },
    ]);
    expect(merged.map((m) => [m.id, m.sources]).sort()).toEqual([
      ['ch-ni', ['companies-house', 'local']],
      ['ch-sc', ['companies-house', 'local']],
      ['l-us', ['local']],
      ['oc-us', ['opencorporates']],
    ]);
  });

  it('joins through an LEI identity or a domain, and not through the same number in another jurisdiction', () => {
    const merged = mergeItems('company', [
      {
        precedence: 10,
        items: [
          company({ id: 'l1', registration_number: '123', jurisdiction: 'US-DE' }),
          company({ id: 'l2', domain: 'acme.com' }),
        ],
        identities: [['lei:5493001KJTIIGC8Y1R12'], []],
      },
      {
        precedence: 15,
        items: [
          company({ id: 'g1', registration_number: '123', jurisdiction: 'GB', sources: ['gleif'] }),
          company({ id: 'g2', domain: 'https://www.acme.com/about', sources: ['gleif'] }),
        ],
        identities: [[], ['lei:5493001KJTIIGC8Y1R12']],
      },
    ]);
    expect(merged).toHaveLength(2);
    expect(merged.map((m) => [m.id, m.sources])).toEqual(
      expect.arrayContaining([
        ['g1', ['gleif']],
        ['g2', ['gleif', 'local']],
      ]),
    );
  });

  describe('field_sources (ADR 0068)', () => {
    const house = company({
      id: '/company/01234567',
      name: 'ACME WIDGETS LIMITED',
      registration_number: '01234567',
      jurisdiction: 'GB',
      status: null,
      sources: ['companies-house'],
    });
    const gleif = company({
      id: '/lei-records/5493001KJTIIGC8Y1R12',
      name: 'ACME WIDGETS LIMITED',
      registration_number: '01234567',
      jurisdiction: 'GB',
      status: 'active',
      sources: ['gleif'],
    });
    const local = company({
      id: 'companies-house:01234567',
      name: 'Acme Widgets Ltd',
      registration_number: '1234567',
      jurisdiction: 'GB',
      status: 'dissolved',
      domain: 'acme.example',
      sources: ['local'],
    });
    const at = (provider: string, record_id: string) => ({ provider, record_id });

    it('lists every record that gave the value shown, the one it was taken from first; none that gave another', () => {
      // Given lowest precedence first: the merge ranks them.
      const [merged] = mergeItems('company', [
        { precedence: 10, items: [local] },
        { precedence: 15, items: [gleif] },
        { precedence: 20, items: [house] },
      ]);
      expect(merged).toMatchObject({ name: 'ACME WIDGETS LIMITED', status: 'active', domain: 'acme.example' });
      expect(merged!.field_sources).toEqual({
        name: [at('companies-house', '/company/01234567'), at('gleif', '/lei-records/5493001KJTIIGC8Y1R12')],
        registration_number: [
          at('companies-house', '/company/01234567'),
          at('gleif', '/lei-records/5493001KJTIIGC8Y1R12'),
        ],
        jurisdiction: [
          at('companies-house', '/company/01234567'),
          at('gleif', '/lei-records/5493001KJTIIGC8Y1R12'),
          at('local', 'companies-house:01234567'),
        ],
        // Companies House does not know it: GLEIF's value is shown, and the local record's other value is not credited.
        status: [at('gleif', '/lei-records/5493001KJTIIGC8Y1R12')],
        domain: [at('local', 'companies-house:01234567')],
      });
    });

    it('credits only the record shown where two disagree, and names no field without a value', () => {
      const [merged] = mergeItems('company', [
        { precedence: 10, items: [local] },
        { precedence: 20, items: [house] },
      ]);
      expect(merged!.name).toBe('ACME WIDGETS LIMITED');
      expect(merged!.field_sources.name).toEqual([at('companies-house', '/company/01234567')]);
      expect(merged!.field_sources.registration_number).toEqual([at('companies-house', '/company/01234567')]);
      // Companies House knows no status: the local record's is shown, credited to it.
      expect(merged!.field_sources.status).toEqual([at('local', 'companies-house:01234567')]);
      // Neither knows the country, the address, the industry…: those fields are absent.
      expect(Object.keys(merged!.field_sources).sort()).toEqual([
        'domain',
        'jurisdiction',
        'name',
        'registration_number',
        'status',
      ]);
    });

    it('keeps each record once, and what an item already credited to several', () => {
      const twice = company({
        ...house,
        id: 'com_twice',
        field_sources: { name: [at('companies-house', '/company/01234567'), at('local', 'demo:1')] },
      });
      const [merged] = mergeItems('company', [
        { precedence: 20, items: [house] },
        { precedence: 10, items: [twice] },
      ]);
      expect(merged!.field_sources.name).toEqual([at('companies-house', '/company/01234567'), at('local', 'demo:1')]);
    });

    it("credits a record's fields with a value only: null and '' are not values", () => {
      expect(sourcedBy({ ...house, name: '', address: null }, at('p', 'r'))).toEqual({
        registration_number: [at('p', 'r')],
        jurisdiction: [at('p', 'r')],
      });
    });
  });
});
