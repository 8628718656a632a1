import { DomainError } from '@dossier/domain';
import { personLookup, phoneLookup, searchLookup } from './lookup-requests';

/** The `details` of the validation error `parse` throws. */
function detailsOf(parse: () => unknown): unknown {
  try {
    parse();
  } catch (err) {
    if (err instanceof DomainError) return err.details;
    throw err;
  }
  throw new Error('expected a validation error');
}

describe('a national phone number without its country, where the request takes one', () => {
  it('is told to give a country where the request takes one (verify/phone, search type phone)', () => {
    expect(detailsOf(() => phoneLookup({ phone: '020 7946 0018' }))).toEqual([
      { field: 'phone', issue: 'needs a leading + and country code, or a country' },
    ]);
    expect(detailsOf(() => searchLookup({ type: 'phone', query: '020 7946 0018' }, 'US'))).toEqual([
      { field: 'query', issue: 'needs a leading + and country code, or a country' },
    ]);
  });
});

describe("a person search's phone in any format", () => {
  const phoneOf = (body: Record<string, unknown>, defaultRegion = 'US') =>
    personLookup(body, defaultRegion).input.phone;

  it('is read in the region of country, else of the country location names, else the default region', () => {
    expect(phoneOf({ phone: '020 7946 0018', country: 'gb' })).toBe('+442079460018');
    // `country` is kept as well: it still narrows the search to people known there (or of no known country).
    expect(personLookup({ phone: '020 7946 0018', country: 'GB' }, 'US').input).toEqual({
      phone: '+442079460018',
      country: 'GB',
    });
    expect(phoneOf({ phone: '(512) 555-0199', location: 'Austin, TX' }, 'GB')).toBe('+15125550199');
    expect(phoneOf({ phone: '020 7946 0018', location: 'London, United Kingdom' })).toBe('+442079460018');
    expect(phoneOf({ phone: '(512) 555-0199' })).toBe('+15125550199');
    expect(phoneOf({ phone: '020 7946 0018' }, 'GB')).toBe('+442079460018');
    // `country` comes before `location`.
    expect(phoneOf({ phone: '020 7946 0018', country: 'GB', location: 'Austin, TX' })).toBe('+442079460018');
  });

  it('does not guess from a location that names several countries, or may name either of two', () => {
    // "CA" is Canada or California, and France is not Texas: the default region reads the number.
    expect(phoneOf({ phone: '020 7946 0018', location: 'Los Angeles, CA' }, 'GB')).toBe('+442079460018');
    expect(phoneOf({ phone: '020 7946 0018', location: 'Paris, Texas, France' }, 'GB')).toBe('+442079460018');
    // With the country written as well, "CA" agrees with the US.
    expect(phoneOf({ phone: '(213) 555-0134', location: 'Los Angeles, CA, USA' }, 'GB')).toBe('+12135550134');
  });

  it('is an international number as written, whatever the regions say', () => {
    expect(phoneOf({ phone: '+44 20 7946 0018', country: 'US', location: 'Austin, TX' })).toBe('+442079460018');
    expect(phoneOf({ phone: '+1 (202) 555-0147' }, 'GB')).toBe('+12025550147');
  });

  it('is refused naming phone and the region it was read in, and why that one', () => {
    expect(detailsOf(() => personLookup({ phone: '020 7946 0018', location: 'Austin, TX' }, 'GB'))).toEqual([
      { field: 'phone', issue: 'is not a phone number in US (read in the region of location)' },
    ]);
    expect(detailsOf(() => personLookup({ phone: '123', country: 'DE' }, 'US'))).toEqual([
      { field: 'phone', issue: 'is not a phone number in DE (read in the region of country)' },
    ]);
    expect(detailsOf(() => personLookup({ phone: '020 7946 0018' }, 'US'))).toEqual([
      { field: 'phone', issue: "is not a phone number in US (read in the operator's default region)" },
    ]);
    expect(detailsOf(() => personLookup({ phone: 'call me' }, 'US'))).toEqual([
      { field: 'phone', issue: "is not a phone number in US (read in the operator's default region)" },
    ]);
    // An international number's issue is its own: no region played a part.
    expect(detailsOf(() => personLookup({ phone: '+1 202 555 01' }, 'GB'))).toEqual([
      { field: 'phone', issue: 'is not a possible phone number' },
    ]);
    expect(detailsOf(() => personLookup({ phone: '+999 1234 5678' }, 'GB'))).toEqual([
      { field: 'phone', issue: 'has an unknown country calling code' },
    ]);
  });
});

