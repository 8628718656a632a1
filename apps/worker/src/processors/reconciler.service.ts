import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { WorkerConfig } from '@dossier/config';
import type { LookupQueues } from '@dossier/contracts';
import { SearchesRepository } from '@dossier/persistence';
import { LOOKUP_QUEUES, WORKER_CONFIG } from '../infra/tokens';
import { WebhookDeliveryService } from '../webhooks/webhook-delivery.service';
import { WorkerMetrics } from './worker-metrics';

/**
 * Finds searches left pending with no live job — a gateway that died between reserving and
 * enqueueing, a failure whose release could not reach Postgres — fails them and releases their
 * credits, and queues the events a settled search sends. Settling is idempotent, so several workers may run this at once.
 */
@Injectable()
export class ReconcilerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('reconciler');
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    private readonly searches: SearchesRepository,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
    private readonly metrics: WorkerMetrics,
    private readonly webhooks: WebhookDeliveryService,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.runOnce(), this.config.reconcileIntervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async runOnce(): Promise<number> {
    if (this.running) return 0;
    this.running = true;
    let released = 0;
    try {
      const searches = this.searches;
      for (const stale of await searches.findStalePending(this.config.reconcileAfterS, 200)) {
        const job = await this.queues[stale.kind].getJob(stale.id);
        const state = job ? await job.getState() : 'missing';
        if (state !== 'missing' && state !== 'failed' && state !== 'unknown') continue;
        const { settled, notify } = await searches.settle(stale.id, {
          status: 'failed',
          error: { code: 'unavailable', message: 'the lookup was lost before it ran; nothing was charged' },
          sources: [],
        });
        if (settled) {
          released += 1;
          this.metrics.reconciled('released_stale', 1);
          this.logger.warn(`released stale search ${stale.id} (job ${state})`);
          // Its search.failed event, and its batch's completion when it was the last one running.
          if (notify)
            await this.webhooks
              .searchSettled(stale.id, 'failed')
              .catch((err: unknown) =>
                this.logger.error(`search ${stale.id}: could not queue its webhook events: ${String(err)}`),
              );
        }
      }
    } catch (err) {
      this.logger.warn(`reconcile pass failed: ${String(err)}`);
    } finally {
      this.running = false;
    }
    return released;
  }
}
