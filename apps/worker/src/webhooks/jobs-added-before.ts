import type { Queue } from 'bullmq';

/** The states a delivery job waits in before an attempt, and the finished ones BullMQ keeps. */
export const WAITING_STATES = ['wait', 'prioritized', 'delayed'] as const;
export const FINISHED_STATES = ['completed', 'failed'] as const;
export type KeptState = (typeof WAITING_STATES)[number] | (typeof FINISHED_STATES)[number];

/** Job timestamps asked for at once (sent together on the queue's connection). */
const CHUNK = 1000;

/**
 * The ids of the queue's jobs in `state` that were added before `cutoffMs` (the job's `timestamp`, set
 * once when it is added: not the last attempt, nor when it finished), read without their data — one
 * range read, then one field of each job, 1,000 at a time.
 */
export async function jobsAddedBefore(queue: Queue, state: KeptState, cutoffMs: number): Promise<string[]> {
  const ids = await queue.getRanges([state], 0, -1, true);
  if (ids.length === 0) return [];
  const client = await queue.getBackend().client;
  const old: string[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const timestamps = await Promise.all(chunk.map((id) => client.hget(queue.toKey(id), 'timestamp')));
    // A job removed meanwhile has no timestamp: nothing to do.
    chunk.forEach((id, k) => {
      const timestamp = timestamps[k];
      if (typeof timestamp === 'string' && Number(timestamp) < cutoffMs) old.push(id);
    });
  }
  return old;
}
