import {
  isCalendarDate,
  normalizeCompanyName,
  normalizeDomain,
  registerOf,
  registrationKey,
  subjectId,
} from '@dossier/domain';
import type { CompanyInput, CompanyParents, CompanyResultItem, Controller, Officer } from '@dossier/contracts';
import type { ProviderAnswer } from './provider';
import { nameMatchScore } from './local/name-match';
import { NAME_FLOOR, companyMatchedOn, scoreOf, type Evidence } from './subject-score';
import { sourcedBy } from './field-sources';

/**
 * What a company registry (GLEIF, OpenCorporates, Companies House) says about one company, before it is
 * scored against the search: its names (the legal one first, then former and other names), its number,
 * where it is registered, and the fields shown as they are.
 */
export interface RegistryCompany {
  /** The vendor's own id of the record (the LEI, the company number, `us_de/1234567`). */
  externalId: string;
  /**
   * The record's id or link as the vendor's API names it, for `field_sources` (ADR 0068): `/company/00102498`,
   * `/lei-records/<LEI>`, `/companies/us_de/1234567`.
   */
  recordId: string;
  /** Identities beyond the shown fields, for merging: `lei:<LEI>`, `<provider>:<vendor id>`. */
  identities: string[];
  names: string[];
  registration_number: string | null;
  /** ISO style, upper-case: `GB`, `US-DE`. */
  jurisdiction: string | null;
  /** ISO 3166-1 alpha-2. */
  country: string | null;
  domain?: string | null;
  status: string | null;
  incorporated_on: string | null;
  address: string | null;
  industry?: string | null;
  /** Looked up for the best match only (ADR 0066); absent: not known. */
  officers?: Officer[] | null;
  controllers?: Controller[] | null;
  parents?: CompanyParents | null;
}

/** How well a record matches the searched fields: the score and the request fields that matched. */
export interface CompanyMatch {
  match_score: number;
  matched_on: string[];
}

/**
 * What agrees between a company search and a record, as the local index and every registry weigh it:
 * the best of the record's names against the searched one (legal forms folded; below NAME_FLOOR no
 * match), the registration number and the domain by their comparison keys — the number, searched and
 * recorded, keyed in the record's register (its jurisdiction, else its country, else the searched one:
 * a searched `SC12345` is a UK record's `SC012345`, and no other's).
 */
export function companyEvidence(
  input: CompanyInput,
  record: {
    names: readonly string[];
    registration_number: string | null;
    jurisdiction?: string | null;
    country?: string | null;
    domain?: string | null;
  },
): Evidence {
  const evidence: Evidence = [];
  const name = input.company_name ? normalizeCompanyName(input.company_name) : '';
  if (name !== '') {
    const searched = name.split(' ');
    const s = Math.max(0, ...record.names.map((n) => nameMatchScore(searched, normalizeCompanyName(n).split(' '))));
    if (s >= NAME_FLOOR) evidence.push(['name', s]);
  }
  const register = registerOf(record.jurisdiction ?? record.country ?? input.country ?? '');
  const number = input.registration_number ? registrationKey(input.registration_number, register) : '';
  if (
    number !== '' &&
    record.registration_number !== null &&
    registrationKey(record.registration_number, register) === number
  )
    evidence.push(['registration_number', 1]);
  const domain = input.domain ? normalizeDomain(input.domain) : null;
  if (domain !== null && record.domain && normalizeDomain(record.domain) === domain) evidence.push(['domain', 1]);
  return evidence;
}

/**
 * Scores a registry's record against a company search exactly as the local index scores its records
 * (ADR 0012): the best of the record's names against the searched one (nameMatchScore on the names with
 * their legal forms folded; below NAME_FLOOR no match), the registration number and the domain by their
 * comparison keys, each agreeing field evidence combined by scoreOf. A record in another country than the
 * one asked for, or matching none of the searched fields, is no match: null.
 */
export function matchCompany(input: CompanyInput, record: RegistryCompany): CompanyMatch | null {
  const country = input.country?.toUpperCase();
  const recordCountry = record.country ?? record.jurisdiction?.slice(0, 2) ?? null;
  if (country && recordCountry && recordCountry !== country) return null;
  const evidence = companyEvidence(input, record);
  if (evidence.length === 0) return null;
  return {
    match_score: scoreOf(evidence),
    matched_on: companyMatchedOn(evidence, Boolean(country && recordCountry === country)),
  };
}

