import { countryCodeOfName } from './countries';

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
  ])('reads %p as %p', (name, code) => {
    expect(countryCodeOfName(name)).toBe(code);
  });

  it.each(['', 'Atlantis', 'XX', 'europe'])('knows no country %p', (name) => {
    expect(countryCodeOfName(name)).toBeNull();
  });
});
