import { en } from '@faker-js/faker';
import { US_STATES, countryCodeOfName, usStateCodeOf } from './countries';

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
