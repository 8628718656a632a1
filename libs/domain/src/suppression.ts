import { createHash } from 'node:crypto';
import { DomainError, type FieldIssue } from './errors';
import { normalizeEmailAddress, normalizePersonName, normalizePhoneNumber, phoneE164, tokensOf } from './normalize';
import { defaultPhoneRegion } from './phone';

/**
 * The suppression list's subjects (people who opted out): an e-mail address, a phone number, or a name
 * with a birth year. Each is compared by one key made with the normalisation the rest of Dossier uses
 * (normalize.ts), so an entry matches however a provider wrote the value — a name by two, where the local
 * index's fold differs (`alias`). ADR 0015.
 */
export type SuppressionKind = 'email' | 'phone' | 'name';

export interface SuppressionSubject {
  kind: SuppressionKind;
  /** The normalised key (`email:…`, `phone:+…`, `name:<folded name>:<year>`): matched, never stored. */
  key: string;
  /**
   * A name's key in the local index's fold, where it differs from `key` (O'Brien: `name:obrien:…` beside
   * `name:o brien:…`; 王小明: `name:wang xiaoming:…` beside `name:wangxiaoming:…`): matched too.
   */
  alias?: string;
  /** A masked form for people reading the list (`j…@example.com`, `+44…23`, `J… S…, 1980`). */
  hint: string;
}

/** What an operator gives: exactly one of an e-mail, a phone number, or a name with a birth year. */
export interface SuppressionInput {
  email?: string;
  phone?: string;
  name?: string;
  birth_year?: number | string;
}

const MIN_BIRTH_YEAR = 1800;

const foldedNameWords = (name: string): string => tokensOf(name).join(' ');

export const suppressionKeys = {
  email: (email: string): string | null => {
    const normalized = normalizeEmailAddress(email);
    return normalized ? `email:${normalized}` : null;
  },
  /** `country` reads a nationally written number found in a record (an operator's entry: parseSuppressionSubject). */
  phone: (phone: string, country?: string | null): string | null => {
    const e164 = normalizePhoneNumber(phone, country);
    return e164 ? `phone:${e164}` : null;
  },
  /**
   * A name's words as foldText writes them — not normalizePersonName, whose rules (an apostrophe inside a
   * word dropped, a CJK name spaced) came after entries were stored: a stored key is a hash, which cannot be
   * re-keyed, so a changed fold would silently lift the suppressions written before (ADR 0012, ADR 0015).
   */
  name: (name: string, birthYear: number): string | null => {
    const folded = foldedNameWords(name);
    return !/[a-z]/.test(folded) ? null : `name:${folded}:${birthYear}`;
  },
  /**
   * The keys a name found in a record is checked under: `name`'s, and the one normalizePersonName makes
   * where it differs — an entry stores that one as its `alias`, so O'Brien, O’Brien and OBrien, or 王小明
   * and Wang Xiaoming, meet whichever way the entry and the record were written.
   */
  names: (name: string, birthYear: number): string[] => {
    const key = suppressionKeys.name(name, birthYear);
    if (key === null) return [];
    const alias = nameAlias(name, birthYear, key);
    return alias === undefined ? [key] : [key, alias];
  },
};

function nameAlias(name: string, birthYear: number, key: string): string | undefined {
  const alias = `name:${normalizePersonName(name)}:${birthYear}`;
  return alias === key ? undefined : alias;
}

/**
 * The stored form of a key: SHA-256, so the table and its backups hold no readable address, number or
 * name (pseudonymised — a guessed subject can still be confirmed; ADR 0015).
 */
export function suppressionKeyHash(key: string): string {
  return createHash('sha256').update(`dossier-suppression\u0000${key}`).digest('hex');
}

/**
 * Reads an operator's input into a subject, or throws `validation_error` naming each bad field. The
 * same rules for the CLI and `/admin/suppressions`: a phone number written nationally is read in
 * `defaultRegion` (the operator's DEFAULT_REGION), as an import reads one on a record naming no country.
 */
export function parseSuppressionSubject(input: SuppressionInput, defaultRegion: string): SuppressionSubject {
  const given = (['email', 'phone', 'name'] as const).filter((f) => input[f] !== undefined);
  const issues: FieldIssue[] = [];
  if (given.length !== 1) {
    throw DomainError.validation([
      { field: 'body', issue: 'give exactly one of email, phone, or name with birth_year' },
    ]);
  }
  if (input.birth_year !== undefined && given[0] !== 'name') {
    throw DomainError.validation([{ field: 'birth_year', issue: 'goes with name only' }]);
  }
  switch (given[0]!) {
    case 'email': {
      const key = typeof input.email === 'string' ? suppressionKeys.email(input.email) : null;
      if (!key) throw DomainError.validation([{ field: 'email', issue: 'must be an e-mail address' }]);
      return { kind: 'email', key, hint: maskEmail(key.slice('email:'.length)) };
    }
    case 'phone': {
      const e164 = phoneE164(input.phone ?? '', defaultPhoneRegion(defaultRegion));
      return { kind: 'phone', key: suppressionKeys.phone(e164)!, hint: maskPhone(e164) };
    }
    case 'name': {
      const name = typeof input.name === 'string' ? input.name : '';
      if (!/[a-z]/.test(foldedNameWords(name))) issues.push({ field: 'name', issue: 'must be a name with letters' });
      const year = birthYearOf(input.birth_year);
      if (year === null) {
        const years = `a whole year from ${MIN_BIRTH_YEAR} to ${new Date().getUTCFullYear()}`;
        // Missing, or given but not a year: each says what is wrong.
        const issue = input.birth_year === undefined ? `is required with name: ${years}` : `must be ${years}`;
        issues.push({ field: 'birth_year', issue });
      }
      if (issues.length > 0 || year === null) throw DomainError.validation(issues);
      const key = suppressionKeys.name(name, year)!;
      const alias = nameAlias(name, year, key);
      return { kind: 'name', key, ...(alias && { alias }), hint: `${maskName(name)}, ${year}` };
    }
  }
}

function birthYearOf(value: number | string | undefined): number | null {
  const text = typeof value === 'number' ? String(value) : (value ?? '').trim();
  if (!/^\d{4}$/.test(text)) return null;
  const year = Number(text);
  return year >= MIN_BIRTH_YEAR && year <= new Date().getUTCFullYear() ? year : null;
}

/** `jane.doe@example.com` → `j…@example.com`. */
function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  return `${Array.from(email.slice(0, at))[0] ?? ''}…${email.slice(at)}`;
}

/** `+447700900123` → `+44…23`: the country code and the last two digits. */
function maskPhone(e164: string): string {
  return `${e164.slice(0, 3)}…${e164.slice(-2)}`;
}

/** `Jane Q. Doe` → `J… Q… D…`. */
function maskName(name: string): string {
  return name
    .trim()
    .split(/\s+/)
    .map((word) => `${Array.from(word)[0]!.toUpperCase()}…`)
    .join(' ');
}
