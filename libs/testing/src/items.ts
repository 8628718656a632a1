import { SANDBOX_COMPANIES, SANDBOX_PEOPLE, type PersonResultItem, type SandboxFind } from '@dossier/contracts';
import { newId, subjectId } from '@dossier/domain';
import type { NewSearch } from '@dossier/persistence';

/** A person result item with every field of the contract: a one-source name match unless `over` says otherwise. */
export function personItem(over: Partial<PersonResultItem> = {}): PersonResultItem {
  return {
    id: 'per_x',
    full_name: 'Ada Lovelace',
    first_name: 'Ada',
    last_name: 'Lovelace',
    aliases: [],
    emails: [],
    phones: [],
    usernames: [],
    accounts: [],
    locations: [],
    age: null,
    birth_year: null,
    match_score: 0.5,
    matched_on: ['name'],
    sources: ['local'],
    linked_by: [],
    kept_apart: [],
    ...over,
  };
}

/** A search to reserve for `accountId`: a one-credit phone lookup with a fresh id unless `over` says otherwise. */
export function newSearch(accountId: string, over: Partial<NewSearch> = {}): NewSearch {
  return {
    id: newId.search(),
    accountId,
    keyId: 'key_test',
    kind: 'phone',
    input: { phone: '+14155552671' },
    cost: 1,
    idempotencyKey: null,
    requestHash: null,
    requestId: 'req_test',
    permissiblePurpose: null,
    ...over,
  };
}

/**
 * What a sandbox person or company answer found, as SANDBOX_CASES documents it (SandboxFind): each item's
 * synthetic record (the one its id is made from; the id itself for an item of no synthetic record), score
 * and `matched_on`.
 */
export function sandboxFindsOf(
  kind: 'person' | 'company',
  items: readonly Pick<PersonResultItem, 'id' | 'match_score' | 'matched_on'>[],
): SandboxFind[] {
  const records = kind === 'person' ? SANDBOX_PEOPLE : SANDBOX_COMPANIES;
  return items.map((item) => ({
    record: records.find((r) => subjectId(kind, r.source, r.external_id) === item.id)?.external_id ?? item.id,
    match_score: item.match_score,
    matched_on: item.matched_on,
  }));
}

/**
 * The person items whose `age` is not the one live derives from `birth_year` in any of `years` (the years
 * the lookup may have run in: the clock's before and after it, so a lookup at New Year is no failure).
 */
export function underivedAges(
  items: readonly Pick<PersonResultItem, 'id' | 'age' | 'birth_year'>[],
  years: readonly number[],
): Pick<PersonResultItem, 'id' | 'age' | 'birth_year'>[] {
  return items
    .filter((i) => !years.some((year) => i.age === (i.birth_year === null ? null : year - i.birth_year)))
    .map(({ id, age, birth_year }) => ({ id, age, birth_year }));
}
