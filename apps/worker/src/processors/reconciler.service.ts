import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { failFastRedisOptions, type WorkerConfig } from '@dossier/config';
import { closeLookupQueues, openLookupQueues, type LookupQueues } from '@dossier/contracts';
import { SearchesRepository } from '@dossier/persistence';
import { WORKER_CONFIG } from '../infra/tokens';
import { WorkerMetrics } from './worker-metrics';

/** Inputs and results older than RESULTS_TTL_DAYS are erased at most this often (the audit row stays). */
const PURGE_EVERY_MS = 3_600_000;

/**
 * Finds searches left pending with no live job — a gateway that died between reserving and
 * enqueueing, a failure whose release could not reach Postgres — fails them and releases their
 * credits. Settling is idempotent, so several workers may run this at once.
 */
@Injectable()
export class ReconcilerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('reconciler');
  private queues?: LookupQueues;
  private timer?: NodeJS.Timeout;
  private running = false;
  private lastPurge = 0;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    private readonly searches: SearchesRepository,
    private readonly metrics: WorkerMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.queues = openLookupQueues(this.config.queuePrefix, failFastRedisOptions(this.config.redisUrl));
    this.timer = setInterval(() => void this.runOnce(), this.config.reconcileIntervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.queues) await closeLookupQueues(this.queues);
  }

  async runOnce(): Promise<number> {
    if (this.running || !this.queues) return 0;
    this.running = true;
    let released = 0;
    try {
      const searches = this.searches;
      for (const stale of await searches.findStalePending(this.config.reconcileAfterS, 200)) {
        const job = await this.queues[stale.kind].getJob(stale.id);
        const state = job ? await job.getState() : 'missing';
        if (state !== 'missing' && state !== 'failed' && state !== 'unknown') continue;
        const { settled } = await searches.settle(stale.id, {
          status: 'failed',
          error: { code: 'unavailable', message: 'the lookup was lost before it ran; nothing was charged' },
          sources: [],
        });
        if (settled) {
          released += 1;
          this.metrics.reconciled('released_stale', 1);
          this.logger.warn(`released stale search ${stale.id} (job ${state})`);
        }
      }
      if (Date.now() - this.lastPurge > PURGE_EVERY_MS) {
        const purged = await searches.purgeResults(this.config.resultsTtlDays);
        this.lastPurge = Date.now();
        this.metrics.reconciled('purged', purged);
        if (purged > 0)
          this.logger.log(
            `purged inputs and results of ${purged} search(es) older than ${this.config.resultsTtlDays} days`,
          );
      }
    } catch (err) {
      this.logger.warn(`reconcile pass failed: ${String(err)}`);
    } finally {
      this.running = false;
    }
    return released;
  }
}
