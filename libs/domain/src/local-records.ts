import { countryCodeOfName, jurisdictionOf, recordCountryOf, registerOf, usStateCodeOf } from './countries';
import {
  countryKey,
  locationKeysOf,
  normalizeCompanyName,
  normalizeDomain,
  normalizeEmailAddress,
  normalizePersonName,
  normalizePhoneNumber,
  normalizeUsername,
  phoneRegionOf,
  placeKey,
  registrationKey,
  splitPersonName,
  subjectId,
} from './normalize';

/**
 * The records of the local indexes as an importer hands them over (already validated), and the rows
 * they are stored as: every `*_key` is computed here, by the same normalisation the search applies to
 * its input, so import and search always agree. Pure: the SQL that writes rows is in persistence.
 */

export interface RecordLocation {
  city: string | null;
  region: string | null;
  country: string | null;
}

export interface PersonRecord {
  source: string;
  external_id: string;
  full_name: string;
  first_name?: string | null;
  last_name?: string | null;
  aliases?: string[];
  emails?: string[];
  phones?: string[];
  usernames?: string[];
  locations?: RecordLocation[];
  birth_year?: number | null;
}

export interface CompanyRecord {
  source: string;
  external_id: string;
  name: string;
  registration_number?: string | null;
  jurisdiction?: string | null;
  country?: string | null;
  domain?: string | null;
  status?: string | null;
  /** ISO date, `YYYY-MM-DD`. */
  incorporated_on?: string | null;
  address?: string | null;
  industry?: string | null;
  /** The Legal Entity Identifier (GLEIF records). */
  lei?: string | null;
}

/** A `people` row and its `person_names` (the full name and each alias, folded), column for column. */
export interface PersonRow {
  id: string;
  source: string;
  external_id: string;
  full_name: string;
  first_name: string | null;
  last_name: string | null;
  aliases: string[];
  emails: string[];
  phones: string[];
  usernames: string[];
  locations: RecordLocation[];
  birth_year: number | null;
  email_keys: string[];
  phone_keys: string[];
  username_keys: string[];
  location_keys: string[];
  names: { name_key: string; is_alias: boolean }[];
}

export interface CompanyRow {
  id: string;
  source: string;
  external_id: string;
  name: string;
  registration_number: string | null;
  jurisdiction: string | null;
  country: string | null;
  domain: string | null;
  status: string | null;
  incorporated_on: string | null;
  address: string | null;
  industry: string | null;
  lei: string | null;
  name_key: string;
  registration_key: string | null;
  domain_key: string | null;
}

function distinct(values: (string | null)[]): string[] {
  return [...new Set(values.filter((v): v is string => v !== null && v !== ''))];
}

