import {
  UNSTORABLE_TEXT,
  isCalendarDate,
  isStorableText,
  normalizeDomain,
  recordCountryOf,
  type CompanyRecord,
  type PersonRecord,
  type RecordLocation,
} from '@dossier/domain';

/**
 * One import line's fields (from JSONL, or CSV with its lists split) checked into a record, or the
 * reason it is rejected (`full_name is required`). The first problem found is the one reported.
 */
export type Checked<T> = { record: T } | { reason: string };

/** The source of lines that name none: the operator's own records. */
export const DEFAULT_SOURCE = 'import';

export const PERSON_FIELDS = [
  'external_id',
  'full_name',
  'first_name',
  'last_name',
  'aliases',
  'emails',
  'phones',
  'usernames',
  'locations',
  'birth_year',
  'source',
] as const;

export const COMPANY_FIELDS = [
  'external_id',
  'name',
  'registration_number',
  'jurisdiction',
  'country',
  'domain',
  'status',
  'incorporated_on',
  'address',
  'industry',
  'source',
  'lei',
] as const;

class Rejected extends Error {}
const reject = (reason: string): never => {
  throw new Rejected(reason);
};

const MAX_TEXT = 1000;
const MAX_LIST = 100;

/**
 * A text field, trimmed. Text Postgres cannot store is rejected here, with its line: left to the batch's
 * COPY it would fail the whole import at that batch, naming no line. `path` names a nested field in the
 * reason (`locations[0].city`).
 */
function text(fields: Record<string, unknown>, name: string, required = false, path = name): string | null {
  const v = fields[name];
  if (v === undefined || v === null || (typeof v === 'string' && v.trim() === '')) {
    return required ? reject(`${path} is required`) : null;
  }
  if (typeof v !== 'string' && typeof v !== 'number') return reject(`${path} must be a string`);
  const s = String(v).trim();
  if (!isStorableText(s)) reject(`${path} ${UNSTORABLE_TEXT}`);
  if (s.length > MAX_TEXT) reject(`${path} must be at most ${MAX_TEXT} characters`);
  return s;
}

function list(fields: Record<string, unknown>, name: string): string[] {
  const v = fields[name];
  if (v === undefined || v === null || v === '') return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) return reject(`${name} must be a list of strings`);
  if (v.length > MAX_LIST) reject(`${name} must have at most ${MAX_LIST} entries`);
  const unstorable = (v as string[]).findIndex((x) => !isStorableText(x));
  if (unstorable >= 0) reject(`${name}[${unstorable}] ${UNSTORABLE_TEXT}`);
  return (v as string[]).map((x) => x.trim()).filter((x) => x !== '');
}

const LOCATION_FIELDS = ['city', 'region', 'country'] as const;

function locations(fields: Record<string, unknown>): RecordLocation[] {
  const v = fields['locations'];
  if (v === undefined || v === null || v === '') return [];
  if (!Array.isArray(v)) return reject('locations must be a list of {city, region, country}');
  return v.map((loc: unknown, i) => {
    if (typeof loc !== 'object' || loc === null || Array.isArray(loc))
      return reject(`locations[${i}] must be an object with city, region and country`);
    const at = `locations[${i}]`;
    unknownFields(loc as Record<string, unknown>, LOCATION_FIELDS, `${at}.`);
    const part = (k: (typeof LOCATION_FIELDS)[number]) => text(loc as Record<string, unknown>, k, false, `${at}.${k}`);
    // A code or a country's English name ("USA", "United Kingdom"), stored as the ISO code.
    const written = part('country');
    const country = written === null ? null : recordCountryOf(written);
    if (written !== null && country === null)
      reject(`${at}.country must be an ISO 3166-1 alpha-2 code such as GB or a country's English name`);
    return { city: part('city'), region: part('region'), country };
  });
}

/** `prefix` places a nested object's field in the reason (`locations[0].town is not a known field`). */
function unknownFields(fields: Record<string, unknown>, known: readonly string[], prefix = ''): void {
  const unknown = Object.keys(fields).filter((k) => !known.includes(k));
  if (unknown.length > 0) reject(`${prefix}${unknown[0]} is not a known field`);
}

function checked<T>(build: () => T): Checked<T> {
  try {
    return { record: build() };
  } catch (error) {
    if (error instanceof Rejected) return { reason: error.message };
    throw error;
  }
}

export function personRecordOf(fields: Record<string, unknown>, source: string | null): Checked<PersonRecord> {
  return checked(() => {
    unknownFields(fields, PERSON_FIELDS);
    const external_id = text(fields, 'external_id', true)!;
    const full_name = text(fields, 'full_name', true)!;
    const locs = locations(fields);
    // E-mail addresses and phone numbers are checked when their keys are computed (personRowOf's onInvalid).
    const emails = list(fields, 'emails');
    const phones = list(fields, 'phones');
    const by = fields['birth_year'];
    let birth_year: number | null = null;
    if (by !== undefined && by !== null && by !== '') {
      const n = typeof by === 'number' ? by : typeof by === 'string' && /^\d+$/.test(by.trim()) ? Number(by) : NaN;
      const thisYear = new Date().getUTCFullYear();
      if (!Number.isInteger(n) || n < 1800 || n > thisYear)
        reject(`birth_year must be a whole number from 1800 to ${thisYear}`);
      birth_year = n;
    }
    return {
      source: text(fields, 'source') ?? source ?? DEFAULT_SOURCE,
      external_id,
      full_name,
      first_name: text(fields, 'first_name'),
      last_name: text(fields, 'last_name'),
      aliases: list(fields, 'aliases'),
      emails,
      phones,
      usernames: list(fields, 'usernames'),
      locations: locs,
      birth_year,
    };
  });
}

function isoDate(fields: Record<string, unknown>, name: string): string | null {
  const v = text(fields, name);
  if (v === null) return null;
  if (!isCalendarDate(v)) reject(`${name} must be a date as YYYY-MM-DD`);
  return v;
}

export function companyRecordOf(fields: Record<string, unknown>, source: string | null): Checked<CompanyRecord> {
  return checked(() => {
    unknownFields(fields, COMPANY_FIELDS);
    const domain = text(fields, 'domain');
    if (domain !== null && normalizeDomain(domain) === null) reject(`domain: "${domain}" is not a domain`);
    const country = text(fields, 'country')?.toUpperCase() ?? null;
    if (country !== null && !/^[A-Z]{2}$/.test(country))
      reject('country must be an ISO 3166-1 alpha-2 code such as GB');
    return {
      source: text(fields, 'source') ?? source ?? DEFAULT_SOURCE,
      external_id: text(fields, 'external_id', true)!,
      name: text(fields, 'name', true)!,
      registration_number: text(fields, 'registration_number'),
      jurisdiction: text(fields, 'jurisdiction'),
      country,
      domain,
      status: text(fields, 'status'),
      incorporated_on: isoDate(fields, 'incorporated_on'),
      address: text(fields, 'address'),
      industry: text(fields, 'industry'),
      lei: text(fields, 'lei'),
    };
  });
}
