import { en, en_CA } from '@faker-js/faker';
import {
  CANADIAN_PROVINCES,
  US_STATES,
  countryCodeOfName,
  jurisdictionOf,
  recordCountryOf,
  registerOf,
  usStateCodeOf,
} from './countries';

describe('countryCodeOfName', () => {
  it.each([
    ['United States', 'US'],
    ['united kingdom', 'GB'],
    ['GERMANY', 'DE'],
    ["Côte d'Ivoire", 'CI'],
    ['cote d ivoire', 'CI'],
    ['Bosnia & Herzegovina', 'BA'],
    ['south korea', 'KR'],
    ['us', 'US'],
    [' de ', 'DE'],
    ['UK', 'GB'],
    ['USA', 'US'],
    ['U.S.A.', 'US'],
    ['U.S.', 'US'],
    ['United States of America', 'US'],
    ['Great Britain', 'GB'],
    ['England', 'GB'],
    ['Scotland', 'GB'],
    ['Wales', 'GB'],
    ['Northern Ireland', 'GB'],
  ])('reads %p as %p', (name, code) => {
    expect(countryCodeOfName(name)).toBe(code);
  });

  it.each(['', 'Atlantis', 'XX', 'europe', 'Virginia', 'California', 'America'])('knows no country %p', (name) => {
    expect(countryCodeOfName(name)).toBeNull();
  });
});

describe('recordCountryOf', () => {
  it.each([
    ['USA', 'US'],
    ['United States', 'US'],
    ['U.S.', 'US'],
    ['united kingdom', 'GB'],
    [' uk ', 'GB'],
    ['gb', 'GB'],
    ['Germany', 'DE'],
    // Two letters ISO does not assign, kept as a code as before (some data sets write Kosovo XK).
    ['xk', 'XK'],
  ])('stores %p as %p', (written, code) => {
    expect(recordCountryOf(written)).toBe(code);
  });

  it.each(['Deutschland', 'Atlantis', 'Texas', 'USAA', ''])('reads no country in %p', (written) => {
    expect(recordCountryOf(written)).toBeNull();
  });
});

describe('usStateCodeOf', () => {
  it('reads a state or DC by its USPS code or its name, in any case', () => {
    expect(['Virginia', 'va', 'VA', 'new  york', 'District of Columbia', 'D.C.'].map(usStateCodeOf)).toEqual([
      'VA',
      'VA',
      'VA',
      'NY',
      'DC',
      'DC',
    ]);
    expect(['Canada', 'Cal', 'England', ''].map(usStateCodeOf)).toEqual([null, null, null, null]);
  });

  it("holds the fifty states as faker's en locale pairs them with their codes, and DC", () => {
    const states = en.location!.state as string[];
    const codes = en.location!.state_abbr as string[];
    expect(states).toHaveLength(50);
    expect(new Map(states.map((name, i) => [codes[i]!, name]))).toEqual(
      new Map([...US_STATES].filter(([code]) => code !== 'DC')),
    );
    expect(US_STATES.get('DC')).toBe('District of Columbia');
  });
});

describe('jurisdictionOf', () => {
  it.each([
    // written as a code, as before
    ['us_de', 'US-DE'],
    ['uk', 'GB'],
    ['UK-SCT', 'GB-SCT'],
    // the UK's nations: Companies House registers them all, its numbers unique across the UK
    ['England and Wales', 'GB'],
    ['England & Wales', 'GB'],
    ['Scotland', 'GB'],
    ['Northern Ireland', 'GB'],
    ['United Kingdom', 'GB'],
    // US states and Canadian provinces as ISO 3166-2 codes, as OpenCorporates' us_de and ca_on read
    ['Delaware', 'US-DE'],
    ['State of New York', 'US-NY'],
    ['New York State', 'US-NY'],
    ['Commonwealth of Massachusetts', 'US-MA'],
    ['District of Columbia', 'US-DC'],
    ['Delaware, USA', 'US-DE'],
    ['Georgia (United States)', 'US-GA'],
    ['State of Georgia', 'US-GA'],
    ['Ontario', 'CA-ON'],
    ['Québec', 'CA-QC'],
    ['Province of British Columbia', 'CA-BC'],
    // countries by their English names
    ['Germany', 'DE'],
    ['United States', 'US'],
    ['U.S.A.', 'US'],
  ])('reads %p as %p', (written, code) => {
    expect(jurisdictionOf(written)).toBe(code);
  });

  it.each([
    ['', 'nothing'],
    ['Atlantis', 'no place it knows'],
    ['Georgia', 'the country or the US state'],
    ['Delaware, Canada', 'no province of Canada'],
    ['Ontario, USA', 'no state of the US'],
  ])('reads no jurisdiction in %p: %s', (written) => {
    expect(jurisdictionOf(written)).toBeNull();
  });

  it("holds Canada's provinces and territories as faker's en_CA locale names them, with their ISO codes", () => {
    const names = en_CA.location!.state as string[];
    const codes = en_CA.location!.state_abbr as string[];
    expect([...CANADIAN_PROVINCES.values()].sort()).toEqual([...names].sort());
    expect([...CANADIAN_PROVINCES.keys()].sort()).toEqual([...codes].sort());
  });
});

describe('registerOf', () => {
  it('is the register a number is unique in: the UK as one, a US state on its own, a name it cannot read folded', () => {
    expect(['GB', 'GB-SCT', 'uk_eng', 'Scotland', 'England and Wales'].map(registerOf)).toEqual(Array(5).fill('GB'));
    expect(['Delaware', 'us_de', 'State of New York', 'US'].map(registerOf)).toEqual(['US-DE', 'US-DE', 'US-NY', 'US']);
    expect(['Atlantis Islands', 'ATLANTIS  islands', ''].map(registerOf)).toEqual([
      'atlantis islands',
      'atlantis islands',
      '',
    ]);
  });
});
