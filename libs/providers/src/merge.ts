import {
  normalizeDomain,
  normalizeEmailAddress,
  normalizePhoneNumber,
  normalizeUsername,
  phoneRegionOf,
  registerOf,
  registrationKey,
  type LookupKind,
} from '@dossier/domain';
import type {
  CompanyResultItem,
  EmailResultItem,
  PersonResultItem,
  PhoneResultItem,
  ResultItemByKind,
} from '@dossier/contracts';

/** One provider's items, with the provider's precedence (higher wins where merged values disagree). */
export interface Contribution<K extends LookupKind> {
  precedence: number;
  items: ResultItemByKind[K][];
  /** Identities of each item its fields do not show (ProviderAnswer.identities), same index as `items`. */
  identities?: string[][];
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
  if (kind === 'person') return mergePeople(ranked as Contribution<'person'>[]) as ResultItemByKind[K][];
  return mergeCompanies(ranked as Contribution<'company'>[]) as ResultItemByKind[K][];
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

/** What a phone item says about a number only as far as it is valid (none of it on an invalid one). */
const VERDICT_FIELDS: ReadonlySet<keyof PhoneResultItem> = new Set([
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

type Keyed<T> = { precedence: number; item: T; keys: string[] };

/**
 * Groups items that share any key (union-find over the keys), each group in precedence order: the
 * groups of items about one subject.
 */
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

function keyedItems<T>(ranked: Contribution<LookupKind>[], keysOf: (item: T) => string[]): Keyed<T>[] {
  return ranked.flatMap((c) =>
    (c.items as T[]).map((item, i) => ({
      precedence: c.precedence,
      item,
      keys: [...keysOf(item), ...(c.identities?.[i] ?? [])],
    })),
  );
}

function unionBy<T>(lists: T[][], keyOf: (v: T) => string = String): T[] {
  const seen = new Map<string, T>();
  for (const v of lists.flat()) if (!seen.has(keyOf(v))) seen.set(keyOf(v), v);
  return [...seen.values()];
}

/** How the values of each list field of an item compare: the same key is the same value, kept once. */
type ListKeys<T> = Partial<Record<keyof T, (value: never, item: T) => string>>;

const asWritten = (value: unknown): string => JSON.stringify(value);

/**
 * Scalars from the highest precedence that knows them; lists unioned, each value once by its list's key
 * (the first part's spelling kept); sources unioned; the best score.
 */
function mergeSubject<T extends { id: string; match_score: number; matched_on: string[]; sources: string[] }>(
  ranked: Ranked<T>,
  lists: ListKeys<T>,
): T {
  const merged = { ...ranked[0]!.item };
  for (const field of Object.keys(merged) as (keyof T)[]) {
    const keyOf = lists[field] as ((value: unknown, item: T) => string) | undefined;
    (merged as Record<keyof T, unknown>)[field] = keyOf
      ? unionBy(
          ranked.map(({ item }) => (item[field] as unknown[]).map((value) => ({ value, key: keyOf(value, item) }))),
          (v) => v.key,
        ).map((v) => v.value)
      : firstKnown(ranked, field);
  }
  merged.id = ranked[0]!.item.id;
  merged.match_score = Math.max(...ranked.map((r) => r.item.match_score));
  merged.matched_on = unionBy(ranked.map((r) => r.item.matched_on));
  merged.sources = unionSources(ranked.map((r) => r.item));
  return merged;
}

function bestFirst<T extends { match_score: number }>(items: T[]): T[] {
  return items.sort((a, b) => b.match_score - a.match_score);
}

/**
 * A person's phone number in E.164, as people are matched and listed by: one written nationally ("020
 * 7946 0018" on a London record) is read in the person's country, as the local index keyed it — the
 * same number as a vendor's +442079460018. Null when it is not one.
 */
function phoneOf(phone: string, person: PersonResultItem): string | null {
  return normalizePhoneNumber(phone, phoneRegionOf(person.locations));
}

/** A merged person lists an address, number or handle once, however its parts wrote it. */
const PERSON_LISTS: ListKeys<PersonResultItem> = {
  aliases: asWritten,
  emails: (email: string) => normalizeEmailAddress(email) ?? asWritten(email),
  phones: (phone: string, person) => phoneOf(phone, person) ?? asWritten(phone),
  usernames: normalizeUsername,
  accounts: asWritten,
  locations: asWritten,
};

/**
 * A username presence item: no name, found through the username alone. Any other item without a name (a
 * vendor's profile with none) joins its subject by e-mail, phone or identity like any person, and a
 * subject still without a name is left out: only a presence item may have none (API.md).
 */
function isPresence(p: PersonResultItem): boolean {
  return p.full_name === null && p.matched_on.every((field) => field === 'username');
}

/**
 * People are one subject when they share a normalised e-mail, an E.164 phone (one written nationally read
 * in the person's country, as the index keys it) or an identity (the item's
 * id — its (source, external id) — or one the provider passed). A username presence item (no name) puts
 * its accounts on the best person whose usernames hold that handle, or stays on its own (API.md).
 */
function mergePeople(ranked: Contribution<'person'>[]): PersonResultItem[] {
  const keyed = keyedItems<PersonResultItem>(ranked, (p) => [
    `id:${p.id}`,
    ...p.emails.flatMap((e) => keyOrNone('email', normalizeEmailAddress(e))),
    ...p.phones.flatMap((n) => keyOrNone('phone', phoneOf(n, p))),
  ]);
  const people = groupsOf(keyed.filter((k) => !isPresence(k.item)))
    .map((g) => mergeSubject(g, PERSON_LISTS))
    .filter((p) => p.full_name !== null);
  bestFirst(people);
  const presence = keyed.filter((k) => isPresence(k.item)).map((k) => k.item);
  const alone: PersonResultItem[] = [];
  for (const item of presence) {
    const handles = new Set(item.usernames.map(normalizeUsername));
    const holder = people.find((p) => p.usernames.some((u) => handles.has(normalizeUsername(u))));
    if (!holder) {
      alone.push(item);
      continue;
    }
    holder.accounts = unionBy([holder.accounts, item.accounts], (a) => JSON.stringify(a));
    holder.matched_on = unionBy([holder.matched_on, item.matched_on]);
    holder.sources = unionBy([holder.sources, item.sources]);
  }
  return bestFirst([...people, ...alone]);
}

/**
 * Companies are one subject when they share a registration number in a register (registerOf: `us_de`,
 * `US-DE` and "Delaware" are one, "England and Wales", "Scotland" and `GB` one, Delaware and New York
 * two), keyed as that register writes it (`SC12345` is `SC012345` in GB) — or an LEI, or a domain.
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
  return bestFirst(groupsOf(keyed).map((g) => mergeSubject(g, {})));
}

function keyOrNone(prefix: string, value: string | null): string[] {
  return value ? [`${prefix}:${value}`] : [];
}
