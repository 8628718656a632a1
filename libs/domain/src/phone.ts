import { DomainError } from './errors';
import { isSupportedCountry, ParseError, parsePhoneNumberWithError, PhoneNumber } from 'libphonenumber-js/max';

/** A parsed phone number (libphonenumber-js with the `max` metadata, so number types are known). */
export type ParsedPhone = PhoneNumber;

/** Longer input is rejected before parsing: no phone number, even with an extension, comes close. */
export const PHONE_INPUT_MAX_LENGTH = 64;

/**
 * Parses `raw` into a phone number, or throws `DomainError('validation_error')` with a detail on
 * the field `phone` when the input cannot be read as one. `country` (ISO 3166-1 alpha-2) is the
 * default region for national-format input; an international number ignores it.
 *
 * Parseable is not valid: `+1 555 0100` parses and then reports `isValid() === false`.
 * The whole input must be the number (no surrounding text): "call +1 650 253 0000" is rejected.
 */
export function parsePhone(raw: string, country?: string): ParsedPhone {
  if (raw.trim() === '') {
    throw phoneIssue('must be a non-empty string');
  }
  if (raw.length > PHONE_INPUT_MAX_LENGTH) {
    throw phoneIssue(`must be at most ${PHONE_INPUT_MAX_LENGTH} characters`);
  }
  const region = country?.toUpperCase();
  // libphonenumber-js rejects even "+1 …" when handed a default country it has no metadata for
  // (e.g. AQ), so such a country is treated as absent.
  const defaultCountry = region !== undefined && isSupportedCountry(region) ? region : undefined;
  try {
    return parsePhoneNumberWithError(raw, { defaultCountry, extract: false });
  } catch (error) {
    if (error instanceof ParseError) {
      throw phoneIssue(issueOf(error.message, raw, region), error);
    }
    throw error;
  }
}

function issueOf(parseErrorCode: string, raw: string, region: string | undefined): string {
  switch (parseErrorCode) {
    case 'INVALID_COUNTRY':
      if (isInternational(raw)) return 'has an unknown country calling code';
      if (region !== undefined) return `needs a leading + and country code (no numbering plan is known for ${region})`;
      return 'needs a leading + and country code, or a country';
    case 'TOO_SHORT':
      return 'is too short to be a phone number';
    case 'TOO_LONG':
      return 'is too long to be a phone number';
    case 'INVALID_LENGTH':
      return 'has a length no phone number of that country has';
    default:
      return 'is not a phone number';
  }
}

function phoneIssue(issue: string, cause?: unknown): DomainError {
  return new DomainError('validation_error', `phone ${issue}`, { details: [{ field: 'phone', issue }], cause });
}

/** Whether libphonenumber knows the numbering plan of `region` (an upper-case code such as `US`; `UK` is not one). */
export function isPhoneRegion(region: string): boolean {
  return isSupportedCountry(region);
}

/** Whether `raw` is written internationally (a leading +): then no region plays a part in reading it. */
export function isInternational(raw: string): boolean {
  return raw.trim().startsWith('+');
}

/**
 * The region a nationally written number is read in, and why it is that one: said in the issue when the
 * number cannot be read there (`is not a phone number in US (read in the region of location)`).
 */
export interface PhoneRegion {
  code: string;
  /** Words after "read in": "the region of country", "the operator's default region". */
  reason: string;
}

/** The region of a number that nothing about its subject places: the operator's DEFAULT_REGION. */
export function defaultPhoneRegion(code: string): PhoneRegion {
  return { code, reason: "the operator's default region" };
}
