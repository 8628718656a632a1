import type { PersonResultItem } from '@dossier/contracts';
import { newId } from '@dossier/domain';
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
