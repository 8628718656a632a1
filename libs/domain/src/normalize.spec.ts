import {
  countryKey,
  foldText,
  jurisdictionKey,
  locationKeys,
  locationKeysOf,
  normalizeCompanyName,
  normalizeDomain,
  normalizeEmailAddress,
  normalizePersonName,
  normalizePhoneNumber,
  normalizeUsername,
  phoneE164,
  phoneRegionOf,
  registrationKey,
  splitPersonName,
} from './normalize';
import { DomainError } from './errors';
import { isInPlace, searchedLocationParts } from './local-records';
import { defaultPhoneRegion } from './phone';

describe('normalisation', () => {
  it.each([
    ['Zoë  Müller-Łukasz', 'zoe muller lukasz'],
    ["Seán O'Brien", 'sean o brien'],
    ['北京 Ærøskøbing', 'beijing aeroskobing'],
    ['  JOSÉ   garcía ', 'jose garcia'],
    ['Smith & Sons', 'smith and sons'],
  ])('folds %j to %j', (input, folded) => {
    expect(foldText(input)).toBe(folded);
  });

  it('folds person names the same at import and at query time', () => {
    expect(normalizePersonName('José García')).toBe(normalizePersonName('jose  GARCIA'));
  });

  it.each([
    ["Conan O'Brien", 'conan obrien'],
    ['Conan O\u2019Brien', 'conan obrien'],
    ['Conan O\u02bcBrien', 'conan obrien'],
    ['Conan OBrien', 'conan obrien'],
    ["D'Angelo Russell", 'dangelo russell'],
    ["N'Golo N\u2019Diaye", 'ngolo ndiaye'],
    // An apostrophe that is not inside a word still parts words; a hyphen always does.
    ["Conan O' Brien", 'conan o brien'],
    ["Zoë O'Neill-Smith", 'zoe oneill smith'],
  ])('folds the person name %j to %j: an apostrophe inside a word is dropped', (input, folded) => {
    expect(normalizePersonName(input)).toBe(folded);
  });

  it.each([
    ['王小明', 'wang xiaoming'],
    ['王 小明', 'wang xiaoming'],
    ['李娜', 'li na'],
    ['欧阳娜娜', 'ouyang nana'],
    ['歐陽娜娜', 'ouyang nana'],
    ['김민준', 'gim minjun'],
    // Not one word of two to four characters: each word as any-ascii writes it.
    ['约翰·史密斯', 'yuehan shimisi'],
  ])('folds the CJK name %j to %j: the family name one word, the given name another', (input, folded) => {
    expect(normalizePersonName(input)).toBe(folded);
  });

  it.each([
    ['Grace Brewster Hopper', { first: 'Grace', last: 'Hopper' }],
    ['Hopper, Grace Brewster', { first: 'Grace', last: 'Hopper' }],
    ['Cher', { first: 'Cher', last: null }],
    ['', { first: null, last: null }],
  ])('splits %j', (input, split) => {
    expect(splitPersonName(input)).toEqual(split);
  });

  it('normalises e-mail addresses, phones, domains and usernames', () => {
    expect(normalizeEmailAddress('  Grace.Hopper@EXAMPLE.com ')).toBe('grace.hopper@example.com');
    expect(normalizeEmailAddress('not an address')).toBeNull();
    expect(normalizePhoneNumber('(415) 555-2671', 'US')).toBe('+14155552671');
    expect(normalizePhoneNumber('+44 20 7946 0018')).toBe('+442079460018');
    expect(normalizePhoneNumber('030 12345678', 'DE')).toBe('+493012345678');
    expect(normalizePhoneNumber('call me')).toBeNull();
    expect(normalizeDomain('https://www.acme.com/about')).toBe('acme.com');
    expect(normalizeDomain('ACME.com')).toBe('acme.com');
    expect(normalizeDomain('www.bücher.example')).toBe('xn--bcher-kva.example');
    expect(normalizeDomain('localhost')).toBeNull();
    expect(normalizeDomain('example.com.')).toBe('example.com');
    expect(normalizeDomain('例え.テスト')).toBe('xn--r8jz45g.xn--zckzah');
    expect(normalizeUsername(' @GHopper ')).toBe('ghopper');
    // The @ goes before the space after it is trimmed: no key starts with a space.
    expect(normalizeUsername('@ GHopper')).toBe('ghopper');
    expect(normalizeUsername('@@\u00a0ghopper')).toBe('ghopper');
    expect(normalizeUsername('@ ')).toBe('');
  });

  it.each(['.com', 'foo..com', 'example.com..', '-acme.com', 'acme-.com', 'foo.-bar.com', `${'a'.repeat(64)}.com`])(
    'has no domain in %j: a name with an empty label, or one that starts or ends with a hyphen or runs past 63',
    (value) => {
      expect(normalizeDomain(value)).toBeNull();
    },
  );

  it('writes a phone in E.164 read in a region, or names the region and why in the issue it is refused with', () => {
    const location = { code: 'US', reason: 'the region of location' };
    expect(phoneE164('(512) 555-0199', location)).toBe('+15125550199');
    expect(phoneE164('020 7946 0018', defaultPhoneRegion('GB'))).toBe('+442079460018');
    expect(phoneE164('+44 20 7946 0018', location)).toBe('+442079460018');
    const issueOf = (phone: string, region = location) => {
      try {
        phoneE164(phone, region);
      } catch (error) {
        expect(error).toBeInstanceOf(DomainError);
        return [(error as DomainError).code, (error as DomainError).details];
      }
      throw new Error(`${phone} was read`);
    };
    // Parseable in the US but not a possible number there, and not a number at all.
    for (const phone of ['020 7946 0018', 'call me'])
      expect(issueOf(phone)).toEqual([
        'validation_error',
        [{ field: 'phone', issue: 'is not a phone number in US (read in the region of location)' }],
      ]);
    expect(issueOf('0301234', defaultPhoneRegion('AQ'))).toEqual([
      'validation_error',
      [{ field: 'phone', issue: "is not a phone number in AQ (read in the operator's default region)" }],
    ]);
    expect(issueOf('+1 202 555 01')).toEqual([
      'validation_error',
      [{ field: 'phone', issue: 'is not a possible phone number' }],
    ]);
    expect(issueOf('+44 1')).toEqual([
      'validation_error',
      [{ field: 'phone', issue: 'is too short to be a phone number' }],
    ]);
  });

  it('has no domain in an IP address, written alone or in a URL', () => {
    expect(normalizeDomain('192.0.2.1')).toBeNull();
    expect(normalizeDomain('http://192.0.2.1/about')).toBeNull();
    expect(normalizeDomain('[2001:db8::1]')).toBeNull();
  });

  it('folds a leading www. off only where a domain is left: www.com is a domain of its own', () => {
    expect(normalizeDomain('www.com')).toBe('www.com');
    expect(normalizeDomain('https://WWW.com/')).toBe('www.com');
    expect(normalizeDomain('www.acme.co.uk')).toBe('acme.co.uk');
  });

  it.each([
    ['Acme Widgets Limited', 'acme widgets'],
    ['ACME WIDGETS LTD.', 'acme widgets'],
    ['Acme Widgets, Inc.', 'acme widgets'],
    ['Acme Widgets Incorporated', 'acme widgets'],
    ['Müller GmbH & Co. KG', 'muller'],
    ['Bramble & Co. LLP', 'bramble'],
    ['Smith and Sons Ltd', 'smith and sons'],
    ['Société Générale S.A.', 'societe generale'],
    ['Acme Holdings Co., Ltd', 'acme holdings'],
    ['The Acme Company', 'acme'],
    ['Acme L.L.C.', 'acme'],
    ['Widgets PLC', 'widgets'],
    ['Polska Firma sp. z o.o.', 'polska firma'],
    ['Limited', 'limited'],
  ])('folds the legal form of %j', (input, folded) => {
    expect(normalizeCompanyName(input)).toBe(folded);
  });

  it.each([
    ["McDonald's Corporation", 'mcdonalds'],
    ['McDonald\u2019s Corp.', 'mcdonalds'],
    ['MCDONALDS CORP', 'mcdonalds'],
    ["Macy's, Inc.", 'macys'],
    ['Macys Inc', 'macys'],
    ["L'Or\u00e9al S.A.", 'loreal'],
    ["Int'l Widgets Ltd", 'intl widgets'],
    // Written apart, or an apostrophe that is not inside a word (a plural possessive, a year), still two.
    ['Macy s Inc', 'macy s'],
    ["Jones' Bakery Ltd", 'jones bakery'],
    ["90's Diner LLC", '90 s diner'],
  ])(
    'folds the company name %j to %j: an apostrophe inside a word is dropped, as in a person name',
    (input, folded) => {
      expect(normalizeCompanyName(input)).toBe(folded);
    },
  );

  it('compares registration numbers without spaces and leading zeros', () => {
    expect(registrationKey('01234567')).toBe(registrationKey('1234567'));
    expect(registrationKey('SC 123 456')).toBe('SC123456');
    expect(registrationKey('HRB-12345')).toBe('HRB12345');
    expect(registrationKey('0')).toBe('0');
  });

  it('reads a UK number typed without the zeros after its prefix as Companies House writes it, in GB only', () => {
    expect(registrationKey('SC12345', 'GB')).toBe('SC012345');
    expect(registrationKey('ni 1234', 'GB')).toBe('NI001234');
    expect(registrationKey('SC012345', 'GB')).toBe('SC012345');
    expect(registrationKey('sc12345', 'GB-SCT')).toBe('SC012345');
    expect(registrationKey('SC12345', 'US-DE')).toBe('SC12345');
    expect(registrationKey('SC12345')).toBe('SC12345');
    expect(registrationKey('HRB12345', 'GB')).toBe('HRB12345');
    expect(registrationKey('0012345', 'GB')).toBe('12345');
  });

  it('writes a country and a jurisdiction the ISO way, UK as GB', () => {
    expect([' uk ', 'gb', 'US', ''].map(countryKey)).toEqual(['GB', 'GB', 'US', '']);
    expect(['uk', 'UK-SCT', 'uk_eng', 'us_de', 'GB', 'Delaware', ''].map(jurisdictionKey)).toEqual([
      'GB',
      'GB-SCT',
      'GB-ENG',
      'US-DE',
      'GB',
      'DELAWARE',
      '',
    ]);
  });

  it('keys a location by its country code (UK as GB), and a searched country by its code or name', () => {
    expect(locationKeys({ city: 'London', region: 'England', country: 'UK' })).toEqual(['london', 'england', 'gb']);
    expect(phoneRegionOf([{ country: null }, { country: 'uk' }])).toBe('GB');
    expect(searchedLocationParts('London, United Kingdom')).toEqual([
      { key: 'london', country: null, state: null },
      { key: 'united kingdom', country: 'GB', state: null },
    ]);
    expect(searchedLocationParts(' uk ,GB, Georgia, Austin, TX').map((p) => p.country)).toEqual([
      'GB',
      'GB',
      'GE',
      null,
      null,
    ]);
    const california = {
      location_keys: ['los angeles', 'ca', 'us'],
      locations: [{ city: null, region: 'CA', country: 'US' }],
    };
    const inPlace = (location: string) => searchedLocationParts(location).map((p) => isInPlace(p, california));
    expect(inPlace('Los Angeles, CA, United States, Canada')).toEqual([true, true, true, false]);
  });

  it("keys a place with an apostrophe inside a word as a name is keyed: St. John's is St Johns, Val-d'Or Val d’Or", () => {
    // Each spelling searched on its own (the parts of one search that key alike are one part).
    const inPlace = (location: string, place: { city: string; region: string | null; country: string | null }) => {
      const row = { locations: [place], location_keys: locationKeysOf([place]) };
      return location.split(',').map((part) => searchedLocationParts(part).every((p) => isInPlace(p, row)));
    };
    const stJohns = { city: "St. John's", region: 'Newfoundland and Labrador', country: 'CA' };
    expect(locationKeysOf([stJohns])).toEqual(['st johns', 'newfoundland and labrador', 'ca']);
    expect(inPlace("St Johns, St. John's, St John\u2019s, St John, Johns", stJohns)).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
    const valDor = { city: "Val-d'Or", region: 'Qu\u00e9bec', country: 'CA' };
    expect(inPlace('Val d\u2019Or, Val-d\u2019Or, Val dOr, Quebec, Val', valDor)).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
    // A country's name with an apostrophe is still read as that country's name.
    expect(searchedLocationParts("C\u00f4te d'Ivoire, Cote d\u2019Ivoire")).toEqual([
      { key: 'cote divoire', country: 'CI', state: null },
    ]);
    // One location's keys, and two locations' keys without repeats.
    const london = { city: 'London', region: 'Ontario', country: 'CA' };
    expect(locationKeysOf([london, stJohns])).toEqual([
      'london',
      'ontario',
      'ca',
      'st johns',
      'newfoundland and labrador',
    ]);
  });

  it('matches the common names of a country with countries, and US state names with US regions only', () => {
    const inPlace = (location: string, place: { city?: string; region: string | null; country: string | null }) => {
      const row = { locations: [{ city: null, ...place }], location_keys: locationKeys(place) };
      return searchedLocationParts(location).map((p) => isInPlace(p, row));
    };
    const virginia = { region: 'VA', country: 'US' };
    expect(inPlace('Virginia, USA, U.S., United States of America', virginia)).toEqual([true, true, true, true]);
    expect(inPlace('U.S.A.', virginia)).toEqual([true]);
    const california = { region: 'California', country: 'US' };
    expect(inPlace('CA, california, Canada, Cal', california)).toEqual([true, true, false, false]);
    // A state is a region of the US only: not a region "VA" elsewhere, nor one of unknown country.
    expect(inPlace('Virginia', { region: 'VA', country: 'IT' })).toEqual([false]);
    expect(inPlace('Virginia', { region: 'VA', country: null })).toEqual([false]);
    expect(inPlace('Georgia', { region: 'GA', country: 'US' })).toEqual([true]);
    const edinburgh = { city: 'Edinburgh', region: 'Scotland', country: 'GB' };
    expect(inPlace('Great Britain, Scotland, England, Wales, Northern Ireland', edinburgh)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    // A country name is not compared with regions: Canada is not California, England not a US region.
    expect(inPlace('England, Canada, Great Britain', { region: 'CA', country: 'US' })).toEqual([false, false, false]);
  });
});
