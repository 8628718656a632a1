import { normalizeDomain, registerOf, registrationKey, type LookupKind } from '@dossier/domain';
import {
  EMAIL_SCORES,
  type CompanyResultItem,
  type EmailResultItem,
  type PhoneResultItem,
  type ProviderItemByKind,
  type ResultItemByKind,
} from '@dossier/contracts';
import { bestFirst, firstKnown, keyOrNone, mergeSubject, unionSources, type Ranked } from './merge-fields';
import { resolvePeople, type PersonCandidate, type SharedIdentifiers } from './identity/resolve-people';
import { mergedFieldSources } from './field-sources';

/** One provider's items, with the provider's precedence (higher wins where merged values disagree). */
export interface Contribution<K extends LookupKind> {
  precedence: number;
  items: ProviderItemByKind[K][];
  /** Identities of each item its fields do not show (ProviderAnswer.identities), same index as `items`. */
  identities?: string[][];
}

/**
 * Merges what several providers said about the same subject into the items the client gets (API.md:
 * "a phone or e-mail lookup always answers exactly one item"; a merged item lists every source). People
 * are resolved by identity (identity/resolve-people.ts; `shared`: the identifiers the local index says link
 * no one by themselves); companies by registration number, LEI or domain.
 */
export function mergeItems<K extends LookupKind>(
  kind: K,
  contributions: Contribution<K>[],
  shared?: SharedIdentifiers,
): ResultItemByKind[K][] {
  const ranked = [...contributions].sort((a, b) => b.precedence - a.precedence);
  if (kind === 'phone') return oneItem(ranked as Contribution<'phone'>[], mergePhone) as ResultItemByKind[K][];
  if (kind === 'email') return oneItem(ranked as Contribution<'email'>[], mergeEmail) as ResultItemByKind[K][];
  if (kind === 'person')
    return resolvePeople(personCandidates(ranked as Contribution<'person'>[]), shared) as ResultItemByKind[K][];
  return mergeCompanies(ranked as Contribution<'company'>[]) as ResultItemByKind[K][];
}

/** Each provider's person records, with its precedence and the identities it passed for each. */
export function personCandidates(contributions: readonly Contribution<'person'>[]): PersonCandidate[] {
  return contributions.flatMap((c) =>
    c.items.map((item, i) => ({ precedence: c.precedence, item, identities: c.identities?.[i] ?? [] })),
  );
}

function oneItem<K extends 'phone' | 'email'>(
  ranked: Contribution<K>[],
  merge: (ranked: { precedence: number; item: ProviderItemByKind[K] }[]) => ResultItemByKind[K],
): ResultItemByKind[K][] {
  const items = ranked.flatMap((c) => c.items.map((item) => ({ precedence: c.precedence, item })));
  return items.length === 0 ? [] : [merge(items)];
}

/** What a phone item says about a number only as far as it is valid (none of it on an invalid one). */
const VERDICT_FIELDS: ReadonlySet<keyof PhoneResultItem> = new Set([
  'validation_errors',
  'possible',
  'location',
  'carrier',
  'line_type',
  'time_zones',
] as const);

/**
 * Live line data (Twilio) wins over range data (libphonenumber) field by field, where it knows the field.
 * `valid` is the highest precedence's verdict, and what follows from it (possible, location, carrier,
 * line type, time zones) comes only from items that reach the same verdict: a number Twilio finds not
 * valid shows no location or carrier libphonenumber gave it as valid (ADR 0039).
 */
function mergePhone(ranked: Ranked<PhoneResultItem>): PhoneResultItem {
  const merged = { ...ranked[0]!.item };
  const agreeing = ranked.filter(({ item }) => item.valid === merged.valid);
  for (const field of Object.keys(merged) as (keyof PhoneResultItem)[]) {
    (merged as Record<string, unknown>)[field] = firstKnown(VERDICT_FIELDS.has(field) ? agreeing : ranked, field);
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
 * checks and the SMTP probe first, a vendor's opinion (Hunter) only where neither could tell. The mailbox
 * facts (catch-all, full, disabled, connectable) come from the highest precedence that knows them — the SMTP
 * probe first; null where none does. `sub_status` goes with the verdict (the highest precedence's where none
 * could tell), and `score` is always its sub-status's (EMAIL_SCORES, ADR 0057).
 */
function mergeEmail(ranked: Ranked<EmailResultItem>): EmailResultItem {
  const items = ranked.map((r) => r.item);
  const top = Math.max(...ranked.filter((r) => r.item.deliverability !== 'unknown').map((r) => r.precedence));
  const verdict = ranked
    .filter((r) => r.precedence === top && r.item.deliverability !== 'unknown')
    .sort((a, b) => SEVERITY[b.item.deliverability] - SEVERITY[a.item.deliverability])[0]?.item;
  const subStatus = (verdict ?? ranked[0]!.item).sub_status;
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
    is_catch_all: firstKnown(ranked, 'is_catch_all'),
    has_full_inbox: firstKnown(ranked, 'has_full_inbox'),
    is_disabled: firstKnown(ranked, 'is_disabled'),
    can_connect_smtp: firstKnown(ranked, 'can_connect_smtp'),
    score: EMAIL_SCORES[subStatus],
    sub_status: subStatus,
  };
}

/**
 * Companies are one subject when they share a registration number in a register (registerOf: `us_de`,
 * `US-DE` and "Delaware" are one, "England and Wales", "Scotland" and `GB` one, Delaware and New York
 * two), keyed as that register writes it (`SC12345` is `SC012345` in GB) — or an LEI, or a domain. Each
 * field shown says which of the group's records gave that value (mergedFieldSources, ADR 0068).
 */
function mergeCompanies(ranked: Contribution<'company'>[]): CompanyResultItem[] {
  const keyed = keyedItems<CompanyResultItem>(ranked, (c) => {
    const where = registerOf(c.jurisdiction ?? c.country ?? '');
    const number = c.registration_number ? registrationKey(c.registration_number, where) : '';
    return [
      `id:${c.id}`,
      ...(where && number ? [`reg:${where}:${number}`] : []),
      ...keyOrNone('domain', c.domain ? normalizeDomain(c.domain) : null),
    ];
  });
  return bestFirst(
    groupsOf(keyed).map((group) => {
      const merged = mergeSubject(group, {});
      return { ...merged, field_sources: mergedFieldSources(group, merged) };
    }),
  );
}

type Keyed<T> = { precedence: number; item: T; keys: string[] };

/** Groups items that share any key (union-find over the keys), each group in precedence order. */
function groupsOf<T>(keyed: Keyed<T>[]): Ranked<T>[] {
  const parent = keyed.map((_, i) => i);
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i]!)));
  const owner = new Map<string, number>();
  for (const [i, { keys }] of keyed.entries()) {
    for (const key of keys) {
      const j = owner.get(key);
      if (j === undefined) owner.set(key, i);
      else parent[root(i)] = root(j);
    }
  }
  const groups = new Map<number, Ranked<T>>();
  for (const [i, { precedence, item }] of keyed.entries()) {
    const r = root(i);
    groups.set(r, [...(groups.get(r) ?? []), { precedence, item }]);
  }
  return [...groups.values()];
}

function keyedItems<T>(ranked: Contribution<'company'>[], keysOf: (item: T) => string[]): Keyed<T>[] {
  return ranked.flatMap((c) =>
    (c.items as T[]).map((item, i) => ({
      precedence: c.precedence,
      item,
      keys: [...keysOf(item), ...(c.identities?.[i] ?? [])],
    })),
  );
}
