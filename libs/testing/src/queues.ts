import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import { queuePrefixFor, type RedisTarget } from '@dossier/config';
import { redisOptionsFromUrl } from '@dossier/runtime';
import { testEnv } from './test-env';

export interface JobSnapshot {
  /** BullMQ's state, or `missing` when the job does not exist (never added, or removed). */
  state: string;
  attemptsMade: number;
  stalledCounter: number;
  /** Why it failed (failed jobs only). */
  failedReason?: string;
}

/**
 * Read-only view of a stack's queues (its QUEUE_PREFIX), for waiting on a job's state in tests:
 * e.g. "the job is active" before killing the worker that holds it. `redis`: a Redis URL, or the stack's
 * target with its cluster nodes — each queue is then read under its own prefix, as the apps open it.
 */
export class QueueProbe {
  private readonly queues = new Map<string, Queue>();
  private readonly target: RedisTarget;
  private cluster?: Cluster;

  constructor(
    private readonly prefix: string,
    redis: string | RedisTarget = testEnv.redisUrl,
  ) {
    this.target = typeof redis === 'string' ? { url: redis, clusterNodes: null } : redis;
  }

  /**
   * The job's state, then its fields: read the other way round, a job that failed between the two reads
   * was seen `failed` without its failedReason (BullMQ sets both in one script).
   */
  async job(queueName: string, jobId: string): Promise<JobSnapshot> {
    const queue = this.queue(queueName);
    const state = await queue.getJobState(jobId);
    const job = await queue.getJob(jobId);
    if (!job || state === 'unknown') return { state: 'missing', attemptsMade: 0, stalledCounter: 0 };
    return {
      state,
      attemptsMade: job.attemptsMade,
      stalledCounter: job.stalledCounter ?? 0,
      ...(job.failedReason ? { failedReason: job.failedReason } : {}),
    };
  }

  async state(queueName: string, jobId: string): Promise<string> {
    return (await this.job(queueName, jobId)).state;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
    this.cluster?.disconnect();
  }

  /** The stack's queue `name` (opened once, closed by `close()`). */
  queue(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      const nodes = this.target.clusterNodes;
      queue = new Queue(name, {
        prefix: queuePrefixFor({ queuePrefix: this.prefix, redis: this.target }, name),
        connection: nodes
          ? (this.cluster ??= new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } }))
          : { ...redisOptionsFromUrl(this.target.url), maxRetriesPerRequest: null },
      });
      this.queues.set(name, queue);
    }
    return queue;
  }
}
