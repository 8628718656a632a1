import { validatePhoneNumberLength } from 'libphonenumber-js/max';
import { isDomainError, parsePhone, type ParsedPhone } from '@dossier/domain';
import type { PhoneInput, PhoneResultItem, PhoneValidationError } from '@dossier/contracts';
import { ProviderError } from './provider';

/** Each lookup's parse, by its input object: the providers of one fan-out share it (~18 µs a parse). */
const parsed = new WeakMap<PhoneInput, ParsedPhone>();

/**
 * The lookup's number, parsed as the gateway parsed it (`parsePhone`, with `country` as the default
 * region). The gateway refuses unparseable input with a 400 before a job exists, so one that reaches a
 * provider anyway is `rejected`: retrying cannot help, and it says nothing about the upstream. Parsed once
 * per input object: Twilio's `appliesTo` and lookup and the libphonenumber provider are given the same one.
 */
export function parsePhoneInput(input: PhoneInput): ParsedPhone {
  const known = parsed.get(input);
  if (known) return known;
  try {
    const phone = parsePhone(input.phone, input.country);
    parsed.set(input, phone);
    return phone;
  } catch (error) {
    if (isDomainError(error)) throw new ProviderError('rejected', error.message, undefined, { cause: error });
    throw error;
  }
}

/** The fields of a phone item that are the number itself, as its parse gives them (not what is known about it). */
export function numberFields(
  phone: ParsedPhone,
): Pick<PhoneResultItem, 'e164' | 'possible' | 'country_code' | 'region' | 'national_format' | 'international_format'> {
  return {
    e164: phone.number,
    possible: phone.isPossible(),
    country_code: phone.countryCallingCode,
    region: phone.country ?? null,
    national_format: phone.formatNational(),
    international_format: phone.formatInternational(),
  };
}

/**
 * A number's validity and, when it is not valid, why (Twilio Lookup v2's `validation_errors` vocabulary):
 * libphonenumber's own length check of the number for its country (`validatePhoneNumberLength`), and, for a
 * number of a possible length, INVALID_BUT_POSSIBLE (in no range its country assigns).
 */
export function verdictOf(phone: ParsedPhone, valid: boolean): Pick<PhoneResultItem, 'valid' | 'validation_errors'> {
  if (valid) return { valid, validation_errors: [] };
  return { valid, validation_errors: [lengthError(phone) ?? 'INVALID_BUT_POSSIBLE'] };
}

function lengthError(phone: ParsedPhone): PhoneValidationError | null {
  switch (validatePhoneNumberLength(phone.number)) {
    case undefined:
      return null;
    case 'INVALID_COUNTRY':
      return 'INVALID_COUNTRY_CODE';
    case 'NOT_A_NUMBER':
      return 'NOT_A_NUMBER';
    case 'TOO_SHORT':
      return 'TOO_SHORT';
    case 'TOO_LONG':
      return 'TOO_LONG';
    default:
      return 'INVALID_LENGTH';
  }
}
