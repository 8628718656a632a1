/**
 * The raw round trip's producer, shared by the raw phase (in the bench process) and the HTTP floor
 * (in its front process): Queue.add of a phone lookup job as the gateway enqueues it, with the real
 * job options, and its completion seen through one QueueEvents listener.
 */
import { Queue, QueueEvents } from 'bullmq';
import { blockingRedisOptions, failFastRedisOptions } from '@dossier/runtime';
import { JOB_NAMES, lookupJobOptions, lookupQueueOptions } from '@dossier/contracts';

/** A round trip's outcome: the job's return value once it completed, or why it did not. */
export type RoundTrip = { returnvalue: unknown } | string;

/** The queue both phases use (under the bench's prefix); the no-op worker consumes it. */
export const FLOOR_QUEUE = 'bench-floor';

/** A job with no completion event after this long counts as failed. */
const COMPLETION_TIMEOUT_MS = 10_000;
const SWEEP_INTERVAL_MS = 500;

export class FloorProducer {
  private readonly queue: Queue;
  private readonly events: QueueEvents;
  private readonly completions = new Completions();
  private readonly jobOptions = lookupJobOptions();

  constructor(redisUrl: string, prefix: string) {
    this.queue = new Queue(FLOOR_QUEUE, lookupQueueOptions(prefix, failFastRedisOptions(redisUrl)));
    this.events = new QueueEvents(FLOOR_QUEUE, { connection: blockingRedisOptions(redisUrl), prefix });
    this.events.on('completed', ({ jobId, returnvalue }) => this.completions.settle(jobId, { returnvalue }));
    this.events.on('failed', ({ jobId, failedReason }) =>
      this.completions.settle(jobId, `job failed: ${failedReason}`),
    );
  }

  async waitUntilReady(): Promise<void> {
    await Promise.all([this.queue.waitUntilReady(), this.events.waitUntilReady()]);
  }

  /** Enqueues job `id` for `phone` and resolves with its outcome once its completion event arrives. */
  async roundTrip(id: string, phone: string): Promise<RoundTrip> {
    const done = this.completions.expect(id);
    try {
      await this.queue.add(JOB_NAMES.phone, lookupJob(id, phone), { ...this.jobOptions, jobId: id });
    } catch (err) {
      this.completions.forget(id);
      throw err;
    }
    return done;
  }

  async close(): Promise<void> {
    this.completions.close();
    await this.events.close().catch(() => undefined);
    await this.queue.close().catch(() => undefined);
  }
}

/** Jobs waiting for their completion event; one sweep fails those that waited too long. */
class Completions {
  private readonly waiting = new Map<string, { done: (o: RoundTrip) => void; deadline: number }>();
  private readonly sweeper = setInterval(() => {
    const now = Date.now();
    for (const [id, w] of this.waiting) {
      if (w.deadline < now) this.settle(id, `timeout (no completion event in ${COMPLETION_TIMEOUT_MS / 1000} s)`);
    }
  }, SWEEP_INTERVAL_MS);

  expect(jobId: string): Promise<RoundTrip> {
    return new Promise((done) => this.waiting.set(jobId, { done, deadline: Date.now() + COMPLETION_TIMEOUT_MS }));
  }

  settle(jobId: string, outcome: RoundTrip): void {
    const w = this.waiting.get(jobId);
    if (!w) return;
    this.waiting.delete(jobId);
    w.done(outcome);
  }

  forget(jobId: string): void {
    this.waiting.delete(jobId);
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

/** A phone lookup job as the gateway enqueues it. */
function lookupJob(id: string, phone: string) {
  return {
    v: 1,
    kind: 'phone',
    search_id: id,
    account_id: 'acct_benchbenchbenchbench',
    request_id: `req_${id}`,
    submitted_at: new Date().toISOString(),
    input: { phone },
  };
}
