import type { LookupKind } from '@dossier/domain';

/**
 * WARNING — wire contract. Queue and job names are stored in Redis and read by separately
 * deployed gateways and workers. Never rename a value; add new ones and evolve payloads
 * through their `v` field instead.
 */
export const QUEUE_NAMES = {
  person: 'person-lookup',
  company: 'company-lookup',
  email: 'email-lookup',
  phone: 'phone-lookup',
} as const satisfies Record<LookupKind, string>;

/** WARNING — wire contract, see QUEUE_NAMES. */
export const JOB_NAMES = {
  person: 'person.lookup',
  company: 'company.lookup',
  email: 'email.lookup',
  phone: 'phone.lookup',
} as const satisfies Record<LookupKind, string>;

export type QueueName = (typeof QUEUE_NAMES)[LookupKind];
export type JobName = (typeof JOB_NAMES)[LookupKind];
