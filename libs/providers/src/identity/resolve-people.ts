import {
  normalizeEmailAddress,
  normalizePhoneNumber,
  normalizeUsername,
  phoneRegionOf,
  type IdentifierHolder,
  type LocalIndex,
} from '@dossier/domain';
import type { PersonRecordItem, PersonResultItem, SharedIdentifier } from '@dossier/contracts';
import { isRoleLocalPart } from '../email-checks';
import { asWritten, bestFirst, keyOrNone, mergeSubject, unionBy, type ListKeys } from '../merge-fields';
import { conflictOf } from './person-conflict';

/**
 * Who is the same person (API.md, "Result items"). Records are one subject only when they share a strong
 * identifier — an e-mail address, a phone number, the same record, an identity a provider passed — and
 * nothing about them conflicts (person-conflict.ts). Clustering never chains through a conflict: two
 * groups join only when every record of one is compatible with every record of the other. An identifier
 * that different people hold — a household line, `info@`, a switchboard — links no one by itself. Every
 * merge says which records joined and through what (`linked_by`); every pair kept apart though it shares
 * an identifier says why (`kept_apart`). ADR 0046.
 */

/** One provider's record of a person, with its provider's precedence and the identities it passed. */
export interface PersonCandidate {
  precedence: number;
  item: PersonRecordItem;
  /** Identities the item's fields do not show (`pdl:<id>`): ProviderAnswer.identities. */
  identities: readonly string[];
}

/** Identifiers (`phone:+1…`, `email:…`) that link no one by themselves, each with why. */
export type SharedIdentifiers = ReadonlyMap<string, string>;

/**
 * An identifier held by more records of the local index than this is a switchboard or a shared inbox, whoever
 * the records are.
 */
export const MAX_HOLDERS = 5;

/** Entries in one item's `kept_apart`, at most: the first, by the order records were ranked. */
const MAX_KEPT_APART = 10;

/** A phone as person items show and compare it: E.164, one written nationally read in the person's country. */
function e164Of(phone: string, person: PersonRecordItem): string {
  return normalizePhoneNumber(phone, phoneRegionOf(person.locations)) ?? phone;
}

/** The record with its phones in E.164 (as phone lookups show them), each once. */
function withE164(person: PersonRecordItem): PersonRecordItem {
  return { ...person, phones: unionBy([person.phones.map((p) => e164Of(p, person))]) };
}

/** A record's strong identifiers, as keys: its own id, its e-mail addresses and phones, the identities passed. */
function keysOf(person: PersonRecordItem, identities: readonly string[]): string[] {
  return unionBy([
    [`id:${person.id}`],
    person.emails.flatMap((e) => keyOrNone('email', normalizeEmailAddress(e))),
    person.phones.flatMap((n) => keyOrNone('phone', normalizePhoneNumber(n))),
    [...identities],
  ]);
}

function identifierOf(key: string): SharedIdentifier {
  const at = key.indexOf(':');
  const prefix = key.slice(0, at);
  if (prefix === 'email' || prefix === 'phone') return { type: prefix, value: key.slice(at + 1) };
  return { type: 'identity', value: prefix === 'id' ? key.slice(at + 1) : key };
}

/** How an identifier reads in a reason: "the phone +12025550142". */
function describe(key: string): string {
  const { type, value } = identifierOf(key);
  return type === 'identity' ? `the identity ${value}` : `the ${type} ${value}`;
}

/** Why a role address (`info@`, `sales@`) links no one; null for any other key. */
function roleReason(key: string): string | null {
  if (!key.startsWith('email:')) return null;
  const local = key.slice('email:'.length).split('@')[0] ?? '';
  return isRoleLocalPart(local) ? `${describe(key)} is a role address, shared by whoever holds the role` : null;
}

/** Whether any two of these people conflict. */
function anyConflict(people: readonly Parameters<typeof conflictOf>[0][]): boolean {
  return people.some((a, i) => people.slice(i + 1).some((b) => conflictOf(a, b) !== null));
}

