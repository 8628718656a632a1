import { companyRowOf, personRowOf, type CompanySearch, type PersonSearch } from './local-records';
import { isCompanyInCountry, memoryLocalIndex } from './memory-local-index';

const PEOPLE = [
  personRowOf({ source: 's', external_id: 'us-1980', full_name: 'A B', locations: [loc('US')], birth_year: 1980 }),
  personRowOf({ source: 's', external_id: 'gb-1990', full_name: 'A B', locations: [loc('uk')], birth_year: 1990 }),
  personRowOf({ source: 's', external_id: 'nowhere', full_name: 'A B', locations: [loc(null)], birth_year: null }),
  personRowOf({ source: 's', external_id: 'both', full_name: 'A B', locations: [loc('GB'), loc('US')] }),
];
const COMPANIES = [
  companyRowOf({ source: 's', external_id: 'gb', name: 'C', country: 'GB', jurisdiction: 'GB' }),
  companyRowOf({ source: 's', external_id: 'de-us', name: 'C', jurisdiction: 'us_de' }),
  companyRowOf({ source: 's', external_id: 'usa', name: 'C', country: 'us' }),
  companyRowOf({ source: 's', external_id: 'unknown', name: 'C' }),
];

function loc(country: string | null) {
  return { city: null, region: null, country };
}

const anyone: PersonSearch = {
  name_key: 'a b',
  email_key: null,
  phone_key: null,
  username_key: null,
  birth_year_min: null,
  birth_year_max: null,
  country: null,
};
const anyCompany: CompanySearch = { name_key: 'c', domain_key: null, registration_keys: null, country: null };

describe('memoryLocalIndex', () => {
  const index = memoryLocalIndex(PEOPLE, COMPANIES);
  const people = async (search: Partial<PersonSearch>) =>
    (await index.findPeople({ ...anyone, ...search }, 200)).map((r) => r.external_id);
  const companies = async (search: Partial<CompanySearch>) =>
    (await index.findCompanies({ ...anyCompany, ...search }, 200)).map((r) => r.external_id);

  it('gives every person and company as a candidate when nothing filters', async () => {
    expect(await people({})).toEqual(['us-1980', 'gb-1990', 'nowhere', 'both']);
    expect(await companies({})).toEqual(['gb', 'de-us', 'usa', 'unknown']);
  });

  it('keeps people born within the bounds and those of no known birth year', async () => {
    expect(await people({ birth_year_min: 1985 })).toEqual(['gb-1990', 'nowhere', 'both']);
    expect(await people({ birth_year_max: 1985 })).toEqual(['us-1980', 'nowhere', 'both']);
    expect(await people({ birth_year_min: 1981, birth_year_max: 1989 })).toEqual(['nowhere', 'both']);
    // Whatever else was searched: the SQL bounds every candidate, those found by e-mail or phone too.
    expect(await people({ name_key: null, email_key: 'x@example.com', birth_year_min: 1990 })).toEqual([
      'gb-1990',
      'nowhere',
      'both',
    ]);
  });

  it('keeps people known in the country or of no known country', async () => {
    expect(await people({ country: 'GB' })).toEqual(['gb-1990', 'nowhere', 'both']);
    expect(await people({ country: 'US' })).toEqual(['us-1980', 'nowhere', 'both']);
    expect(await people({ country: 'FR' })).toEqual(['nowhere']);
  });

  it('keeps companies of the country or of a jurisdiction in it, not those of no known country', async () => {
    expect(await companies({ country: 'GB' })).toEqual(['gb']);
    expect(await companies({ country: 'US' })).toEqual(['de-us', 'usa']);
    expect(await companies({ country: 'FR' })).toEqual([]);
    expect(isCompanyInCountry('US', { country: null, jurisdiction: 'US-DE' })).toBe(true);
    expect(isCompanyInCountry('US', { country: null, jurisdiction: 'USX' })).toBe(false);
  });

  it('gives the holders of an e-mail or phone key, at most `limit` each, as the SQL index does', async () => {
    const line = ['+14155550100'];
    const held = memoryLocalIndex(
      [
        personRowOf({ source: 's', external_id: 'h1', full_name: 'Ann Lee', phones: line, birth_year: 1970 }),
        personRowOf({ source: 's', external_id: 'h2', full_name: 'Zed Lee', phones: line }),
        personRowOf({ source: 's', external_id: 'h3', full_name: 'Ann Lee', emails: ['ann@x.example'] }),
      ],
      [],
    );
    const holders = await held.holdersOf({ email_keys: ['ann@x.example'], phone_keys: [line[0]!] }, 1);
    expect(holders.map((h) => [h.field, h.key, h.full_name, h.birth_year])).toEqual([
      ['email', 'ann@x.example', 'Ann Lee', null],
      ['phone', '+14155550100', 'Ann Lee', 1970],
    ]);
  });

  it('answers copies: what a caller changes in one answer is not in the next', async () => {
    const [first] = await index.findPeople(anyone, 200);
    first!.emails.push('changed@example.com');
    const [again] = await index.findPeople(anyone, 200);
    expect(again!.emails).toEqual([]);
  });
});
