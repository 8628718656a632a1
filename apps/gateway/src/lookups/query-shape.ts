import { normalizeDomain, parseEmail } from '@dossier/domain';
import { HANDLE } from './lookups.schema';

/**
 * Which field of a dedicated search a generic search's `query` is (`POST /v1/search`, ADR 0051), told by its
 * shape alone, on the trimmed query. Each shape is one no value of the name field has, so a query that is
 * none of them stays the name; the shapes exclude each other, so the order of the checks decides nothing.
 */

/** Characters a phone number is written with besides its digits: a leading +, spaces, ( ) - . / */
const PHONE_SHAPE = /^\+?[0-9 ().\/-]*[0-9][0-9 ().\/-]*$/;

/**
 * A person search's `query`: `@handle` (an @ and then one handle as the username field takes it) is the
 * username; an address that the e-mail verifier calls syntax-valid, the e-mail; digits written as phone
 * numbers are (an optional leading +, spaces, parentheses, - . /), the phone; anything else the name.
 */
export function personQueryField(query: string): 'username' | 'email' | 'phone' | 'name' {
  if (query.startsWith('@') && HANDLE.test(query)) return 'username';
  if (!query.startsWith('@') && parseEmail(query).syntaxValid) return 'email';
  if (PHONE_SHAPE.test(query)) return 'phone';
  return 'name';
}

/**
 * A registration number as registries write them: at least four digits, after a prefix of at most three
 * letters (`SC012345`, `HRB 12345`, `CHE-123.456.789`), spaces and - . / between them. Its last character
 * is a digit, so it is never a domain (a top-level label of digits is none).
 */
const REGISTRATION_SHAPE = /^[A-Za-z]{0,3}[ .\/-]?[0-9](?:[ .\/-]?[0-9]){3,}$/;

/**
 * A company search's `query`: a registration number (REGISTRATION_SHAPE) is the registration number; a
 * domain or a URL on one (what the domain field takes: `acme.com`, `https://www.acme.com/about`), written
 * without spaces and without an @, the domain; anything else the company name.
 */
export function companyQueryField(query: string): 'registration_number' | 'domain' | 'company_name' {
  if (REGISTRATION_SHAPE.test(query)) return 'registration_number';
  if (!/[\s@]/.test(query) && normalizeDomain(query) !== null) return 'domain';
  return 'company_name';
}
