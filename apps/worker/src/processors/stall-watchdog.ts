import type { Worker } from 'bullmq';
import type { LookupKind } from '@dossier/domain';
import type { LookupQueues } from '@dossier/contracts';

/** One queue's consumer in this process, and when it last finished a job (completed or failed). */
export interface Consumer {
  kind: LookupKind;
  worker: Worker;
  lastFinishedAt: number;
  /** When its connection last failed (an error, or found not connected): an outage is not a stall. */
  lastTroubleAt: number;
  /** Jobs this process is running for the queue now. */
  inFlight: number;
}

/** Whether this process consumes its queues: connected, and finishing jobs when jobs wait. */
export interface ConsumerHealth {
  /** Every queue's worker runs, is not closing, and its Redis connection is up. */
  connected: boolean;
  /**
   * The kinds whose queue has held a waiting job for longer than WORKER_READY_STALL_MS while this
   * process finished none of that kind, and had no connection trouble, in as long: jobs wait and
   * nothing here takes them.
   */
  stalled: LookupKind[];
}

/**
 * Finds consumers that stopped taking jobs: BullMQ workers have been seen to stop fetching after a Redis
 * restart without reporting an error (ADR 0016). A stalled consumer with a free slot is handed to `restart`;
 * one whose slots are all busy with slow jobs is only reported (restarting would abandon those jobs). It
 * checks on its own timer, whether or not anything probes /health/ready.
 */
export class StallWatchdog {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly consumers: readonly Consumer[],
    private readonly queues: LookupQueues,
    private readonly settings: { readyStallMs: number; concurrency: Record<LookupKind, number> },
    private readonly restart: (consumer: Consumer) => Promise<void>,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.health(), Math.max(500, Math.floor(this.settings.readyStallMs / 2)));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** How this process consumes its queues; a stalled queue's worker with a free slot is restarted. */
  async health(): Promise<ConsumerHealth> {
    if (this.consumers.length === 0) return { connected: false, stalled: [] };
    const [connected, stalled] = await Promise.all([
      this.isConnected(),
      // Unreadable queues (Redis down) show as not connected, not as stalled.
      this.stalledKinds().catch((): LookupKind[] => []),
    ]);
    if (!connected) for (const c of this.consumers) c.lastTroubleAt = Date.now();
    for (const c of this.consumers) {
      if (stalled.includes(c.kind) && c.inFlight < this.settings.concurrency[c.kind]) void this.restart(c);
    }
    return { connected, stalled };
  }

  private async isConnected(): Promise<boolean> {
    const states = await Promise.all(
      this.consumers.map(
        async ({ worker: w }) => w.isRunning() && !w.closing && (await w.getBackend().client).status === 'ready',
      ),
    );
    return states.every(Boolean);
  }

  private async stalledKinds(): Promise<LookupKind[]> {
    const bound = this.settings.readyStallMs;
    const now = Date.now();
    const stalled = await Promise.all(
      this.consumers.map(async (c) => {
        // Counted from the last job finished or the last connection trouble, whichever is later: after
        // a Redis outage the worker gets the whole bound to take the jobs that waited through it.
        if (now - Math.max(c.lastFinishedAt, c.lastTroubleAt) <= bound) return false;
        const [oldest] = await this.queues[c.kind].getJobs(['wait'], 0, 0, true);
        return oldest !== undefined && now - oldest.timestamp > bound;
      }),
    );
    return this.consumers.filter((_, i) => stalled[i]).map((c) => c.kind);
  }
}
