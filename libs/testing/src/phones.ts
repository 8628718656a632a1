import { getExampleNumber, parsePhoneNumberWithError, type CountryCode } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/examples.mobile.json';

/**
 * The `n`th generated phone number of a country, for tests that need many distinct, parseable numbers:
 * libphonenumber's example mobile number of that country with its last five digits replaced by `n` (so
 * numbers of one country differ for n below 100,000). Null for a country without an example. As written
 * there: E.164 and the national format, which reads back to the same number in that country.
 */
export function generatedPhone(country: string, n: number): { e164: string; national: string } | null {
  const example = getExampleNumber(country as CountryCode, examples);
  if (!example) return null;
  const digits = example.nationalNumber;
  const tail = String(n % 100_000).padStart(5, '0');
  const national = digits.length > 5 ? digits.slice(0, -5) + tail : digits;
  try {
    const number = parsePhoneNumberWithError(national, country as CountryCode);
    return number.isPossible() ? { e164: number.number, national: number.formatNational() } : null;
  } catch {
    return null;
  }
}
