import { DomainError, parsePhone } from '@dossier/domain';
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

export function personLookup(raw: unknown): LookupRequest<'person'> {
  const { permissible_purpose, ...input } = parseBody(personBody, raw);
  // The body has no country: a national number is refused without sending the client to one.
  if (input.phone !== undefined) parsePhone(input.phone, undefined, { countryField: false });
  return { kind: 'person', input, purpose: permissible_purpose ?? null };
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
