import { domainToASCII } from 'node:url';

/** An e-mail address as mail systems read it (RFC 5321/5322, with UTF-8 local parts as RFC 6531/6532 allow). */
export interface ParsedEmail {
  syntaxValid: boolean;
  /** Why the syntax is not valid (null when it is). */
  reason: string | null;
  /**
   * The local part as mail systems compare it: case kept (it is significant there, RFC 5321 §2.4), UTF-8 in
   * NFC (RFC 6532 §3.1), and a quoted local part that needs no quotes unquoted (RFC 5321 §4.1.2).
   */
  local: string;
  /** The domain in ASCII (IDN labels as punycode), lower-cased; null when there is none to speak of. */
  domain: string | null;
  /** `local@domain` with the ASCII, lower-cased domain; the trimmed input when the syntax is not valid. */
  normalized: string;
}

/** RFC 5322 atext, plus any non-ASCII character but the C1 controls (RFC 6532). */
const ATEXT = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-\u00a0-\u{10FFFF}]+$/u;
/** RFC 5321 QcontentSMTP inside a quoted local part: qtext (printable ASCII, and UTF-8) and quoted-pairs. */
const QUOTED = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e\u00a0-\u{10FFFF}]|\\[\x20-\x7e])+"$/u;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
/** What a URL's host parser decodes or drops but no domain name has: `%`, spaces and ASCII controls. */
const URL_HOST_ONLY = /[%\x00-\x20\x7f]/;

const octets = (s: string): number => Buffer.byteLength(s, 'utf8');
/** A Dot-string: atoms of atext joined by single dots (what needs no quoting). */
const isDotString = (s: string): boolean => s.split('.').every((atom) => ATEXT.test(atom));

function invalid(input: string, reason: string, local = '', domain: string | null = null): ParsedEmail {
  return { syntaxValid: false, reason, local, domain, normalized: input };
}

/** The last `@` separates the domain: a quoted local part may itself contain `@`. */
export function parseEmail(raw: string): ParsedEmail {
  const input = raw.trim();
  const at = input.lastIndexOf('@');
  if (at < 0) return invalid(input, 'has no @');
  const rawLocal = input.slice(0, at).normalize('NFC');
  const rawDomain = input.slice(at + 1);
  if (rawLocal === '') return invalid(input, 'has nothing before the @');
  if (rawDomain === '') return invalid(input, 'has no domain after the @', rawLocal);
  if (octets(rawLocal) > 64) return invalid(input, 'has a local part longer than 64 octets', rawLocal);
  let local = rawLocal;
  if (rawLocal.startsWith('"')) {
    if (rawLocal === '""') return invalid(input, 'has an empty quoted local part', rawLocal);
    if (!QUOTED.test(rawLocal)) return invalid(input, 'has a badly quoted local part', rawLocal);
    // `"john.doe"` is `john.doe`: quotes that protect nothing are dropped, as RFC 5321 asks of senders.
    const unquoted = rawLocal.slice(1, -1).replace(/\\(.)/g, '$1');
    if (isDotString(unquoted)) local = unquoted;
  } else {
    const atoms = rawLocal.split('.');
    if (atoms.some((a) => a === ''))
      return invalid(input, 'has a dot at the start or end of the local part, or two in a row', rawLocal);
    if (!atoms.every((a) => ATEXT.test(a)))
      return invalid(input, 'has a character the local part cannot have unquoted', rawLocal);
  }
  if (rawDomain.startsWith('[')) return invalid(input, 'has an address literal instead of a domain name', local);
  // domainToASCII parses a URL's host: it decodes percent-escapes and drops tabs and line breaks, which
  // would make `user@ex%61mple.com` or a domain with a line break in it a valid address at another domain.
  const domain = URL_HOST_ONLY.test(rawDomain) ? '' : domainToASCII(rawDomain.replace(/\.$/, '')).toLowerCase();
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
