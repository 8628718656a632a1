import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { LOOKUP_KINDS, type LookupKind } from '@dossier/domain';
import { JOB_NAMES, QUEUE_NAMES, lookupQueueOptions } from './queues';
import type { LookupJob, LookupJobOf, LookupJobResult } from './lookup-job.schema';

export type LookupQueue = Queue<LookupJob, LookupJobResult, string>;
export type LookupQueues = Record<LookupKind, LookupQueue>;

/**
 * How long (`age`, seconds) and how many (`count`) finished lookup jobs Redis keeps — their payloads
 * hold the lookup's input. Configured by JOB_KEEP_* (ages capped at RESULTS_TTL_DAYS); these are the defaults.
 */
export interface LookupJobRetention {
  completed: { age: number; count: number };
  failed: { age: number; count: number };
}

export const DEFAULT_JOB_RETENTION: LookupJobRetention = {
  completed: { age: 3600, count: 5000 },
  failed: { age: 7 * 86_400, count: 10_000 },
};

/** The options of every lookup job. The job id (the search id, given at add) makes a re-add dedupe. */
export function lookupJobOptions(retention: LookupJobRetention = DEFAULT_JOB_RETENTION): JobsOptions {
  return {
    attempts: 5,
    backoff: { type: 'exponential', delay: 500 },
    removeOnComplete: { ...retention.completed },
    removeOnFail: { ...retention.failed },
  };
}

/**
 * The four lookup queues, each under its own prefix (`prefixOf` its queue name: config's queuePrefixFor),
 * opened with the shared options and, for what they enqueue, the job options of `retention` (close them
 * with `closeLookupQueues`). Their connection errors go to `onError`: with no
 * listener, BullMQ prints each one to stderr as a raw stack trace, several a second while Redis is down.
 */
export function openLookupQueues(
  prefixOf: (queue: string) => string,
  connection: ConnectionOptions,
  retention: LookupJobRetention = DEFAULT_JOB_RETENTION,
  onError: (queue: string, error: Error) => void = () => undefined,
): LookupQueues {
  return Object.fromEntries(
    LOOKUP_KINDS.map((kind) => {
      const queue = new Queue<LookupJob, LookupJobResult, string>(QUEUE_NAMES[kind], {
        ...lookupQueueOptions(prefixOf(QUEUE_NAMES[kind]), connection),
        defaultJobOptions: lookupJobOptions(retention),
      });
      queue.on('error', (error) => onError(QUEUE_NAMES[kind], error));
      return [kind, queue];
    }),
  ) as LookupQueues;
}

export async function closeLookupQueues(queues: LookupQueues): Promise<void> {
  await Promise.allSettled(LOOKUP_KINDS.map((kind) => queues[kind].close()));
}

/** The one typed way to put a lookup on its queue: the payload's input must be its kind's. */
export async function enqueueLookup<K extends LookupKind>(queues: LookupQueues, job: LookupJobOf<K>): Promise<void> {
  // LookupJobOf<K> is LookupJob narrowed to one kind; TypeScript cannot see that through the generic.
  await queues[job.kind].add(JOB_NAMES[job.kind], job as LookupJob, { jobId: job.search_id });
}

/**
 * Takes a lookup's job back off its queue (the job id is the search id): `removed` when no job is left —
 * it was waiting, delayed or finished and is gone now, or it was never queued — so no worker will run it;
 * `running` when a worker holds it (BullMQ removes no locked job): the lookup is under way. Throws when
 * Redis cannot be asked. One Redis call.
 */
export async function withdrawLookup(
  queues: LookupQueues,
  kind: LookupKind,
  searchId: string,
): Promise<'removed' | 'running'> {
  return (await queues[kind].remove(searchId)) === 1 ? 'removed' : 'running';
}

/** Why a lookup's job will not settle its search: `missing`, there is no such job; `failed`, it failed for good. */
export type GoneJob = 'missing' | 'failed';

/**
 * Which of these searches of one kind have no live lookup job (the job id is the search id): `missing`, no
 * job under that id — never queued, removed (on the Bull board, by retention), or lost with Redis's data —
 * or `failed`, failed for good. A job that exists in any other state — waiting behind a backlog, delayed for
 * a retry, running however long, finished — is alive: its search is left out. Existence, not age: two O(1)
 * or O(log n) commands per search (a field of the job's hash, the failed set), sent together, so a page of
 * searches costs about one round trip. Throws when Redis cannot be asked.
 */
export async function goneLookupJobs(
  queues: LookupQueues,
  kind: LookupKind,
  searchIds: readonly string[],
): Promise<Map<string, GoneJob>> {
  const queue = queues[kind];
  const client = await queue.getBackend().client;
  const failedSet = queue.toKey('failed');
  const states = await Promise.all(
    searchIds.map(async (id): Promise<GoneJob | null> => {
      // Every job hash has its `timestamp`, set when the job is added.
      const [exists, failedAt] = await Promise.all([
        client.hexists(queue.toKey(id), 'timestamp'),
        client.zscore(failedSet, id),
      ]);
      return exists === 0 ? 'missing' : failedAt !== null ? 'failed' : null;
    }),
  );
  const gone = new Map<string, GoneJob>();
  for (const [i, state] of states.entries()) if (state) gone.set(searchIds[i]!, state);
  return gone;
}
