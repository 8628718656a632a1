import type { LookupKind } from '@dossier/domain';
import { SANDBOX_CASES, type LookupInputByKind, type ResultItemByKind } from '@dossier/contracts';
import { deadlinePassed, type Provider, type ProviderAnswer } from '../provider';
import { parsePhoneInput } from '../phone-input';

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

const ANSWERS = new Map(
  SANDBOX_CASES.map((c) => [`${c.kind}:${keyOf(c.kind, c.body as LookupInputByKind[LookupKind])}`, c.items]),
);

/**
 * Test keys' only provider (ADR 0021): answers every kind from the synthetic data set, offline and
 * deterministically. `sandbox: true` keeps it out of live lookups (`providersFor`), and live
 * providers out of test ones.
 */
export const sandboxProvider: Provider = {
  id: 'sandbox',
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
    if (ctx.signal.aborted) return Promise.reject(deadlinePassed('sandbox', ctx.signal));
    const items = (ANSWERS.get(`${kind}:${keyOf(kind, input)}`) ?? []) as ResultItemByKind[K][];
    // Copies (the fan-out and the merge may annotate what they are given) that echo the input as
    // written, as the live phone and e-mail results do.
    const copies = structuredClone(items).map((item) => echo(kind, input, item));
    return Promise.resolve({ outcome: copies.length > 0 ? 'found' : 'not_found', items: copies });
  },
};
