import type { PersonResultItem } from '@dossier/contracts';

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
    ...over,
  };
}
