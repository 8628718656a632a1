import {
  countryKey,
  isInCountry,
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
import type { CompanyInput, CompanyResultItem, PersonInput, PersonRecordItem } from '@dossier/contracts';
import { ProviderError, deadlinePassed, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';
import { nameMatchScore } from './name-match';
import { nameVariants } from '../identity/nicknames';
import { NAME_FLOOR, companyMatchedOn, placeAndAgeOf, scoreOf, type Evidence } from '../subject-score';
import { companyEvidence, statusOf } from '../company-item';
import { withImportedDepth } from './company-depth';
import { sourcedBy } from '../field-sources';

const ID = 'local';
/**
 * Company items a search answers at most, best first. Person items are all answered (at most the name
 * candidates and the records holding the searched identifiers): the worker counts them and cuts them to the
 * search's `limit` after merging (ADR 0047).
 */
export const MAX_ITEMS = 25;
/** Name candidates fetched from the trigram index before scoring. */
const NAME_CANDIDATES = 200;

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

/**
 * The age of someone born in `birthYear`, as person items show it: this year minus the birth year (a
 * year more than the exact age until the birthday, as a birth year alone cannot tell); null when unknown.
 */
export function ageOf(birthYear: number | null, thisYear: number): number | null {
  return birthYear === null ? null : thisYear - birthYear;
}

export async function searchPeople(
  input: PersonInput,
  ctx: ProviderContext,
  thisYear = new Date().getUTCFullYear(),
): Promise<PersonRecordItem[]> {
  const index = indexOf(ctx);
  const nameKey = input.name ? normalizePersonName(input.name) : '';
  const years = input.age_range ? birthYearsOf(input.age_range, thisYear) : { min: null, max: null };
  const search = {
    name_key: nameKey || null,
    name_variants: variantsOf(nameKey),
    email_key: input.email ? normalizeEmailAddress(input.email) : null,
    phone_key: input.phone ? normalizePhoneNumber(input.phone, input.country) : null,
    username_key: input.username ? normalizeUsername(input.username) || null : null,
    birth_year_min: years.min,
    birth_year_max: years.max,
    country: input.country ? countryKey(input.country) || null : null,
  };
  const places = input.location ? searchedLocationParts(input.location) : [];
  const rows = await index.findPeople(search, NAME_CANDIDATES);
  const searchedTokens = nameKey ? nameKey.split(' ') : [];
  const items: PersonRecordItem[] = [];
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
    const placeAndAge = placeAndAgeOf(places, input.age_range, row);
    evidence.push(...placeAndAge.evidence);
    const inCountry = search.country !== null && isInCountry(search.country, row.locations);
    items.push(personItem(row, scoreOf(evidence, placeAndAge.factor), evidence, inCountry, thisYear));
  }
  return best(items, Infinity);
}

/** Each word of a folded name with the names it may be written as (nicknames: "bob" → "robert", …). */
function variantsOf(nameKey: string): Record<string, string[]> {
  const words = nameKey ? nameKey.split(' ') : [];
  return Object.fromEntries(
    words.map((w) => [w, [...nameVariants(w)].sort()] as const).filter(([, v]) => v.length > 0),
  );
}

/**
 * The keys a searched number may be stored under: as keyed anywhere, and as keyed in the UK's register
 * (`SC12345` is stored as `SC012345` there) — one index probe for both; the search's country, and the
 * scoring of each record's number in its own register (companyEvidence), keep the rest out.
 */
function registrationKeysOf(number: string): string[] | null {
  const keys = [...new Set([registrationKey(number), registrationKey(number, 'GB')])].filter((k) => k !== '');
  return keys.length > 0 ? keys : null;
}

/** Company items, best first, each with its identities (`lei:<LEI>` for a record that has one). */
export async function searchCompanies(
  input: CompanyInput,
  ctx: ProviderContext,
): Promise<{ items: CompanyResultItem[]; identities: string[][] }> {
  const index = indexOf(ctx);
  const nameKey = input.company_name ? normalizeCompanyName(input.company_name) : '';
  const search = {
    name_key: nameKey || null,
    domain_key: input.domain ? normalizeDomain(input.domain) : null,
    registration_keys: input.registration_number ? registrationKeysOf(input.registration_number) : null,
    country: input.country ? countryKey(input.country) || null : null,
  };
  const rows = await index.findCompanies(search, NAME_CANDIDATES);
  const items: CompanyResultItem[] = [];
  const leis = new Map<string, string>();
  for (const row of rows) {
    const evidence = companyEvidence(input, { ...row, names: [row.name] });
    if (evidence.length === 0) continue;
    items.push(companyItem(row, scoreOf(evidence), evidence, search.country !== null));
    if (row.lei) leis.set(row.id, row.lei);
  }
  const found = await withImportedDepth(index, best(items), leis);
  return { items: found, identities: found.map((i) => (leis.has(i.id) ? [`lei:${leis.get(i.id)}`] : [])) };
}

/** `inCountry`: the search named a country and the record is known there (`matched_on` says `country`). */
function personItem(
  row: PersonRow,
  score: number,
  evidence: Evidence,
  inCountry: boolean,
  thisYear: number,
): PersonRecordItem {
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
    age: ageOf(row.birth_year, thisYear),
    birth_year: row.birth_year,
    match_score: score,
    matched_on: [...evidence.map(([field]) => field), ...(inCountry ? ['country'] : [])],
    sources: [ID],
  };
}

/**
 * A company row as an item; each field it gives credited to the row's record in the index, `<source>:<external id>`
 * (its key: an external id is unique within its import source only — `companies-house:00102498`, ADR 0068).
 */
function companyItem(row: CompanyRow, score: number, evidence: Evidence, byCountry: boolean): CompanyResultItem {
  const item = {
    id: row.id,
    name: row.name,
    registration_number: row.registration_number,
    jurisdiction: row.jurisdiction,
    country: row.country,
    domain: row.domain,
    // As the import wrote it (`Active`, `ACTIVE`, `Voluntary Arrangement`): said as the registries say theirs.
    status: statusOf(row.status),
    incorporated_on: row.incorporated_on,
    address: row.address,
    industry: row.industry,
    match_score: score,
    matched_on: companyMatchedOn(evidence, byCountry),
    sources: [ID],
    officers: null,
    controllers: null,
    parents: null,
  };
  return { ...item, field_sources: sourcedBy(item, { provider: ID, record_id: `${row.source}:${row.external_id}` }) };
}

function best<T extends { match_score: number; id: string }>(items: T[], max = MAX_ITEMS): T[] {
  return items.sort((a, b) => b.match_score - a.match_score || a.id.localeCompare(b.id)).slice(0, max);
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
    holdersOf: (keys, limit) => index.holdersOf(keys, limit),
    ...(index.companyDepthOf
      ? {
          companyDepthOf: (keys: string[], leis: string[]) =>
            untilAborted(index.companyDepthOf!(keys, leis), ctx.signal, () => deadlinePassed(ID, ctx.signal)),
        }
      : {}),
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
    if (kind === 'person') {
      const items = await searchPeople(input as PersonInput, ctx);
      return { outcome: items.length > 0 ? 'found' : 'not_found', items };
    }
    const { items, identities } = await searchCompanies(input as CompanyInput, ctx);
    return { outcome: items.length > 0 ? 'found' : 'not_found', items, identities };
  },
};