/**
 * The e-mail and phone keys (without their prefix) that two or more candidates share: the ones that could
 * link records, and so the ones whose holders in the local index are worth knowing.
 */
export function linkingIdentifiers(candidates: readonly PersonCandidate[]): { emails: string[]; phones: string[] } {
  const count = new Map<string, number>();
  for (const c of candidates)
    for (const key of keysOf(withE164(c.item), c.identities)) count.set(key, (count.get(key) ?? 0) + 1);
  const shared = [...count].filter(([, n]) => n > 1).map(([key]) => key);
  const bare = (prefix: string) => shared.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  return { emails: bare('email:'), phones: bare('phone:') };
}

/**
 * Which of the identifiers candidates share link no one by themselves, from their holders in the local
 * index (the operator's imported records): one held by more than MAX_HOLDERS records, or by records that
 * conflict (a household line, a father and son of one name). If the index cannot be asked, none of them
 * links anyone: "could not check" keeps records apart, never together.
 */
export async function sharedIdentifiers(
  candidates: readonly PersonCandidate[],
  index: Pick<LocalIndex, 'holdersOf'>,
): Promise<Map<string, string>> {
  const { emails, phones } = linkingIdentifiers(candidates);
  const shared = new Map<string, string>();
  if (emails.length === 0 && phones.length === 0) return shared;
  const keys = [...emails.map((e) => `email:${e}`), ...phones.map((p) => `phone:${p}`)];
  let holders: IdentifierHolder[];
  try {
    holders = await index.holdersOf({ email_keys: emails, phone_keys: phones }, MAX_HOLDERS + 1);
  } catch {
    for (const key of keys)
      shared.set(key, `${describe(key)} could not be checked against the local index, so it links no one by itself`);
    return shared;
  }
  const byKey = new Map<string, IdentifierHolder[]>();
  for (const h of holders) {
    const key = `${h.field}:${h.key}`;
    byKey.set(key, [...(byKey.get(key) ?? []), h]);
  }
  for (const [key, held] of byKey) {
    if (held.length > MAX_HOLDERS)
      shared.set(
        key,
        `${describe(key)} is held by more than ${MAX_HOLDERS} records in the local index (a switchboard or a shared inbox), so it links no one by itself`,
      );
    else if (anyConflict(held))
      shared.set(
        key,
        `${describe(key)} is held by records of different people in the local index (a household or a shared line), so it links no one by itself`,
      );
  }
  return shared;
}

interface Ranked {
  precedence: number;
  item: PersonRecordItem;
  keys: string[];
}

/** Two records that share identifiers but stay apart, and why. */
interface Apart {
  a: number;
  b: number;
  keys: string[];
  reason: string;
}

/** A record joined to another through these identifiers. */
interface Link {
  record: number;
  to: number;
  keys: string[];
}

/**
 * The clusters of records that are one person each (indexes into `records`, in their order), the links that
 * joined them, and the pairs that share identifiers but were kept apart.
 */
