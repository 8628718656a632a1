import { isDomainError, parsePhone, type ParsedPhone } from '@dossier/domain';
import type { PhoneInput, PhoneResultItem } from '@dossier/contracts';
import { ProviderError } from './provider';

/**
 * The lookup's number, parsed as the gateway parsed it (`parsePhone`, with `country` as the default
 * region). The gateway refuses unparseable input with a 400 before a job exists, so one that reaches a
 * provider anyway is `rejected`: retrying cannot help, and it says nothing about the upstream.
 */
export function parsePhoneInput(input: PhoneInput): ParsedPhone {
  try {
    return parsePhone(input.phone, input.country);
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
