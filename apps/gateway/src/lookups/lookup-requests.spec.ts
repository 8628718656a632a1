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
    expect(detailsOf(() => searchLookup({ type: 'phone', query: '020 7946 0018' }))).toEqual([
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
