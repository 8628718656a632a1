import {
  normalizeCompanyName,
  normalizeDomain,
  normalizeEmailAddress,
  normalizePersonName,
  normalizePhoneNumber,
  normalizeUsername,
  registrationKey,
  searchedLocationParts,
  untilAborted,
  type CompanyRow,
  type LocalIndex,
  type PersonRow,
} from '@dossier/domain';
import type { CompanyInput, CompanyResultItem, PersonInput, PersonResultItem } from '@dossier/contracts';
import { ProviderError, deadlinePassed, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';
import { nameMatchScore } from './name-match';

const ID = 'local';
/** Items a search answers at most (API.md: best first, at most 25). */
export const MAX_ITEMS = 25;
/** Name candidates fetched from the trigram index before scoring. */
const NAME_CANDIDATES = 200;
/** A name scoring below this is no match (it still may have come back from the index). */
const NAME_FLOOR = 0.6;

/**
 * What each agreeing field is worth; the score combines them as independent evidence
 * (1 − Π(1 − wᵢ·sᵢ)): one exact name alone is 0.75, a name in the right city 0.83, a name with a matching
 * e-mail 0.99. An e-mail, phone or username is a stronger identifier than a name; location and age only
 * add to a match, they never make one. See ADR 0012.
 */
export const WEIGHTS = {
  name: 0.75,
  email: 0.95,
  phone: 0.9,
  username: 0.7,
  registration_number: 0.95,
  domain: 0.9,
  location: 0.3,
  age_range: 0.2,
} as const;
/** A record whose known locations all differ from the searched one keeps this share of its score. */
const ELSEWHERE = 0.85;

type Evidence = [field: keyof typeof WEIGHTS, strength: number][];

function combine(evidence: Evidence): number {
  const miss = evidence.reduce((p, [field, s]) => p * (1 - WEIGHTS[field] * s), 1);
  return 1 - miss;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

/** `"30-40"`, `"65+"`, `"-25"` → the birth years of someone that age this year (either side of a birthday). */
export function birthYearsOf(ageRange: string, thisYear: number): { min: number | null; max: number | null } {
  const m = /^(\d*)(-|\+)(\d*)$/.exec(ageRange.trim());
  if (!m) return { min: null, max: null };
  const [, lo, sign, hi] = m;
  const youngest = sign === '+' || lo ? Number(lo) : null;
  const oldest = sign === '-' && hi ? Number(hi) : null;
  return {
    min: oldest === null ? null : thisYear - oldest - 1,
    max: youngest === null ? null : thisYear - youngest,
  };
}

export async function searchPeople(
  input: PersonInput,
  ctx: ProviderContext,
  thisYear = new Date().getUTCFullYear(),
): Promise<PersonResultItem[]> {
  const index = indexOf(ctx);
  const nameKey = input.name ? normalizePersonName(input.name) : '';
  const years = input.age_range ? birthYearsOf(input.age_range, thisYear) : { min: null, max: null };
  const search = {
    name_key: nameKey || null,
    email_key: input.email ? normalizeEmailAddress(input.email) : null,
    phone_key: input.phone ? normalizePhoneNumber(input.phone, input.country) : null,
    username_key: input.username ? normalizeUsername(input.username) || null : null,
    birth_year_min: years.min,
    birth_year_max: years.max,
  };
  const places = input.location ? searchedLocationParts(input.location) : [];
  const rows = await index.findPeople(search, NAME_CANDIDATES);
  const searchedTokens = nameKey ? nameKey.split(' ') : [];
  const items: PersonResultItem[] = [];
  for (const row of rows) {
    const evidence: Evidence = [];
    if (searchedTokens.length > 0) {
      const s = Math.max(0, ...row.names.map((n) => nameMatchScore(searchedTokens, n.name_key.split(' '))));
      if (s >= NAME_FLOOR) evidence.push(['name', s]);
    }
    if (search.email_key && row.email_keys.includes(search.email_key)) evidence.push(['email', 1]);
    if (search.phone_key && row.phone_keys.includes(search.phone_key)) evidence.push(['phone', 1]);
    if (search.username_key && row.username_keys.includes(search.username_key)) evidence.push(['username', 1]);
    if (evidence.length === 0) continue;
    let factor = 1;
    if (places.length > 0) {
      const here = places.filter((p) => row.location_keys.includes(p)).length;
      if (here > 0) evidence.push(['location', here / places.length]);
      else if (row.location_keys.length > 0) factor = ELSEWHERE;
    }
    if (input.age_range && row.birth_year !== null) evidence.push(['age_range', 1]);
    items.push(personItem(row, round(combine(evidence) * factor), evidence, thisYear));
  }
  return best(items);
}

export async function searchCompanies(input: CompanyInput, ctx: ProviderContext): Promise<CompanyResultItem[]> {
  const index = indexOf(ctx);
  const nameKey = input.company_name ? normalizeCompanyName(input.company_name) : '';
  const search = {
    name_key: nameKey || null,
    domain_key: input.domain ? normalizeDomain(input.domain) : null,
    registration_key: input.registration_number ? registrationKey(input.registration_number) || null : null,
    country: input.country?.toUpperCase() ?? null,
  };
  const rows = await index.findCompanies(search, NAME_CANDIDATES);
  const searchedTokens = nameKey ? nameKey.split(' ') : [];
  const items: CompanyResultItem[] = [];
  for (const row of rows) {
    const evidence: Evidence = [];
    if (searchedTokens.length > 0) {
      const s = nameMatchScore(searchedTokens, row.name_key.split(' '));
      if (s >= NAME_FLOOR) evidence.push(['name', s]);
    }
    if (search.registration_key && row.registration_key === search.registration_key)
      evidence.push(['registration_number', 1]);
    if (search.domain_key && row.domain_key === search.domain_key) evidence.push(['domain', 1]);
    if (evidence.length === 0) continue;
    items.push(companyItem(row, round(combine(evidence)), evidence, search.country !== null));
  }
  return best(items);
}

/** The request's field names, in the order API.md lists them. */
const PERSON_FIELDS: Record<keyof typeof WEIGHTS, string> = {
  name: 'name',
  email: 'email',
  phone: 'phone',
  username: 'username',
  location: 'location',
  age_range: 'age_range',
  registration_number: 'registration_number',
  domain: 'domain',
};

function personItem(row: PersonRow, score: number, evidence: Evidence, thisYear: number): PersonResultItem {
  return {
    id: row.id,
    full_name: row.full_name,
    first_name: row.first_name,
    last_name: row.last_name,
    aliases: row.aliases,
    emails: row.emails,
    phones: row.phones,
    usernames: row.usernames,
    accounts: [],
    locations: row.locations,
    age: row.birth_year === null ? null : thisYear - row.birth_year,
    birth_year: row.birth_year,
    match_score: score,
    matched_on: evidence.map(([field]) => PERSON_FIELDS[field]),
    sources: [ID],
  };
}

function companyItem(row: CompanyRow, score: number, evidence: Evidence, byCountry: boolean): CompanyResultItem {
  const fields = evidence.map(([field]) => (field === 'name' ? 'company_name' : PERSON_FIELDS[field]));
  return {
    id: row.id,
    name: row.name,
    registration_number: row.registration_number,
    jurisdiction: row.jurisdiction,
    country: row.country,
    domain: row.domain,
    status: row.status,
    incorporated_on: row.incorporated_on,
    address: row.address,
    industry: row.industry,
    match_score: score,
    matched_on: byCountry ? [...fields, 'country'] : fields,
    sources: [ID],
  };
}

function best<T extends { match_score: number; id: string }>(items: T[]): T[] {
  return items.sort((a, b) => b.match_score - a.match_score || a.id.localeCompare(b.id)).slice(0, MAX_ITEMS);
}

/** The index, read within the call's deadline. */
function indexOf(ctx: ProviderContext): LocalIndex {
  if (ctx.signal.aborted) throw deadlinePassed(ID, ctx.signal);
  const index = ctx.localIndex;
  if (!index) throw new ProviderError('unrecoverable', 'this worker has no local index');
  return {
    findPeople: (search, limit) =>
      untilAborted(index.findPeople(search, limit), ctx.signal, () => deadlinePassed(ID, ctx.signal)),
    findCompanies: (search, limit) =>
      untilAborted(index.findCompanies(search, limit), ctx.signal, () => deadlinePassed(ID, ctx.signal)),
  };
}

/** The operator's imported records (and the demo set): people and companies from Postgres. */
export const localProvider: Provider<'person' | 'company'> = {
  id: ID,
  kinds: ['person', 'company'],
  configKeys: [],
  defaultTimeoutMs: 5_000,
  transport: 'database',
  precedence: 10,
  isConfigured: () => true,
  async lookup(kind, input, ctx): Promise<ProviderAnswer<'person' | 'company'>> {
    const items =
      kind === 'person'
        ? await searchPeople(input as PersonInput, ctx)
        : await searchCompanies(input as CompanyInput, ctx);
    return { outcome: items.length > 0 ? 'found' : 'not_found', items };
  },
};