describe("the generic search's query, routed by its shape (ADR 0051)", () => {
  const routed = (body: Record<string, unknown>, defaultRegion = 'US') => {
    const { kind, input } = searchLookup(body, defaultRegion);
    return { kind, input };
  };

  it('searches a person by e-mail, phone or @handle, and anything else by name', () => {
    expect(routed({ type: 'person', query: 'gonzalo_halvorson@example.com' })).toEqual({
      kind: 'person',
      input: { email: 'gonzalo_halvorson@example.com' },
    });
    expect(routed({ type: 'person', query: '@gonzalo_halvorson' }).input).toEqual({ username: '@gonzalo_halvorson' });
    expect(routed({ type: 'person', query: 'Gonzalo Halvorson' }).input).toEqual({ name: 'Gonzalo Halvorson' });
    // Not one of the shapes: a name, as before.
    for (const name of ['@Gonzalo Halvorson', 'grace@localhost', 'Louis XIV', '2Pac', "O'Brien-Smith", '@', '@..']) {
      expect([name, routed({ type: 'person', query: name }).input]).toEqual([name, { name }]);
    }
  });

  it("reads a person's phone as the person search does: in country, else the default region", () => {
    expect(routed({ type: 'person', query: '+1 (202) 555-0100' }).input).toEqual({ phone: '+12025550100' });
    expect(routed({ type: 'person', query: '202-555-0100' }, 'US').input).toEqual({ phone: '+12025550100' });
    expect(routed({ type: 'person', query: '020 7946 0018' }, 'GB').input).toEqual({ phone: '+442079460018' });
    expect(routed({ type: 'person', query: '020 7946 0018', country: 'gb' }, 'US').input).toEqual({
      phone: '+442079460018',
      country: 'GB',
    });
    expect(routed({ type: 'person', query: '030/1234567', country: 'DE' }).input).toEqual({
      phone: '+49301234567',
      country: 'DE',
    });
  });

  it('keeps country and permissible_purpose on the routed search', () => {
    expect(
      searchLookup({ type: 'person', query: 'a@example.com', country: 'us', permissible_purpose: 'employment' }, 'US'),
    ).toEqual({ kind: 'person', input: { email: 'a@example.com', country: 'US' }, purpose: 'employment' });
    expect(searchLookup({ type: 'company', query: 'acme.com', permissible_purpose: 'kyc' }, 'US')).toEqual({
      kind: 'company',
      input: { domain: 'acme.com' },
      purpose: 'kyc',
    });
  });

  it('searches a company by domain or URL, registration number, and anything else by name', () => {
    const company = (query: string) => routed({ type: 'company', query }).input;
    expect(company('acme.com')).toEqual({ domain: 'acme.com' });
    expect(company('https://www.acme.com/about')).toEqual({ domain: 'https://www.acme.com/about' });
    for (const number of ['05689105', '1234', 'SC012345', 'sc12345', 'HRB 12345', 'CHE-123.456.789', '0403.170.701']) {
      expect([number, company(number)]).toEqual([number, { registration_number: number }]);
    }
    const names = ['Acme Inc.', 'Acme.com Inc', 'info@acme.com', '3M', '7-Eleven', '76', 'F-16', 'Area 51', 'HRB 123'];
    for (const name of names) expect([name, company(name)]).toEqual([name, { company_name: name }]);
  });

  it('leaves email, phone and username searches to their one field', () => {
    expect(routed({ type: 'username', query: 'gonzalo_halvorson' }).input).toEqual({ username: 'gonzalo_halvorson' });
    expect(routed({ type: 'email', query: 'not an address' }).input).toEqual({ email: 'not an address' });
    expect(routed({ type: 'phone', query: '+1 202 555 0100' }).input).toEqual({ phone: '+1 202 555 0100' });
  });

  it('names query in the error of the field it went to', () => {
    expect(detailsOf(() => searchLookup({ type: 'person', query: '12' }, 'US'))).toEqual([
      { field: 'query', issue: "is not a phone number in US (read in the operator's default region)" },
    ]);
    expect(detailsOf(() => searchLookup({ type: 'person', query: '123', country: 'DE' }, 'US'))).toEqual([
      { field: 'query', issue: 'is not a phone number in DE (read in the region of country)' },
    ]);
    expect(detailsOf(() => searchLookup({ type: 'person', query: `+1 202 555 0100${' '.repeat(60)}1` }, 'US'))).toEqual(
      [{ field: 'query', issue: 'must be at most 64 characters' }],
    );
    expect(detailsOf(() => searchLookup({ type: 'person', query: `@${'h'.repeat(130)}` }, 'US'))).toEqual([
      { field: 'query', issue: 'must be at most 128 characters' },
    ]);
    expect(detailsOf(() => searchLookup({ type: 'person', query: '' }, 'US'))).toEqual([
      { field: 'query', issue: 'must be a non-empty string' },
    ]);
  });
});