function clusterRecords(
  records: readonly Ranked[],
  shared: SharedIdentifiers,
): { clusters: number[][]; links: Link[]; apart: Apart[] } {
  const memo = new Map<number, string | null>();
  const conflict = (i: number, j: number): string | null => {
    const at = Math.min(i, j) * records.length + Math.max(i, j);
    if (!memo.has(at)) memo.set(at, conflictOf(records[i]!.item, records[j]!.item));
    return memo.get(at)!;
  };

  const holders = new Map<string, number[]>();
  for (const [i, r] of records.entries()) for (const key of r.keys) holders.set(key, [...(holders.get(key) ?? []), i]);
  const weak = new Map<string, string>();
  const pairs = new Map<number, { a: number; b: number; keys: string[] }>();
  for (const [key, held] of holders) {
    if (held.length < 2) continue;
    if (held.length > MAX_HOLDERS) {
      // A switchboard or a shared inbox in this very answer: it links no one, and is not said on every pair.
      weak.set(key, `${describe(key)} is held by ${held.length} records here, so it links no one by itself`);
      continue;
    }
    const conflicting = held.some((i, n) => held.slice(n + 1).some((j) => conflict(i, j) !== null));
    const reason =
      shared.get(key) ??
      roleReason(key) ??
      (conflicting ? `${describe(key)} is held here by people who cannot be one, so it links no one by itself` : null);
    if (reason !== null) weak.set(key, reason);
    for (const [n, a] of held.entries())
      for (const b of held.slice(n + 1)) {
        const at = a * records.length + b;
        const pair = pairs.get(at) ?? { a, b, keys: [] };
        pair.keys.push(key);
        pairs.set(at, pair);
      }
  }

  const apart: Apart[] = [];
  let edges: { a: number; b: number; keys: string[]; strong: string[] }[] = [];
  for (const pair of pairs.values()) {
    const why = conflict(pair.a, pair.b);
    const strong = pair.keys.filter((k) => !weak.has(k));
    if (why !== null) apart.push({ ...pair, reason: why });
    else if (strong.length === 0) apart.push({ ...pair, reason: weak.get(pair.keys[0]!)! });
    else edges.push({ ...pair, strong });
  }
  // A record linked to two people who cannot be one (a vendor's "John Smith" sharing a phone with the father
  // and an e-mail with the son) could be either: it is put with neither.
  const neighbours = new Map<number, number[]>();
  for (const { a, b } of edges) {
    neighbours.set(a, [...(neighbours.get(a) ?? []), b]);
    neighbours.set(b, [...(neighbours.get(b) ?? []), a]);
  }
  const ambiguous = new Set(
    [...neighbours]
      .filter(([, ns]) => ns.some((x, n) => ns.slice(n + 1).some((y) => conflict(x, y) !== null)))
      .map(([r]) => r),
  );
  for (const edge of edges.filter((e) => ambiguous.has(e.a) || ambiguous.has(e.b)))
    apart.push({
      ...edge,
      reason: 'one of them shares identifiers with two people who cannot be one, so it is put with neither',
    });
  edges = edges.filter((e) => !ambiguous.has(e.a) && !ambiguous.has(e.b));
  // The surest links first: more shared identifiers, then the higher-ranked records.
  edges.sort((x, y) => y.strong.length - x.strong.length || x.a - y.a || x.b - y.b);

  const root = records.map((_, i) => i);
  const members = new Map<number, number[]>(records.map((_, i) => [i, [i]]));
  const find = (i: number): number => (root[i] === i ? i : (root[i] = find(root[i]!)));
  const links: Link[] = [];
  for (const edge of edges) {
    const ra = find(edge.a);
    const rb = find(edge.b);
    if (ra === rb) continue;
    const blocking = members
      .get(ra)!
      .flatMap((x) => members.get(rb)!.map((y) => ({ x, y, why: conflict(x, y) })))
      .find((c) => c.why !== null);
    if (blocking) {
      const [x, y] = [records[blocking.x]!.item, records[blocking.y]!.item];
      apart.push({
        ...edge,
        reason: `joining them would put ${x.full_name ?? x.id} and ${y.full_name ?? y.id} on one item: ${blocking.why!}`,
      });
      continue;
    }
    const [keep, join] = ra < rb ? [ra, rb] : [rb, ra];
    root[join] = keep;
    members.set(
      keep,
      [...members.get(keep)!, ...members.get(join)!].sort((x, y) => x - y),
    );
    members.delete(join);
    links.push({ record: edge.b, to: edge.a, keys: edge.strong });
  }
  return { clusters: [...members.values()], links, apart };
}

/** A merged person lists an address, number or handle once, however its parts wrote it. */
const PERSON_LISTS: ListKeys<PersonRecordItem> = {
  aliases: asWritten,
  emails: (email: string) => normalizeEmailAddress(email) ?? asWritten(email),
  phones: asWritten,
  usernames: normalizeUsername,
  accounts: asWritten,
  locations: asWritten,
};

