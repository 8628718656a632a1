import type { LookupKind } from '@dossier/domain';
import type { EmailResultItem, PhoneResultItem, ResultItemByKind } from '@dossier/contracts';

/** One provider's items, with the provider's precedence (higher wins where merged values disagree). */
export interface Contribution<K extends LookupKind> {
  precedence: number;
  items: ResultItemByKind[K][];
}

/**
 * Merges what several providers said about the same subject into the items the client gets (API.md:
 * "a phone or e-mail lookup always answers exactly one item"; a merged item lists every source).
 * Person and company items are returned as they are, best first (their subject matching is the
 * person/company search's).
 */
export function mergeItems<K extends LookupKind>(kind: K, contributions: Contribution<K>[]): ResultItemByKind[K][] {
  const ranked = [...contributions].sort((a, b) => b.precedence - a.precedence);
  if (kind === 'phone') return oneItem(ranked as Contribution<'phone'>[], mergePhone) as ResultItemByKind[K][];
  if (kind === 'email') return oneItem(ranked as Contribution<'email'>[], mergeEmail) as ResultItemByKind[K][];
  return ranked.flatMap((c) => c.items).sort((a, b) => scoreOf(b) - scoreOf(a));
}

function oneItem<K extends 'phone' | 'email'>(
  ranked: Contribution<K>[],
  merge: (ranked: { precedence: number; item: ResultItemByKind[K] }[]) => ResultItemByKind[K],
): ResultItemByKind[K][] {
  const items = ranked.flatMap((c) => c.items.map((item) => ({ precedence: c.precedence, item })));
  return items.length === 0 ? [] : [merge(items)];
}

type Ranked<T> = { precedence: number; item: T }[];

/**
 * The value of the highest-precedence item where it is known (not null, not `unknown`, not an empty
 * string or list): a provider leaves a field it does not know so (Twilio has no time zones or
 * international format), and a lower precedence's value stands there.
 */
function firstKnown<T, F extends keyof T>(ranked: Ranked<T>, field: F): T[F] {
  const known = ranked.find(({ item }) => {
    const v = item[field];
    return v !== null && v !== 'unknown' && v !== '' && !(Array.isArray(v) && v.length === 0);
  });
  return (known ?? ranked[0]!).item[field];
}

function unionSources(items: { sources: string[] }[]): string[] {
  return [...new Set(items.flatMap((i) => i.sources))];
}

/** Live line data (Twilio) wins over range data (libphonenumber) field by field, where it knows the field. */
function mergePhone(ranked: Ranked<PhoneResultItem>): PhoneResultItem {
  const merged = { ...ranked[0]!.item };
  for (const field of Object.keys(merged) as (keyof PhoneResultItem)[]) {
    (merged as Record<string, unknown>)[field] = firstKnown(ranked, field);
  }
  merged.sources = unionSources(ranked.map((r) => r.item));
  return merged;
}

/** From the most to the least definite: a refused mailbox beats a risky one beats an accepted one. */
const SEVERITY: Record<EmailResultItem['deliverability'], number> = {
  undeliverable: 3,
  risky: 2,
  deliverable: 1,
  unknown: 0,
};

/**
 * Facts add up (any list that marks the address disposable, free or a role; every associated account);
 * the verdict comes from the highest precedence that could tell, the most severe one there: the offline
 * checks and the SMTP probe first, a vendor's opinion (Hunter) only where neither could tell.
 */
function mergeEmail(ranked: Ranked<EmailResultItem>): EmailResultItem {
  const items = ranked.map((r) => r.item);
  const top = Math.max(...ranked.filter((r) => r.item.deliverability !== 'unknown').map((r) => r.precedence));
  const verdict = ranked
    .filter((r) => r.precedence === top && r.item.deliverability !== 'unknown')
    .sort((a, b) => SEVERITY[b.item.deliverability] - SEVERITY[a.item.deliverability])[0]?.item;
  const accounts = new Map<string, EmailResultItem['accounts'][number]>();
  for (const account of items.flatMap((i) => i.accounts)) {
    accounts.set(`${account.service}\u0000${account.username ?? ''}\u0000${account.url ?? ''}`, account);
  }
  return {
    email: firstKnown(ranked, 'email'),
    normalized: firstKnown(ranked, 'normalized'),
    syntax_valid: firstKnown(ranked, 'syntax_valid'),
    domain: firstKnown(ranked, 'domain'),
    mx_records: firstKnown(ranked, 'mx_records'),
    deliverability: verdict?.deliverability ?? 'unknown',
    reason: verdict ? verdict.reason : firstKnown(ranked, 'reason'),
    disposable: items.some((i) => i.disposable),
    free_provider: items.some((i) => i.free_provider),
    role_account: items.some((i) => i.role_account),
    did_you_mean: firstKnown(ranked, 'did_you_mean'),
    accounts: [...accounts.values()],
    sources: unionSources(items),
  };
}

function scoreOf(item: object): number {
  const s = (item as { match_score?: unknown }).match_score;
  return typeof s === 'number' ? s : 0;
}
