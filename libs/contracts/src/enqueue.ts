import type { JobsOptions, Queue } from 'bullmq';
import type { LookupKind } from '@dossier/domain';
import { JOB_NAMES } from './queues';
import type { LookupJob, LookupJobResult } from './lookup-job.schema';

export type LookupQueue = Queue<LookupJob, LookupJobResult, string>;
export type LookupQueues = Record<LookupKind, LookupQueue>;

/** Default options for every lookup job. The job id is the search id, so a re-add dedupes. */
export const DEFAULT_LOOKUP_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 3600, count: 5000 },
  removeOnFail: { age: 7 * 24 * 3600 },
} as const satisfies JobsOptions;

/** Events stream length: completions are small pointers, so keep a generous window. */
export const EVENTS_MAX_LEN = 50_000;

/** The one typed way to put a lookup on its queue. */
export async function enqueueLookup(queues: LookupQueues, job: LookupJob): Promise<void> {
  await queues[job.kind].add(JOB_NAMES[job.kind], job, {
    ...DEFAULT_LOOKUP_JOB_OPTIONS,
    jobId: job.search_id,
  });
}
