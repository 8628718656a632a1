import {
  mayBeInCountry,
  type CompanyRow,
  type CompanySearch,
  type IdentifierHolder,
  type LocalIndex,
  type PersonRow,
  type PersonSearch,
} from './local-records';

/**
 * Whether a company searched for in a country (an ISO code, as countryKey writes it) may be answered: its
 * country is that one, or its jurisdiction is the country or a part of it (`US-DE` is in `US`). A company
 * of no known country and jurisdiction is not — as the SQL index filters (COMPANY_IN_COUNTRY).
 */
export function isCompanyInCountry(country: string, row: Pick<CompanyRow, 'country' | 'jurisdiction'>): boolean {
  const jurisdiction = row.jurisdiction?.toUpperCase() ?? null;
  return row.country === country || jurisdiction === country || (jurisdiction?.startsWith(`${country}-`) ?? false);
}

/** Whether a birth year is within a search's bounds; a record without one is kept (PersonSearch). */
function bornWithin(search: Pick<PersonSearch, 'birth_year_min' | 'birth_year_max'>, birthYear: number | null) {
  if (birthYear === null) return true;
  return (
    (search.birth_year_min === null || birthYear >= search.birth_year_min) &&
    (search.birth_year_max === null || birthYear <= search.birth_year_max)
  );
}

/**
 * A LocalIndex over rows held in memory (made by personRowOf and companyRowOf, as the importer makes the
 * stored ones), for a set of a few records: every row that passes the filters the SQL index applies to every
 * candidate — the birth-year bounds and the country (mayBeInCountry; isCompanyInCountry) — is a candidate,
 * in the order given, and the caller's scoring drops the ones that match nothing. No limit: with a few rows
 * it is never reached. Each answer is a copy, as each query's rows are: what a caller does to it stays there.
 * The holders of an e-mail or phone key are the rows holding it, at most `limit` each, as in SQL.
 */
export function memoryLocalIndex(people: readonly PersonRow[], companies: readonly CompanyRow[]): LocalIndex {
  return {
    findPeople: (search: PersonSearch) =>
      Promise.resolve(
        structuredClone(
          people.filter(
            (row) =>
              bornWithin(search, row.birth_year) &&
              (search.country === null || mayBeInCountry(search.country, row.locations)),
          ),
        ),
      ),
    findCompanies: (search: CompanySearch) =>
      Promise.resolve(
        structuredClone(companies.filter((row) => search.country === null || isCompanyInCountry(search.country, row))),
      ),
    holdersOf: (keys, limit) => {
      const holders = (field: 'email' | 'phone', wanted: string[]): IdentifierHolder[] =>
        wanted.flatMap((key) =>
          people
            .filter((row) => (field === 'email' ? row.email_keys : row.phone_keys).includes(key))
            .slice(0, limit)
            .map(({ id, full_name, first_name, last_name, aliases, birth_year }) => ({
              field,
              key,
              id,
              full_name,
              first_name,
              last_name,
              aliases: [...aliases],
              birth_year,
            })),
        );
      return Promise.resolve([...holders('email', keys.email_keys), ...holders('phone', keys.phone_keys)]);
    },
  };
}
