import anyAscii from 'any-ascii';
import { createHash } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { parseEmail } from './email';
import { DomainError } from './errors';
import { isInternational, parsePhone, type PhoneRegion } from './phone';
import { spacedCjkName } from './cjk-names';

/**
 * The one normalisation of each kind of value, used when records are imported and when they are
 * searched for, so both sides always agree. Everything here is pure.
 */

/** Case, accents and transliteration (any-ascii), `&` as "and", punctuation as spaces, whitespace collapsed. */
export function foldText(value: string): string {
  return anyAscii(value)
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/\b([a-z])\.(?=[a-z]\b)/g, '$1') // dotted initialisms: S.A. → sa, L.L.C. → llc
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

export function tokensOf(value: string): string[] {
  const folded = foldText(value);
  return folded === '' ? [] : folded.split(' ');
}

/**
 * Apostrophes as names are written with them — ASCII `'` and `` ` ``, the typographic ’ and ‘, the modifier
 * letters ʼ and ʻ, the acute accent and prime used in their place, the full-width ＇ — between two letters
 * (after any combining marks on the first).
 */
const APOSTROPHE_IN_WORD = /(?<=\p{L}\p{M}*)['`\u2018\u2019\u02bc\u02bb\u00b4\u2032\uff07]+(?=\p{L})/gu;

/**
 * A name's words as the local index keys names, a person's or a company's: foldText's, except that an
 * apostrophe inside a word is dropped (O'Brien, O’Brien and OBrien are one word, "obrien"; McDonald's and
 * McDonalds "mcdonalds"; the spaced "O Brien" or "Macy s" is met by the name matcher). ADR 0012.
 */
function nameTokensOf(name: string): string[] {
  return tokensOf(name.replace(APOSTROPHE_IN_WORD, ''));
}

/**
 * A person's name, folded: "Zoë  O'Neill-Smith" → "zoe oneill smith", "王小明" → "wang xiaoming". As
 * nameTokensOf (an apostrophe inside a word dropped), and a name written in Chinese characters or Hangul
 * has its family name and given name as two words, as it is romanised (spacedCjkName). ADR 0012.
 * The local index's name keys; not suppression's, whose stored keys are hashes of foldText's words.
 */
export function normalizePersonName(name: string): string {
  return nameTokensOf(spacedCjkName(name)).join(' ');
}

/**
 * First and last name from a full name as written: "Last, First Middle" or "First Middle Last"; a single
 * word is a first name. Titles and generational suffixes are left to the caller's data.
 */
export function splitPersonName(fullName: string): { first: string | null; last: string | null } {
  const comma = fullName.indexOf(',');
  if (comma > 0) {
    const last = fullName.slice(0, comma).trim();
    const first =
      fullName
        .slice(comma + 1)
        .trim()
        .split(/\s+/)[0] ?? '';
    return { first: first || null, last: last || null };
  }
  const words = fullName.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return { first: null, last: null };
  if (words.length === 1) return { first: words[0]!, last: null };
  return { first: words[0]!, last: words[words.length - 1]! };
}

/** An e-mail address as compared: the parser's normal form, lower-cased throughout; null when it is not one. */
export function normalizeEmailAddress(email: string): string | null {
  const parsed = parseEmail(email);
  return parsed.syntaxValid ? parsed.normalized.toLowerCase() : null;
}

/** A phone number in E.164, in any format, `country` the default region for national input; null when it is not one. */
export function normalizePhoneNumber(phone: string, country?: string | null): string | null {
  try {
    const parsed = parsePhone(phone, country ?? undefined);
    return parsed.isPossible() ? parsed.number : null;
  } catch {
    return null;
  }
}

/**
 * A phone number in E.164, as normalizePhoneNumber reads it with `region` as the default region: an
 * international number as written, a national one in `region`. Throws `validation_error` on the field
 * `phone` when it is not a possible number: an international one with its own issue (its length, an
 * unknown calling code), a national one naming the region it was read in and why
 * (`is not a phone number in US (read in the operator's default region)`).
 */
export function phoneE164(phone: string, region: PhoneRegion): string {
  const e164 = normalizePhoneNumber(phone, region.code);
  if (e164 !== null) return e164;
  if (isInternational(phone)) {
    parsePhone(phone); // throws the issue it has, if parsing finds one
    throw DomainError.validation([{ field: 'phone', issue: 'is not a possible phone number' }]);
  }
  throw DomainError.validation([
    { field: 'phone', issue: `is not a phone number in ${region.code} (read in ${region.reason})` },
  ]);
}

/**
 * The region a person's phone numbers written nationally are read in: the country of their first location
 * that names one, as countryKey writes it (`UK` is `GB`; null when none does). The index keys a record's
 * phones by it, and every comparison of a person's phones (merging, suppression) reads them the same way.
 */
export function phoneRegionOf(locations: readonly { country: string | null }[]): string | null {
  const country = locations.find((l) => l.country)?.country;
  return country ? countryKey(country) : null;
}

/** A DNS label as a host name may have it (RFC 1123): 1–63 letters, digits and hyphens, no hyphen at either end. */
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A domain from a domain or a URL: "https://www.Acme.com/about" → "acme.com", "example.com." →
 * "example.com" (IDN as punycode); null when there is none — a name of one label, an empty label
 * ("foo..com", ".com"), a label that starts or ends with a hyphen or runs past 63 characters, a name past
 * 253, or an IP address (a top-level label of digits only). A leading `www.` is folded off where a domain
 * is left: `www.com` stays.
 */
export function normalizeDomain(value: string): string | null {
  const trimmed = value.trim();
  if (trimmed === '') return null;
  let host: string;
  try {
    host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`).hostname;
  } catch {
    return null;
  }
  const ascii = domainToASCII(host.replace(/\.$/, '')).toLowerCase();
  const labels = ascii.split('.');
  if (labels.length < 2 || ascii.length > 253 || !labels.every((l) => HOST_LABEL.test(l))) return null;
  if (/^\d+$/.test(labels[labels.length - 1]!)) return null;
  return labels.length > 2 && labels[0] === 'www' ? labels.slice(1).join('.') : ascii;
}

/**
 * A handle as written, without what is not part of it: the space around it and a leading `@` — with any
 * space after the `@` too (`"@ ghopper"` is `ghopper`). Empty when nothing is left.
 */
export function bareHandle(username: string): string {
  return username.trim().replace(/^@+/, '').trim();
}

/** A username as compared: its bare handle, lower-cased. */
export function normalizeUsername(username: string): string {
  return bareHandle(username).toLowerCase();
}

/**
 * Legal forms folded away from the end (and "the" from the start) of a company name, after its words as
 * nameTokensOf writes them (an apostrophe inside a word dropped: "McDonald's Corporation" and "McDonalds
 * Corp" are "mcdonalds"): Ltd/Limited, Inc/Incorporated, GmbH, S.A., LLC, PLC, … — "Acme Widgets Limited"
 * and "ACME WIDGETS LTD." are the same name.
 */
const LEGAL_FORMS = new Set(
  (
    'ltd limited inc incorporated corp corporation co company cos llc llp lp lllp plc pllc pc gmbh mbh ag kg kgaa ' +
    'ohg gbr ug ev sa sas sasu sarl eurl sca sci spa srl srls sapa bv bvba nv vof cv oy oyj ab hb kb as asa aps ' +
    'is ks kk yk pty pte bhd sdn se sl slu sc scs kft zrt nyrt sro spol ooo zao oao pao ojsc cjsc jsc ad ead ' +
    'dd doo zoo spzoo sp z oo ltda lda cia eireli me mei sab rl'
  ).split(' '),
);

export function normalizeCompanyName(name: string): string {
  const tokens = nameTokensOf(name);
  if (tokens[0] === 'the' && tokens.length > 1) tokens.shift();
  let folded = false;
  for (;;) {
    const last = tokens[tokens.length - 1]!;
    if (tokens.length > 1 && LEGAL_FORMS.has(last)) tokens.pop();
    // "GmbH & Co. KG": an "and" between legal forms goes with them
    else if (folded && tokens.length > 1 && last === 'and') tokens.pop();
    else break;
    folded = true;
  }
  return tokens.join(' ');
}

/**
 * A UK company number with a two-letter prefix (`SC` Scotland, `NI` Northern Ireland, `OC`, `SO`, …) as
 * Companies House writes it, eight characters: the digits after the prefix padded with zeros
 * (`SC12345` → `SC012345`, `NI1234` → `NI001234`). Anything else — a longer or shorter prefix, an
 * all-digit number, one already of eight — as given. Takes a compact, upper-case number.
 */
export function padUkPrefixedNumber(compact: string): string {
  const prefixed = /^([A-Z]{2})([0-9]{1,5})$/.exec(compact);
  return prefixed ? `${prefixed[1]!}${prefixed[2]!.padStart(6, '0')}` : compact;
}

/**
 * A registration number as compared: no spaces or punctuation, upper-case, and an all-digit number
 * without its leading zeros — "01234567" (as Companies House writes it) and "1234567" are the same
 * company. In the UK's register (`register` GB or one of its parts, as registerOf writes it) a number
 * with a two-letter prefix is read as Companies House writes it (padUkPrefixedNumber: `SC12345` is
 * `SC012345`); elsewhere such a number is a different one. The number is shown as the registry writes
 * it; only the comparison uses this key.
 */
export function registrationKey(value: string, register?: string | null): string {
  const compact = value.toUpperCase().replace(/[^A-Z0-9]/g, '');
  if (/^[0-9]+$/.test(compact)) return compact.replace(/^0+(?=.)/, '');
  return register && /^GB(-|$)/.test(jurisdictionKey(register)) ? padUkPrefixedNumber(compact) : compact;
}

/**
 * A place's name as locations are compared by: folded as a name is (nameTokensOf), so that an apostrophe
 * inside a word is dropped — "St. John's", "St John’s" and "St Johns" are "st johns", "Val-d'Or" and
 * "Val d’Or" "val dor" — and "São Paulo" is "sao paulo".
 */
export function placeKey(value: string): string {
  return nameTokensOf(value).join(' ');
}

type Location = { city?: string | null; region?: string | null; country?: string | null };

/**
 * The keys a location is compared by: its city, region and country code (as countryKey writes it), each
 * folded by placeKey ("São Paulo" → "sao paulo", "UK" → "gb"). A searched location is compared part by
 * part (searchedLocationParts); a record matches a part when one of its keys equals one of the part's.
 */
export function locationKeys(location: Location): string[] {
  const keys = [location.city, location.region, location.country && countryKey(location.country)]
    .filter((v): v is string => typeof v === 'string')
    .map(placeKey)
    .filter((v) => v !== '');
  return [...new Set(keys)];
}

/** The keys of a record's locations (locationKeys of each), each once, in order: its `location_keys`. */
export function locationKeysOf(locations: readonly Location[]): string[] {
  return [...new Set(locations.flatMap(locationKeys))];
}

/**
 * The stable id of a person or company item from its origin: the same (source, external id) gives the
 * same id in every search and after every re-import — `per_…` for people, `com_…` for companies.
 */
export function subjectId(kind: 'person' | 'company', source: string, externalId: string): string {
  const digest = createHash('sha256').update(`${source}\u0000${externalId}`).digest('base64url').slice(0, 20);
  return `${kind === 'person' ? 'per' : 'com'}_${digest}`;
}

/**
 * Whether `YYYY-MM-DD` names a day of the calendar: not 2023-02-30, month 13 or 0000-00-00. A date's shape
 * alone is not a date.
 */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const day = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === value;
}

/**
 * Codes written for a country in place of its ISO 3166-1 alpha-2 code: `UK`, which ISO reserves for the
 * United Kingdom but does not assign (its code is `GB`).
 */
const COUNTRY_ALIASES: ReadonlyMap<string, string> = new Map([['UK', 'GB']]);

/**
 * A country code as stored and compared: trimmed, upper-case, `UK` as `GB`; empty when there is none.
 * A record imported with `uk` and a search for `GB` then agree.
 */
export function countryKey(value: string): string {
  const key = value.trim().toUpperCase();
  return COUNTRY_ALIASES.get(key) ?? key;
}

/** A jurisdiction written as a code: `GB`, `us_ny` (OpenCorporates), `UK-ENG`. */
export const JURISDICTION_CODE = /^[a-z]{2}([-_][a-z0-9]{1,3})?$/i;

/**
 * A jurisdiction written as a code, as compared: upper-case ISO style, `_` as `-` (OpenCorporates'
 * `us_de` is `US-DE`), its country part as countryKey writes it (`UK` as `GB`, `uk_eng` as `GB-ENG`);
 * empty when there is none. One written out ("Delaware") is jurisdictionOf's to read.
 */
export function jurisdictionKey(value: string): string {
  const [country = '', ...rest] = value.trim().toUpperCase().replace(/_/g, '-').split('-');
  return [countryKey(country), ...rest].join('-');
}