/** A registry's record as a company item crediting `source`, its id stable per (source, vendor id). */
export function companyItem(source: string, record: RegistryCompany, match: CompanyMatch): CompanyResultItem {
  const item = {
    id: subjectId('company', source, record.externalId),
    name: record.names[0] ?? '',
    registration_number: record.registration_number,
    jurisdiction: record.jurisdiction,
    country: record.country,
    domain: record.domain ?? null,
    status: record.status,
    incorporated_on: record.incorporated_on,
    address: record.address,
    industry: record.industry ?? null,
    match_score: match.match_score,
    matched_on: match.matched_on,
    sources: [source],
    officers: record.officers ?? null,
    controllers: record.controllers ?? null,
    parents: record.parents ?? null,
  };
  return { ...item, field_sources: sourcedBy(item, { provider: source, record_id: record.recordId }) };
}

/**
 * A registry's answer: the records that match the search, as items best first (at most `limit`), with
 * their identities in the same order; `not_found` when none does.
 */
export function registryAnswer(
  source: string,
  input: CompanyInput,
  records: RegistryCompany[],
  limit: number,
): ProviderAnswer<'company'> {
  const scored = records
    .map((record) => ({ record, match: matchCompany(input, record) }))
    .filter((s): s is { record: RegistryCompany; match: CompanyMatch } => s.match !== null)
    .sort((a, b) => b.match.match_score - a.match.match_score)
    .slice(0, limit);
  if (scored.length === 0) return { outcome: 'not_found', items: [] };
  return {
    outcome: 'found',
    items: scored.map((s) => companyItem(source, s.record, s.match)),
    identities: scored.map((s) => s.record.identities),
  };
}

/** Whether a company search names something a registry can look up: a name or a registration number. */
export function hasNameOrNumber(input: CompanyInput): boolean {
  return Boolean(input.company_name?.trim() || input.registration_number?.trim());
}

/**
 * A registry searched by registration number first (the precise key), then by name when no number was
 * given or none of the records the number found matches the search (registryAnswer: in the country asked
 * for, agreeing on a searched field): a number can find records that are not the company (OpenCorporates'
 * `q` matches names too; a number in another register), or none (Companies House's 404). `search` answers
 * [] for a number the registry cannot hold, without asking. Every registry (Companies House, GLEIF,
 * OpenCorporates) answers through this one flow.
 */
export async function searchByNumberThenName(
  source: string,
  input: CompanyInput,
  search: (filter: { number: string } | { name: string }) => Promise<RegistryCompany[]>,
  limit: number,
): Promise<ProviderAnswer<'company'>> {
  const number = input.registration_number?.trim();
  const name = input.company_name?.trim();
  if (number) {
    const byNumber = registryAnswer(source, input, await search({ number }), limit);
    if (byNumber.outcome === 'found' || !name) return byNumber;
  }
  return registryAnswer(source, input, name ? await search({ name }) : [], limit);
}

/** The parts of an address that are known, joined: `1 St James's Square, London, SW1Y 4PD`. */
export function joinAddress(parts: readonly (string | null | undefined)[]): string | null {
  const known = parts.map((p) => p?.trim()).filter((p): p is string => Boolean(p));
  return known.length > 0 ? known.join(', ') : null;
}

/**
 * A registry's date or timestamp as an ISO date (`1996-06-20T00:00:00Z` → `1996-06-20`); null otherwise,
 * and for one that names no day (`2023-02-30`, `0000-00-00`).
 */
export function isoDate(value: string | null | undefined): string | null {
  const m = /^(\d{4}-\d{2}-\d{2})(?:$|T)/.exec(value?.trim() ?? '');
  return m && isCalendarDate(m[1]!) ? m[1]! : null;
}

/**
 * A company's status as every source says it: a lower-case phrase, words apart by one space — `ACTIVE` →
 * `active`, `In Existence` → `in existence`, Companies House's `voluntary-arrangement` and its bulk file's
 * `Voluntary Arrangement` → `voluntary arrangement`, `converted-closed` and `Converted/Closed` →
 * `converted closed`. The registries' items and the local index's (as its import wrote them) go through it.
 */
export function statusOf(value: string | null | undefined): string | null {
  const s = value
    ?.toLowerCase()
    .replace(/[\s_/-]+/g, ' ')
    .trim();
  return s ? s : null;
}
