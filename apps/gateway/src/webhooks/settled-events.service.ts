import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { WebhookJob } from '@dossier/contracts';
import {
  BatchesRepository,
  SearchesRepository,
  WebhooksRepository,
  queueBatchCompletion,
  queueSettledEvents,
  type SettledEventRepos,
} from '@dossier/persistence';
import { WEBHOOK_DELIVERY } from '../infra/tokens';

/**
 * The webhook events a gateway queues itself, on the failure path of queueing a lookup only (ADR 0006): the
 * events of a search whose job it took back after that job had settled it, and the `batch.completed` of a
 * batch it completed by releasing searches. The worker's own functions (queueSettledEvents,
 * queueBatchCompletion), so the events are the ones a worker would queue, under the same ids.
 */
@Injectable()
export class SettledEventsService {
  private readonly logger = new Logger('webhooks');
  private readonly repos: SettledEventRepos;

  constructor(
    @Inject(BatchesRepository) batches: BatchesRepository,
    @Inject(SearchesRepository) private readonly searches: SearchesRepository,
    @Inject(WebhooksRepository) webhooks: WebhooksRepository,
    @Inject(WEBHOOK_DELIVERY) private readonly queue: Queue<WebhookJob>,
  ) {
    this.repos = { batches, searches, webhooks };
  }

  /**
   * A search settled by its job, whose job this gateway then took back (its add's reply was lost): the job
   * may have been waiting to retry queueing these very events (its first run settled, then failed to queue
   * them), so they are queued here — its search event and its batch's completion. When the job did queue
   * them, its delivery jobs have the same ids: nothing is queued twice. Never throws (a failure is logged:
   * those events are then lost, as the job's were).
   */
  async searchSettled(searchId: string, requestId: string): Promise<void> {
    try {
      const status = await this.searches.statusOf(searchId);
      if (status === 'succeeded' || status === 'failed')
        await queueSettledEvents(this.repos, this.queue, searchId, status);
    } catch (e) {
      this.logger.error(
        `request_id=${requestId}: queueing the webhook events of ${searchId}, whose job was taken back after it settled, failed: ${String(e)}`,
      );
    }
  }

  /**
   * After releasing searches of a batch that stays: completes it once none is pending and queues its
   * `batch.completed` — what a worker does after each settle. Never throws: failing here, the reconciler
   * completes the batch (BatchesRepository.findSettledOpen).
   */
  async batchSettled(batchId: string, requestId: string): Promise<void> {
    try {
      await queueBatchCompletion(this.repos, this.queue, batchId);
    } catch (e) {
      this.logger.error(
        `request_id=${requestId}: completing batch ${batchId} after releasing its unqueued searches failed (the reconciler completes it): ${String(e)}`,
      );
    }
  }
}
