import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { LOOKUP_KINDS, type LookupKind } from '@dossier/domain';
import { JOB_NAMES, QUEUE_NAMES, lookupQueueOptions } from './queues';
import type { LookupJob, LookupJobOf, LookupJobResult } from './lookup-job.schema';

export type LookupQueue = Queue<LookupJob, LookupJobResult, string>;
export type LookupQueues = Record<LookupKind, LookupQueue>;

/** Default options for every lookup job. The job id is the search id, so a re-add dedupes. */
export const DEFAULT_LOOKUP_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 3600, count: 5000 },
  removeOnFail: { age: 7 * 24 * 3600 },
} as const satisfies JobsOptions;

/** The four lookup queues, opened with the shared options (close them with `closeLookupQueues`). */
export function openLookupQueues(prefix: string, connection: ConnectionOptions): LookupQueues {
  const options = lookupQueueOptions(prefix, connection);
  return Object.fromEntries(
    LOOKUP_KINDS.map((kind) => [kind, new Queue<LookupJob, LookupJobResult, string>(QUEUE_NAMES[kind], options)]),
  ) as LookupQueues;
}

export async function closeLookupQueues(queues: LookupQueues): Promise<void> {
  await Promise.allSettled(LOOKUP_KINDS.map((kind) => queues[kind].close()));
}

/** The one typed way to put a lookup on its queue: the payload's input must be its kind's. */
export async function enqueueLookup<K extends LookupKind>(queues: LookupQueues, job: LookupJobOf<K>): Promise<void> {
  // LookupJobOf<K> is LookupJob narrowed to one kind; TypeScript cannot see that through the generic.
  await queues[job.kind].add(JOB_NAMES[job.kind], job as LookupJob, {
    ...DEFAULT_LOOKUP_JOB_OPTIONS,
    jobId: job.search_id,
  });
}
