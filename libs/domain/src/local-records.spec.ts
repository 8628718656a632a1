import { locationCountryOf, personRowOf, type PersonRecord } from './local-records';

describe('locationCountryOf', () => {
  it.each([
    ['Austin, TX', 'US'],
    ['Austin, Texas', 'US'],
    ['London, United Kingdom', 'GB'],
    ['Leeds, UK', 'GB'],
    ['Boston, MA, USA', 'US'],
    ['Los Angeles, CA, USA', 'US'],
    ['Atlanta, Georgia, United States', 'US'],
    ['Toronto, Ontario, Canada', 'CA'],
  ])('reads %p as %p', (location, country) => {
    expect(locationCountryOf(location)).toBe(country);
  });

  it.each([
    // No part names a country.
    ['Springfield'],
    ['London'],
    // A part that may name either of two countries: CA is Canada or California, Georgia a country or a state.
    ['Los Angeles, CA'],
    ['Georgia'],
    ['Tbilisi, Georgia'],
    // Several different countries.
    ['Paris, France, USA'],
    ['Paris, Texas, France'],
  ])('does not guess from %p', (location) => {
    expect(locationCountryOf(location)).toBeNull();
  });
});

describe('personRowOf', () => {
  const record = (fields: Partial<PersonRecord>): PersonRecord => ({
    source: 'spec',
    external_id: 'p1',
    full_name: 'Ada Lovelace',
    ...fields,
  });

  it('stores a country written as a name or a common code as its ISO code', () => {
    const row = personRowOf(
      record({
        locations: [
          { city: 'Boston', region: 'MA', country: 'USA' },
          { city: 'London', region: null, country: 'United Kingdom' },
          { city: 'Paris', region: null, country: 'fr' },
        ],
      }),
    );
    expect(row.locations.map((l) => l.country)).toEqual(['US', 'GB', 'FR']);
    expect(row.location_keys).toEqual(['boston', 'ma', 'us', 'london', 'gb', 'paris', 'fr']);
  });

  it("reads a national phone in the record's own country, else in the default region", () => {
    const inUsa = personRowOf(
      record({ phones: ['(512) 555-0199'], locations: [{ city: 'Austin', region: 'TX', country: 'USA' }] }),
      { defaultRegion: 'GB' },
    );
    expect([inUsa.phones, inUsa.phone_keys]).toEqual([['(512) 555-0199'], ['+15125550199']]);
    const nowhere = personRowOf(record({ phones: ['020 7946 0018', '+1 202 555 0147'] }), { defaultRegion: 'GB' });
    expect(nowhere.phone_keys).toEqual(['+442079460018', '+12025550147']);
    // Read in the default region, a national phone is stored in E.164: what reads the record's phones by its
    // locations alone (merging, suppression) then reads the same number; an international one stays as written.
    expect(nowhere.phones).toEqual(['+442079460018', '+1 202 555 0147']);
  });

  it('hears of a phone that is not a possible number in the region it was read in', () => {
    const invalid: string[] = [];
    const row = personRowOf(record({ phones: ['020 7946 0018'] }), {
      defaultRegion: 'US',
      onInvalid: (field, value) => invalid.push(`${field}: ${value}`),
    });
    expect([row.phone_keys, invalid]).toEqual([[], ['phones: 020 7946 0018']]);
    // Without a default region, a national phone of a record naming no country has no key.
    const unread: string[] = [];
    personRowOf(record({ phones: ['(512) 555-0199'] }), { onInvalid: (_field, value) => unread.push(value) });
    expect(unread).toEqual(['(512) 555-0199']);
  });
});
