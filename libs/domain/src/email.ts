import { domainToASCII } from 'node:url';

/** An e-mail address as mail systems read it (RFC 5321/5322, with UTF-8 local parts as RFC 6531/6532 allow). */
export interface ParsedEmail {
  syntaxValid: boolean;
  /** Why the syntax is not valid (null when it is). */
  reason: string | null;
  /** The local part as given (case is significant there). */
  local: string;
  /** The domain in ASCII (IDN labels as punycode), lower-cased; null when there is none to speak of. */
  domain: string | null;
  /** `local@domain` with the ASCII, lower-cased domain; the trimmed input when the syntax is not valid. */
  normalized: string;
}

/** RFC 5322 atext, plus any non-ASCII character (RFC 6532). */
const ATEXT = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-\u0080-\u{10FFFF}]+$/u;
/** RFC 5322 qtext and quoted-pairs inside a quoted local part (printable ASCII, and UTF-8). */
const QUOTED = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e\u0080-\u{10FFFF}]|\\[\x20-\x7e])*"$/u;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

const octets = (s: string): number => Buffer.byteLength(s, 'utf8');

function invalid(input: string, reason: string, local = '', domain: string | null = null): ParsedEmail {
  return { syntaxValid: false, reason, local, domain, normalized: input };
}

/** The last `@` separates the domain: a quoted local part may itself contain `@`. */
export function parseEmail(raw: string): ParsedEmail {
  const input = raw.trim();
  const at = input.lastIndexOf('@');
  if (at < 0) return invalid(input, 'has no @');
  const local = input.slice(0, at);
  const rawDomain = input.slice(at + 1);
  if (local === '') return invalid(input, 'has nothing before the @');
  if (rawDomain === '') return invalid(input, 'has no domain after the @', local);
  if (octets(local) > 64) return invalid(input, 'has a local part longer than 64 octets', local);
  if (local.startsWith('"')) {
    if (!QUOTED.test(local)) return invalid(input, 'has a badly quoted local part', local);
  } else {
    const atoms = local.split('.');
    if (atoms.some((a) => a === ''))
      return invalid(input, 'has a dot at the start or end of the local part, or two in a row', local);
    if (!atoms.every((a) => ATEXT.test(a)))
      return invalid(input, 'has a character the local part cannot have unquoted', local);
  }
  if (rawDomain.startsWith('[')) return invalid(input, 'has an address literal instead of a domain name', local);
  const domain = domainToASCII(rawDomain.replace(/\.$/, '')).toLowerCase();
  if (domain === '') return invalid(input, 'has a domain that is not a valid host name', local);
  const labels = domain.split('.');
  if (labels.length < 2) return invalid(input, 'has a domain without a top-level domain', local, domain);
  if (domain.length > 253 || !labels.every((l) => LABEL.test(l))) {
    return invalid(input, 'has a domain that is not a valid host name', local, domain);
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1]!))
    return invalid(input, 'has a numeric top-level domain', local, domain);
  const normalized = `${local}@${domain}`;
  if (octets(normalized) > 254) return invalid(input, 'is longer than 254 octets', local, domain);
  return { syntaxValid: true, reason: null, local, domain, normalized };
}
