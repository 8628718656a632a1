import {
  DomainError,
  defaultPhoneRegion,
  locationCountryOf,
  parsePhone,
  phoneE164,
  type PhoneRegion,
} from '@dossier/domain';
import type { PhoneInput } from '@dossier/contracts';
import { parseBody } from '../http/validation';
import { companyBody, personBody, screenBody, searchBody, verifyEmailBody, verifyPhoneBody } from './lookups.schema';
import { companyQueryField, personQueryField } from './query-shape';
import type { AnyLookupRequest, LookupRequest } from './lookups.service';

/**
 * Each lookup endpoint's body, validated and mapped onto the lookup it asks for. Everything here runs
 * before anything is reserved: a bad body costs nothing.
 */

/**
 * `POST /v1/search`: `type` routes `query` to a lookup's field — for `person` and `company` the field its
 * shape says it is (query-shape.ts, ADR 0051), else the type's main one. `query` is then checked as the
 * dedicated endpoint checks that field (a person's phone read as a person search reads it, in `country`,
 * else `defaultRegion`, the operator's DEFAULT_REGION), and its errors name `query`.
 */
export function searchLookup(raw: unknown, defaultRegion: string): AnyLookupRequest {
  const { query, type, ...rest } = parseBody(searchBody, raw);
  switch (type) {
    case 'person':
    case 'username': {
      const field = type === 'username' ? 'username' : personQueryField(query);
      return renamingField(field, 'query', () => personLookup({ [field]: query, ...rest }, defaultRegion));
    }
    case 'company': {
      const field = companyQueryField(query);
      return renamingField(field, 'query', () => companyLookup({ [field]: query, ...rest }));
    }
    case 'email':
      return { kind: 'email', input: { email: query }, purpose: rest.permissible_purpose ?? null };
    case 'phone':
      return {
        kind: 'phone',
        input: phoneInput(query, rest.country, 'query'),
        purpose: rest.permissible_purpose ?? null,
      };
  }
}

/**
 * `POST /v1/search/person` (and a batch's person item). `phone` in any format becomes its E.164 form here,
 * read in searchPhoneRegion's region, so the job carries a number no worker or provider needs a region for.
 * `defaultRegion` is the operator's DEFAULT_REGION.
 */
export function personLookup(raw: unknown, defaultRegion: string): LookupRequest<'person'> {
  const { permissible_purpose, ...input } = parseBody(personBody, raw);
  const phone =
    input.phone === undefined ? {} : { phone: phoneE164(input.phone, searchPhoneRegion(input, defaultRegion)) };
  return { kind: 'person', input: { ...input, ...phone }, purpose: permissible_purpose ?? null };
}

/**
 * The region a person search's national phone is read in: its `country`, else the one country its
 * `location` names (locationCountryOf: none when its parts name several), else the operator's default.
 */
function searchPhoneRegion(
  search: { country?: string | undefined; location?: string | undefined },
  defaultRegion: string,
): PhoneRegion {
  if (search.country !== undefined) return { code: search.country, reason: 'the region of country' };
  const named = search.location === undefined ? null : locationCountryOf(search.location);
  return named === null ? defaultPhoneRegion(defaultRegion) : { code: named, reason: 'the region of location' };
}

export function companyLookup(raw: unknown): LookupRequest<'company'> {
  const { permissible_purpose, ...input } = parseBody(companyBody, raw);
  return { kind: 'company', input, purpose: permissible_purpose ?? null };
}

/**
 * `POST /v1/screen` (ADR 0064): a person or company lookup that asks the sanctions lists alone
 * (`screening: true`), reserved, charged and answered as any lookup of its kind.
 */
export function screenLookup(raw: unknown): LookupRequest<'person'> | LookupRequest<'company'> {
  const { permissible_purpose, type = 'person', name, birth_year, country } = parseBody(screenBody, raw);
  const purpose = permissible_purpose ?? null;
  const where = country === undefined ? {} : { country };
  if (type === 'company') return { kind: 'company', input: { company_name: name, ...where, screening: true }, purpose };
  const born = birth_year === undefined ? {} : { birth_year };
  return { kind: 'person', input: { name, ...born, ...where, screening: true }, purpose };
}

export function emailLookup(raw: unknown): LookupRequest<'email'> {
  const { permissible_purpose, ...input } = parseBody(verifyEmailBody, raw);
  return { kind: 'email', input, purpose: permissible_purpose ?? null };
}

export function phoneLookup(raw: unknown): LookupRequest<'phone'> {
  const b = parseBody(verifyPhoneBody, raw);
  return { kind: 'phone', input: phoneInput(b.phone, b.country, 'phone'), purpose: b.permissible_purpose ?? null };
}

/** Unparseable phone input is a 400 naming `field`, before anything is charged. */
function phoneInput(phone: string, country: string | undefined, field: string): PhoneInput {
  renamingField('phone', field, () => parsePhone(phone, country));
  return country ? { phone, country } : { phone };
}

/** Runs `check`; a validation error it throws about `from` is reported about `to`, the field the client sent. */
function renamingField<T>(from: string, to: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof DomainError && err.details) {
      throw DomainError.validation(err.details.map((d) => ({ ...d, field: d.field === from ? to : d.field })));
    }
    throw err;
  }
}
