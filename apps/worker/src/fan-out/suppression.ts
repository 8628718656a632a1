import { phoneRegionOf, splitPersonName, suppressionKeys, type LookupKind } from '@dossier/domain';
import type { EmailResultItem, LookupInputByKind, PersonResultItem, ResultItemByKind } from '@dossier/contracts';
import { outcomeOf, type FanOutResult } from './fan-out';

/** The part of SuppressionsRepository the filter needs: which of these keys are listed. */
export interface SuppressionList {
  matching(keys: readonly string[]): Promise<Set<string>>;
}

/**
 * Applies the suppression list (ADR 0015) to a fan-out's merged items, before anything is stored or
 * answered. Merged, because a merged person carries every e-mail, phone and birth year its providers
 * knew: a record that only shares an e-mail with a suppressed one goes with it.
 *
 * - person: an item goes when any of its e-mails, phones, or names with its birth year is listed, or
 *   when it was matched on a searched e-mail or phone that is listed;
 * - email: a listed address keeps its verification (syntax, MX, deliverability: facts about the mailbox,
 *   not the person) and loses its associated accounts; a provider that found nothing but accounts
 *   (`findsOnly: 'accounts'`, Gravatar) then reads `not_found` and is no longer among the item's sources,
 *   so an address whose only finding was its accounts is not charged, and the answer does not tell
 *   that a profile was there;
 * - phone and company items hold nothing about a person (the phone schema has no owner or caller name);
 * - a listed entity of a sanctions list (an item only providers with `findsOnly: 'watchlist_hits'` found)
 *   is never dropped: the list is public, and screening against it is the operator's legal obligation,
 *   which an opt-out does not lift (ADR 0064). The suppressed subject's own details still go.
 *
 * One check per lookup, after its fan-out: the candidate keys of every item are looked up together (the
 * repository answers the checks of lookups finishing at the same time with one query, each started after
 * the checks in it were made: every entry committed before a lookup's merged items were ready applies to
 * it). A lookup left without items is not charged, and its `found` reports read `not_found`, so the
 * answer does not tell that a listed subject was there.
 */
export class SuppressionFilter {
  /**
   * @param accountsOnly ids of the providers whose answer is only associated accounts (`findsOnly:
   *   'accounts'` in the registry)
   */
  constructor(
    private readonly list: SuppressionList,
    private readonly accountsOnly: ReadonlySet<string> = new Set(),
    /** ids of the providers whose items are sanctions-list entities (`findsOnly: 'watchlist_hits'`). */
    private readonly listedOnly: ReadonlySet<string> = new Set(),
  ) {}

  async apply<K extends LookupKind>(
    kind: K,
    input: LookupInputByKind[K],
    outcome: FanOutResult<K>,
  ): Promise<FanOutResult<K>> {
    if (kind === 'person') {
      const people = outcome.items as PersonResultItem[];
      if (people.length === 0) return outcome;
      const keysOf = people.map(personKeys);
      // A searched e-mail or phone that is listed takes the items found through it (matched on it).
      const searched = searchedKeys(input as LookupInputByKind['person']);
      const listed = await this.list.matching([...keysOf.flat(), ...searched.map((s) => s.key)]);
      if (listed.size === 0) return outcome;
      const through = new Set<string>(searched.filter((s) => listed.has(s.key)).map((s) => s.field));
      const kept = people.filter(
        (p, i) =>
          p.sources.every((s) => this.listedOnly.has(s)) ||
          (!keysOf[i]!.some((k) => listed.has(k)) && !p.matched_on.some((f) => through.has(f))),
      );
      // An item gone leaves no trace: no other item says it was kept apart from it.
      const ids = new Set(kept.map((p) => p.id));
      const traceless = kept.map((p) => ({ ...p, kept_apart: p.kept_apart.filter((k) => ids.has(k.item)) }));
      return outcomeOf(traceless as ResultItemByKind[K][], outcome.sources);
    }
    if (kind === 'email') {
      const items = outcome.items as EmailResultItem[];
      const keys = [(input as LookupInputByKind['email']).email, ...items.map((i) => i.normalized)]
        .map(suppressionKeys.email)
        .filter((k): k is string => k !== null);
      const listed = await this.list.matching(keys);
      if (listed.size === 0) return outcome;
      const kept: EmailResultItem[] = items.map((i) => ({
        ...i,
        accounts: [],
        sources: i.sources.filter((s) => !this.accountsOnly.has(s)),
      }));
      const sources = outcome.sources.map((s) =>
        s.outcome === 'found' && this.accountsOnly.has(s.provider) ? { ...s, outcome: 'not_found' as const } : s,
      );
      return outcomeOf(kept as ResultItemByKind[K][], sources);
    }
    return outcome;
  }
}

function searchedKeys(input: LookupInputByKind['person']): { field: 'email' | 'phone'; key: string }[] {
  const email = input.email === undefined ? null : suppressionKeys.email(input.email);
  const phone = input.phone === undefined ? null : suppressionKeys.phone(input.phone, input.country);
  return [
    ...(email ? [{ field: 'email' as const, key: email }] : []),
    ...(phone ? [{ field: 'phone' as const, key: phone }] : []),
  ];
}

/**
 * Every key a person item could be listed under: its e-mails, its phones, and each name it goes by (full
 * name, also turned round from "Last, First"; first + last; aliases) with its birth year — or, when only
 * an age is known, with both years it gives.
 */
export function personKeys(person: PersonResultItem): string[] {
  const thisYear = new Date().getUTCFullYear();
  const years =
    person.birth_year !== null
      ? [person.birth_year]
      : person.age !== null
        ? [thisYear - person.age, thisYear - person.age - 1]
        : [];
  const names = new Set<string>(person.aliases);
  if (person.full_name !== null) {
    names.add(person.full_name);
    const split = splitPersonName(person.full_name);
    if (split.first && split.last) names.add(`${split.first} ${split.last}`);
    // "Last, First Middle" as "First Middle Last"
    const comma = person.full_name.indexOf(',');
    if (comma > 0) names.add(`${person.full_name.slice(comma + 1)} ${person.full_name.slice(0, comma)}`);
  }
  if (person.first_name && person.last_name) names.add(`${person.first_name} ${person.last_name}`);
  // A number written nationally is read in the person's country, as the local index reads it.
  const country = phoneRegionOf(person.locations);
  return [
    ...person.emails.map((e) => suppressionKeys.email(e)),
    ...person.phones.map((p) => suppressionKeys.phone(p, country)),
    ...[...names].flatMap((n) => years.flatMap((y) => suppressionKeys.names(n, y))),
  ].filter((k): k is string => k !== null);
}
