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
import { companyBody, personBody, searchBody, verifyEmailBody, verifyPhoneBody } from './lookups.schema';
import type { AnyLookupRequest, LookupRequest } from './lookups.service';

/**
 * Each lookup endpoint's body, validated and mapped onto the lookup it asks for. Everything here runs
 * before anything is reserved: a bad body costs nothing.
 */

/** `POST /v1/search`: `type` routes `query` to a lookup's main field. */
export function searchLookup(raw: unknown): AnyLookupRequest {
  const b = parseBody(searchBody, raw);
  const purpose = b.permissible_purpose ?? null;
  const country = b.country ? { country: b.country } : {};
  // `query` is checked as the dedicated endpoint checks its main field, and errors name `query`.
  switch (b.type) {
    case 'person':
      return {
        kind: 'person',
        input: { ...asQuery((r) => parseBody(personBody, r), 'name', b.query), ...country },
        purpose,
      };
    case 'username':
      return {
        kind: 'person',
        input: { ...asQuery((r) => parseBody(personBody, r), 'username', b.query), ...country },
        purpose,
      };
    case 'company':
      return {
        kind: 'company',
        input: { ...asQuery((r) => parseBody(companyBody, r), 'company_name', b.query), ...country },
        purpose,
      };
    case 'email':
      return { kind: 'email', input: { email: b.query }, purpose };
    case 'phone':
      return { kind: 'phone', input: phoneInput(b.query, b.country, 'query'), purpose };
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

/** The generic search's `query` as one field of a dedicated body, validated by that body's schema. */
function asQuery<T extends object>(parse: (raw: unknown) => T, field: string, query: string): T {
  return renamingField(field, 'query', () => parse({ [field]: query }));
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
