import type { LookupKind } from '@dossier/domain';
import { SANDBOX_CASES, SANDBOX_UNLISTED, type LookupInputByKind, type ResultItemByKind } from '@dossier/contracts';
import { emailItem } from '../email-item';
import { deadlinePassed, type Provider, type ProviderAnswer } from '../provider';
import { numberFields, parsePhoneInput } from '../phone-input';

const SANDBOX = 'sandbox';

const words = (s: string | undefined): string | null => s?.trim().toLowerCase().replace(/\s+/g, ' ') || null;

/** What an input is matched on: the parsed number, the address, the name, the company's name or number. */
function keyOf(kind: LookupKind, input: LookupInputByKind[LookupKind]): string | null {
  switch (kind) {
    case 'phone':
      return parsePhoneInput(input as LookupInputByKind['phone']).number;
    case 'email':
      return words((input as LookupInputByKind['email']).email);
    case 'person':
      return words((input as LookupInputByKind['person']).name);
    case 'company': {
      const c = input as LookupInputByKind['company'];
      return words(c.company_name) ?? words(c.registration_number);
    }
  }
}

function echo<K extends LookupKind>(
  kind: K,
  input: LookupInputByKind[K],
  item: ResultItemByKind[K],
): ResultItemByKind[K] {
  if (kind === 'phone') return { ...item, input: (input as LookupInputByKind['phone']).phone };
  if (kind === 'email') return { ...item, email: (input as LookupInputByKind['email']).email };
  return item;
}

/** The listed answers by input; the documented examples of an unlisted input are answered as any other one. */
const ANSWERS = new Map(
  SANDBOX_CASES.filter((c) => c.outcome !== 'unknown').map((c) => [
    `${c.kind}:${keyOf(c.kind, c.body as LookupInputByKind[LookupKind])}`,
    { outcome: c.outcome, items: c.items },
  ]),
);

/**
 * The one item a phone or e-mail lookup always answers (API.md), for an input the data set does not list:
 * what the input itself shows (the number's forms and validity, the address's syntax), nothing known about
 * it. Null for a person or company: nobody is found.
 */
function unlisted<K extends LookupKind>(kind: K, input: LookupInputByKind[K]): ResultItemByKind[K] | null {
  if (kind === 'phone') {
    const phone = input as LookupInputByKind['phone'];
    const parsed = parsePhoneInput(phone);
    const item: ResultItemByKind['phone'] = {
      input: phone.phone,
      ...numberFields(parsed),
      valid: parsed.isValid(),
      location: null,
      carrier: null,
      line_type: 'unknown',
      time_zones: [],
      sources: [SANDBOX],
    };
    return item as ResultItemByKind[K];
  }
  if (kind === 'email') {
    const email = (input as LookupInputByKind['email']).email;
    return emailItem(email, SANDBOX, { reason: SANDBOX_UNLISTED }) as ResultItemByKind[K];
  }
  return null;
}

/**
 * Test keys' only provider (ADR 0021): answers every kind from the synthetic data set, offline and
 * deterministically — a phone number or address not listed with the one item a live key gets too
 * (`unknown`: nothing known about it), a person or company not listed with nobody (`not_found`). `sandbox: true` keeps it out of live lookups (`providersFor`), and live
 * providers out of test ones.
 */
export const sandboxProvider: Provider = {
  id: SANDBOX,
  kinds: ['person', 'company', 'email', 'phone'],
  configKeys: [],
  defaultTimeoutMs: 1000,
  transport: 'none',
  // A test key's one item for every kind: never cut at the caller's wait (it answers at once anyway).
  deadline: 'own',
  sandbox: true,
  isConfigured: () => true,
  lookup<K extends LookupKind>(
    kind: K,
    input: LookupInputByKind[K],
    ctx: { signal: AbortSignal },
  ): Promise<ProviderAnswer<K>> {
    if (ctx.signal.aborted) return Promise.reject(deadlinePassed(SANDBOX, ctx.signal));
    const listed = ANSWERS.get(`${kind}:${keyOf(kind, input)}`);
    if (!listed) {
      const item = unlisted(kind, input);
      return Promise.resolve(
        item ? { outcome: 'unknown', items: [item], detail: SANDBOX_UNLISTED } : { outcome: 'not_found', items: [] },
      );
    }
    // Copies (the fan-out and the merge may annotate what they are given) that echo the input as
    // written, as the live phone and e-mail results do.
    const copies = structuredClone(listed.items as ResultItemByKind[K][]).map((item) => echo(kind, input, item));
    return Promise.resolve({ outcome: listed.outcome === 'found' ? 'found' : 'not_found', items: copies });
  },
};