describe("a username search's choice of sites (ADR 0049)", () => {
  it('carries sites, tags (lower case) and top onto the person search, from either endpoint', () => {
    const selection = { sites: [' GitHub ', 'Steam'], tags: ['Coding'], top: 20 };
    expect(personLookup({ username: 'ghopper', ...selection }, 'US').input).toEqual({
      username: 'ghopper',
      sites: ['GitHub', 'Steam'],
      tags: ['coding'],
      top: 20,
    });
    expect(searchLookup({ type: 'username', query: 'ghopper', ...selection }, 'US').input).toEqual({
      username: 'ghopper',
      sites: ['GitHub', 'Steam'],
      tags: ['coding'],
      top: 20,
    });
    expect(searchLookup({ type: 'person', query: '@ghopper', top: 5 }, 'US').input).toEqual({
      username: '@ghopper',
      top: 5,
    });
  });

  it('is refused without a username to check, naming each field', () => {
    expect(detailsOf(() => personLookup({ name: 'Grace Hopper', sites: ['GitHub'], top: 3 }, 'US'))).toEqual([
      {
        field: 'sites',
        issue: 'applies only to a search with username (it chooses the sites the username is checked on)',
      },
      {
        field: 'top',
        issue: 'applies only to a search with username (it chooses the sites the username is checked on)',
      },
    ]);
    expect(detailsOf(() => searchLookup({ type: 'person', query: 'Grace Hopper', tags: ['coding'] }, 'US'))).toEqual([
      {
        field: 'tags',
        issue: 'applies only to a search with username (it chooses the sites the username is checked on)',
      },
    ]);
    expect(detailsOf(() => searchLookup({ type: 'email', query: 'g@example.com', sites: ['GitHub'] }, 'US'))).toEqual([
      {
        field: 'sites',
        issue: 'applies only to a username search (type username, or person with an @handle as query)',
      },
    ]);
  });

  it('is refused when malformed, naming the field', () => {
    const details = (selection: Record<string, unknown>) =>
      detailsOf(() => personLookup({ username: 'ghopper', ...selection }, 'US'));
    expect(details({ sites: [] })).toEqual([{ field: 'sites', issue: 'must name at least one site' }]);
    expect(details({ sites: 'GitHub' })).toEqual([{ field: 'sites', issue: 'must be an array of site names' }]);
    expect(details({ sites: ['GitHub', ' '] })).toEqual([{ field: 'sites.1', issue: 'must be a non-empty string' }]);
    expect(details({ tags: [] })).toEqual([{ field: 'tags', issue: 'must name at least one tag' }]);
    expect(details({ top: 0 })).toEqual([{ field: 'top', issue: 'must be a whole number from 1 to 10000' }]);
    expect(details({ top: 2.5 })).toEqual([{ field: 'top', issue: 'must be a whole number from 1 to 10000' }]);
  });
});
