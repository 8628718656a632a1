import type { Queue } from 'bullmq';
import { batchBody, batchEventId, queueWebhookEvent, type WebhookJob } from '@dossier/contracts';
import type { BatchesRepository } from './batches.repository';
import type { SearchesRepository } from './searches.repository';
import type { WebhooksRepository } from './webhooks.repository';

/** What completing a batch reads. */
export interface BatchCompletionRepos {
  batches: BatchesRepository;
  webhooks: WebhooksRepository;
  searches: SearchesRepository;
}

/**
 * After some of a batch's searches settled (ADR 0019): once none is pending, queues its `batch.completed`
 * event (the body `GET /v1/batches/{id}` gives) for the account's webhooks that take it, then marks the batch
 * completed — nothing while some search runs. Made after every settle of a batch's searches, by the worker
 * that settled one, by a gateway that released some (queueing failed) and by the reconciler; the event's id
 * (the batch's) keeps its delivery jobs to one per webhook, however many callers find it complete. The mark
 * comes last: a caller whose queueing fails (Redis) leaves the batch open, and the next caller — a retried
 * job, the reconciler (`findSettledOpen`) — queues the event. Marked first, such a batch's event was lost.
 */
export async function queueBatchCompletion(
  repos: BatchCompletionRepos,
  queue: Queue<WebhookJob>,
  batchId: string,
): Promise<void> {
  const { batches, webhooks, searches } = repos;
  const done = await batches.settledState(batchId);
  if (!done) return;
  const subscribers = await webhooks.batchSubscribers(batchId, 'batch.completed');
  const batch = subscribers.length > 0 ? await batches.findForAccount(batchId, done.account_id, null) : null;
  if (batch) {
    const ids = batch.items.flatMap((i) => ('search_id' in i ? [i.search_id] : []));
    const found = await searches.findManyForAccount(ids, done.account_id);
    const balance = found[0]?.balance ?? (await searches.balanceOf(done.account_id)) ?? 0;
    await queueWebhookEvent(queue, subscribers, {
      id: batchEventId(batchId),
      type: 'batch.completed',
      created_at: done.completed_at.toISOString(),
      data: batchBody(batchId, batch.items, new Map(found.map((s) => [s.id, s])), balance),
    });
  }
  if (!done.marked) await batches.markCompleted(batchId, done.completed_at);
}