/**
 * A username presence item: no name, found through the username alone. Any other item without a name (a
 * vendor's profile with none) joins its subject by e-mail, phone or identity like any person, and a
 * subject still without a name is left out: only a presence item may have none (API.md).
 */
function isPresence(p: PersonRecordItem): boolean {
  return p.full_name === null && p.matched_on.every((field) => field === 'username');
}

/** Adds `entry` to an item's `kept_apart`, once per other item (identifiers added up), at most MAX_KEPT_APART. */
function keepApart(item: PersonResultItem, entry: PersonResultItem['kept_apart'][number]): void {
  const known = item.kept_apart.find((k) => k.item === entry.item);
  if (known) known.shared = unionBy([known.shared, entry.shared], asWritten);
  else if (item.kept_apart.length < MAX_KEPT_APART) item.kept_apart.push(entry);
}

/**
 * The person items of an answer, best first: each cluster of records merged (mergeSubject: scalars by
 * precedence, lists unioned, phones in E.164), with `linked_by` and `kept_apart`. A username presence
 * item puts its accounts on the one item holding that handle, or stays on its own when none or several do.
 */
export function resolvePeople(
  candidates: readonly PersonCandidate[],
  shared: SharedIdentifiers = new Map(),
): PersonResultItem[] {
  const ranked = [...candidates]
    .sort((a, b) => b.precedence - a.precedence)
    .map((c) => {
      const item = withE164(c.item);
      return { precedence: c.precedence, item, keys: keysOf(item, c.identities) };
    });
  const records = ranked.filter((r) => !isPresence(r.item));
  const { clusters, links, apart } = clusterRecords(records, shared);

  const itemOf = new Map<number, PersonResultItem>();
  const people: PersonResultItem[] = [];
  for (const members of clusters) {
    const merged = mergeSubject(
      members.map((i) => records[i]!),
      PERSON_LISTS,
    );
    if (merged.full_name === null) continue;
    const person: PersonResultItem = {
      ...merged,
      linked_by: links
        .filter((l) => members.includes(l.record))
        .map((l) => ({
          record: records[l.record]!.item.id,
          sources: records[l.record]!.item.sources,
          to: records[l.to]!.item.id,
          on: l.keys.map(identifierOf),
        })),
      kept_apart: [],
    };
    for (const i of members) itemOf.set(i, person);
    people.push(person);
  }
  for (const { a, b, keys, reason } of apart) {
    const [x, y] = [itemOf.get(a), itemOf.get(b)];
    if (!x || !y || x === y) continue;
    const shared = keys.map(identifierOf);
    // Each item's reason names its own record first (`a`'s is `reason`): the same answer whatever the order.
    keepApart(x, { item: y.id, shared, reason });
    keepApart(y, { item: x.id, shared, reason: conflictOf(records[b]!.item, records[a]!.item) ?? reason });
  }
  bestFirst(people);

  const alone: PersonResultItem[] = [];
  for (const { item } of ranked.filter((r) => isPresence(r.item))) {
    const presence: PersonResultItem = { ...item, linked_by: [], kept_apart: [] };
    const handles = new Set(item.usernames.map(normalizeUsername));
    const holders = people.filter((p) => p.usernames.some((u) => handles.has(normalizeUsername(u))));
    const on = item.usernames.map((value) => ({ type: 'username' as const, value }));
    if (holders.length === 1) {
      const holder = holders[0]!;
      holder.accounts = unionBy([holder.accounts, item.accounts], asWritten);
      holder.matched_on = unionBy([holder.matched_on, item.matched_on]);
      holder.sources = unionBy([holder.sources, item.sources]);
      holder.linked_by.push({ record: item.id, sources: item.sources, to: holder.id, on });
      continue;
    }
    const reason = `the username is held by ${holders.length} people here, so its accounts are put on none of them`;
    for (const holder of holders) {
      keepApart(presence, { item: holder.id, shared: on, reason });
      keepApart(holder, { item: presence.id, shared: on, reason });
    }
    alone.push(presence);
  }
  return bestFirst([...people, ...alone]);
}
