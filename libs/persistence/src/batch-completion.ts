import { batchBody, batchEventId, type WebhookJob } from '@dossier/contracts';
import type { BatchesRepository } from './batches.repository';
import type { SearchesRepository } from './searches.repository';
import type { WebhooksRepository } from './webhooks.repository';

/** A `batch.completed` event to queue, once per webhook that takes it. */
export interface BatchCompleted {
  subscribers: { id: string; account_id: string }[];
  event: WebhookJob['event'];
}

/**
 * After some of a batch's searches settled (ADR 0019): once none is pending, marks the batch completed and
 * returns its `batch.completed` event (the body `GET /v1/batches/{id}` gives) with the account's webhooks that
 * take it — null while some search runs, or when no webhook takes it. Made after every settle of a batch's
 * searches, by the worker that settled one and by a gateway that released some (queueing failed); the
 * event's id (the batch's) keeps its delivery jobs to one per webhook, however many callers find it complete.
 */
export async function completeBatch(
  repos: { batches: BatchesRepository; webhooks: WebhooksRepository; searches: SearchesRepository },
  batchId: string,
): Promise<BatchCompleted | null> {
  const { batches, webhooks, searches } = repos;
  const done = await batches.completeIfSettled(batchId);
  if (!done) return null;
  const subscribers = await webhooks.batchSubscribers(batchId, 'batch.completed');
  if (subscribers.length === 0) return null;
  const batch = await batches.findForAccount(batchId, done.account_id, null);
  if (!batch) return null;
  const ids = batch.items.flatMap((i) => ('search_id' in i ? [i.search_id] : []));
  const found = await searches.findManyForAccount(ids, done.account_id);
  const balance = found[0]?.balance ?? (await searches.balanceOf(done.account_id)) ?? 0;
  return {
    subscribers,
    event: {
      id: batchEventId(batchId),
      type: 'batch.completed',
      created_at: done.completed_at.toISOString(),
      data: batchBody(batchId, batch.items, new Map(found.map((s) => [s.id, s])), balance),
    },
  };
}
