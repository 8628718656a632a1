import type { ConnectionOptions, QueueOptions } from 'bullmq';
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

/** Events stream length: completions carry small outcomes, so keep a generous window (BullMQ default ~10k). */
export const EVENTS_MAX_LEN = 50_000;

/**
 * The options every process opens a lookup queue with. BullMQ rewrites a queue's meta (the events
 * stream's length) whenever a `Queue` is created, so producers, workers and tools must agree.
 */
export function lookupQueueOptions(prefix: string, connection: ConnectionOptions): QueueOptions {
  return { prefix, connection, streams: { events: { maxLen: EVENTS_MAX_LEN } } };
}

/**
 * WARNING — wire contract, see QUEUE_NAMES. The maintenance queue holds the retention job, produced by
 * one BullMQ job scheduler (id RETENTION_SCHEDULER_ID) however many workers upsert it, and consumed by
 * every worker with WORKER_MAINTENANCE on.
 */
export const MAINTENANCE_QUEUE = 'maintenance';
export const RETENTION_SCHEDULER_ID = 'retention';
export const RETENTION_JOB_NAME = 'retention.purge';