function blankToNull(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

/** Each e-mail address or phone number with no comparison key (personRowOf's `onInvalid`). */
function keysOf<F extends 'emails' | 'phones'>(
  values: string[] | undefined,
  field: F,
  key: (value: string) => string | null,
  onInvalid?: (field: F, value: string) => void,
): (string | null)[] {
  return (values ?? []).map((v) => {
    const k = key(v);
    if (k === null) onInvalid?.(field, v);
    return k;
  });
}

/**
 * A record's locations as stored, shown and searched: each country as its ISO code (recordCountryOf:
 * `uk`, "USA", "United Kingdom" → `GB`, `US`, `GB`), one that is no country as countryKey writes it.
 */
function recordLocationsOf(locations: readonly RecordLocation[]): RecordLocation[] {
  return locations.map((l) => ({
    ...l,
    country: l.country ? (recordCountryOf(l.country) ?? (countryKey(l.country) || null)) : l.country,
  }));
}

export interface PersonRowOptions {
  /**
   * The region a national phone is read in when the record names no country (the operator's
   * DEFAULT_REGION); without it, such a phone has no key.
   */
  defaultRegion?: string | null;
  /**
   * Hears of each e-mail address or phone number that has no comparison key (not an address, not a
   * possible number): an importer rejects the line; others keep the value as written, unsearchable by it.
   */
  onInvalid?: (field: 'emails' | 'phones', value: string) => void;
}

/**
 * A phone as a record stores it: as written, unless it is written nationally and the record names no
 * country — then in E.164 as read in `defaultRegion`, so that whatever reads the record's phones by its
 * locations alone (merging, suppression) reads the number its key holds.
 */
function storedPhone(phone: string, region: string | null, defaultRegion: string | null): string {
  if (region !== null || defaultRegion === null || normalizePhoneNumber(phone) !== null) return phone;
  return normalizePhoneNumber(phone, defaultRegion) ?? phone;
}

/** The row of a person record. */
export function personRowOf(
  record: PersonRecord,
  { defaultRegion = null, onInvalid }: PersonRowOptions = {},
): PersonRow {
  const locations = recordLocationsOf(record.locations ?? []);
  // A national-format phone is read in the record's own country (its first location's), else in the default region.
  const region = phoneRegionOf(locations);
  const split = splitPersonName(record.full_name);
  return {
    id: subjectId('person', record.source, record.external_id),
    source: record.source,
    external_id: record.external_id,
    full_name: record.full_name.trim(),
    first_name: blankToNull(record.first_name) ?? split.first,
    last_name: blankToNull(record.last_name) ?? split.last,
    aliases: distinct((record.aliases ?? []).map((a) => a.trim())),
    emails: distinct((record.emails ?? []).map((e) => e.trim())),
    phones: distinct((record.phones ?? []).map((p) => storedPhone(p.trim(), region, defaultRegion))),
    usernames: distinct((record.usernames ?? []).map((u) => u.trim())),
    locations,
    birth_year: record.birth_year ?? null,
    email_keys: distinct(keysOf(record.emails, 'emails', normalizeEmailAddress, onInvalid)),
    phone_keys: distinct(
      keysOf(record.phones, 'phones', (p) => normalizePhoneNumber(p, region ?? defaultRegion), onInvalid),
    ),
    username_keys: distinct((record.usernames ?? []).map(normalizeUsername)),
    location_keys: locationKeysOf(locations),
    names: personNamesOf(record.full_name, record.aliases ?? []),
  };
}

/**
 * A person's searchable names (`person_names`): the full name and each alias, folded by normalizePersonName,
 * each key once (the full name's when an alias folds to it), none empty.
 */
export function personNamesOf(fullName: string, aliases: readonly string[]): PersonRow['names'] {
  const names = new Map<string, boolean>();
  for (const alias of aliases) names.set(normalizePersonName(alias), true);
  names.set(normalizePersonName(fullName), false);
  names.delete('');
  return [...names].map(([name_key, is_alias]) => ({ name_key, is_alias }));
}

/**
 * The country and jurisdiction of a company record as stored, shown and filtered by: the country as
 * countryKey writes it (`uk` → `GB`), the jurisdiction as the registries write theirs (jurisdictionOf:
 * `us_ny` → `US-NY`, `UK` → `GB`, "Delaware" → `US-DE`, "England and Wales" → `GB`), one it cannot read
 * ("Georgia": the country or the state?) as written.
 */
function placeOf(record: CompanyRecord): { jurisdiction: string | null; country: string | null } {
  const jurisdiction = blankToNull(record.jurisdiction);
  const country = blankToNull(record.country);
  return {
    jurisdiction: jurisdiction === null ? null : (jurisdictionOf(jurisdiction) ?? jurisdiction),
    country: country === null ? null : countryKey(country),
  };
}

/**
 * A company row: its place as placeOf writes it, its registration number keyed in its register
 * (registerOf its jurisdiction, else its country: a UK number `SC12345` as `SC012345`).
 */
export function companyRowOf(record: CompanyRecord): CompanyRow {
  const registration = blankToNull(record.registration_number);
  const domain = blankToNull(record.domain);
  const domainKey = domain === null ? null : normalizeDomain(domain);
  const place = placeOf(record);
  const registrationKeyOf =
    registration === null ? null : registrationKey(registration, registerOf(place.jurisdiction ?? place.country ?? ''));
  return {
    id: subjectId('company', record.source, record.external_id),
    source: record.source,
    external_id: record.external_id,
    name: record.name.trim(),
    registration_number: registration,
    ...place,
    domain: domainKey ?? domain,
    status: blankToNull(record.status),
    incorporated_on: blankToNull(record.incorporated_on),
    address: blankToNull(record.address),
    industry: blankToNull(record.industry),
    lei: blankToNull(record.lei)?.toUpperCase() ?? null,
    name_key: normalizeCompanyName(record.name),
    registration_key: registrationKeyOf === '' ? null : registrationKeyOf,
    domain_key: domainKey,
  };
}

/** A part of a searched location: folded, and the country or US state it names, if it names one. */
export interface SearchedPlace {
  key: string;
  /** The ISO code of the country the part names ("United Kingdom", "UK", "gb", "USA" → `GB`, `US`), else null. */
  country: string | null;
  /** The USPS code of the US state the part names ("Virginia", "VA" → `VA`), else null. */
  state: string | null;
}

/**
 * The parts of a searched location, split at commas, each once: "London, United Kingdom" → london;
 * united kingdom (GB). A part is keyed by placeKey, as a record's locations are; the country or state it
 * names is read from the part as written ("Côte d'Ivoire" is CI, though its key is "cote divoire").
 */
export function searchedLocationParts(location: string): SearchedPlace[] {
  const parts = new Map<string, SearchedPlace>();
  for (const part of location.split(',')) {
    const key = placeKey(part);
    if (key !== '' && !parts.has(key))
      parts.set(key, { key, country: countryCodeOfName(part), state: usStateCodeOf(part) });
  }
  return [...parts.values()];
}

/**
 * The one country a searched location names: a part naming a country ("United Kingdom", "UK", "USA")
 * names it, a part naming a US state ("TX", "Texas") the US, and a part that may be either ("CA": Canada
 * or California; "Georgia") one of the two. Null when no part names a country, or when not exactly one
 * country agrees with every part that names one: "Paris, France, USA" and "Los Angeles, CA" are not
 * guessed from ("Los Angeles, CA, USA" is the US).
 */
export function locationCountryOf(location: string): string | null {
  let agreed: string[] | null = null;
  for (const part of searchedLocationParts(location)) {
    const named = [part.country, part.state === null ? null : 'US'].filter((c): c is string => c !== null);
    if (named.length > 0) agreed = agreed === null ? named : agreed.filter((c) => named.includes(c));
  }
  return agreed !== null && new Set(agreed).size === 1 ? agreed[0]! : null;
}

/**
 * Whether a record is in a searched place: the part equals one of its location keys (a city, region or
 * country code, folded), names the country of one of its locations — "United Kingdom", "UK", "GB" and
 * "Great Britain" find a record in GB — or names the state of one of its US locations, by name or code —
 * "Virginia" finds a record in region `VA` of the US, "VA" one in "Virginia". A country's name is
 * compared with countries only, a state's with the regions of US locations only: "Canada" is not
 * California's `CA`, nor "Israel" Illinois' `IL`.
 */
export function isInPlace(place: SearchedPlace, row: Pick<PersonRow, 'location_keys' | 'locations'>): boolean {
  if (row.location_keys.includes(place.key)) return true;
  return row.locations.some((l) => {
    const country = l.country === null ? null : countryCodeOfName(l.country);
    if (place.country !== null && country === place.country) return true;
    return place.state !== null && country === 'US' && l.region !== null && usStateCodeOf(l.region) === place.state;
  });
}

/**
 * Whether a person is known in a country (an ISO code, as countryKey writes it): one of its locations is
 * there. False for a person of no known country too — which a search by country keeps (unknown is not
 * "elsewhere") without saying it matched.
 */
export function isInCountry(country: string, locations: readonly { country: string | null }[]): boolean {
  const key = countryKey(country);
  return locations.some((l) => l.country !== null && countryKey(l.country) === key);
}

/**
 * Whether a person searched for in a country may be answered: known there, or of no known country. A
 * person known only elsewhere is not (API.md: `country` narrows, as a company's does).
 */
export function mayBeInCountry(country: string, locations: readonly { country: string | null }[]): boolean {
  return isInCountry(country, locations) || locations.every((l) => l.country === null);
}

/**
 * What the local person index is asked: comparison keys (null when not searched by), birth-year bounds,
 * the country.
 */
export interface PersonSearch {
  name_key: string | null;
  /** Words of the name with the other names each may be written as (nicknames: `bob` → `robert`, …). */
  name_variants?: Readonly<Record<string, readonly string[]>>;
  email_key: string | null;
  phone_key: string | null;
  username_key: string | null;
  /** Records whose birth year is outside these bounds are left out; records without one are kept. */
  birth_year_min: number | null;
  birth_year_max: number | null;
  /**
   * An ISO code as countryKey writes it: records known only in other countries are left out (mayBeInCountry);
   * records of no known country are kept.
   */
  country: string | null;
}

/** What the local company index is asked; `country` keeps records in that country or a jurisdiction of it. */
export interface CompanySearch {
  name_key: string | null;
  domain_key: string | null;
  /** The keys the searched number may be stored under (a UK number is keyed as the register writes it). */
  registration_keys: string[] | null;
  country: string | null;
}

/** A record of the local person index that holds an e-mail or phone key, with what tells people apart. */
export interface IdentifierHolder {
  field: 'email' | 'phone';
  /** The key as the index stores it: a normalised address, an E.164 number. */
  key: string;
  id: string;
  full_name: string;
  first_name: string | null;
  last_name: string | null;
  aliases: string[];
  birth_year: number | null;
}

/**
 * A person with significant control of a UK company, as imported from Companies House's PSC snapshot
 * (ADR 0066): keyed by (source, external_id: the record's link), found by the company's registration key.
 */
export interface ControllerRow {
  id: string;
  source: string;
  external_id: string;
  company_number: string;
  /** registrationKey(company_number, 'GB'): as `companies.registration_key` holds a UK number. */
  registration_key: string;
  name: string | null;
  kind: string;
  natures_of_control: string[];
  notified_on: string | null;
  ceased_on: string | null;
}

/**
 * An accounting parent of an LEI's entity, as imported from GLEIF's relationship records (ADR 0066): keyed by
 * (source, external_id: `<child>><type>><parent>`), found by the child's LEI; `level` `direct` or `ultimate`.
 */
export interface ParentRow {
  id: string;
  source: string;
  external_id: string;
  child_lei: string;
  level: 'direct' | 'ultimate';
  parent_lei: string;
}

/** A parent row with the parent's legal name where the index holds its LEI record. */
export type ParentFound = ParentRow & { parent_name: string | null };

/** The local indexes as the `local` provider and the merge read them: candidates, best name matches first. */
export interface LocalIndex {
  findPeople(search: PersonSearch, limit: number): Promise<PersonRow[]>;
  findCompanies(search: CompanySearch, limit: number): Promise<CompanyRow[]>;
  /** The records holding each key, at most `limit` per key (enough to tell one holder from several). */
  holdersOf(keys: { email_keys: string[]; phone_keys: string[] }, limit: number): Promise<IdentifierHolder[]>;
  /**
   * The imported controllers of the companies with these UK registration keys, and the imported parents of
   * these LEIs (ADR 0066); absent where no such tables are (the sandbox's records).
   */
  companyDepthOf?(
    registrationKeys: string[],
    leis: string[],
  ): Promise<{ controllers: ControllerRow[]; parents: ParentFound[] }>;
}
