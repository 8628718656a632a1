import type { Queue } from 'bullmq';
import { queueWebhookEvent, searchEnvelope, searchEventId, type WebhookJob } from '@dossier/contracts';
import { queueBatchCompletion, type BatchCompletionRepos } from './batch-completion';

/** What queueing a settled search's webhook events reads. */
export type SettledEventRepos = BatchCompletionRepos;

/**
 * Queues the webhook events of a settled search (ADR 0020): its `search.completed` or `search.failed` for
 * every webhook of its account that takes it, then its batch's `batch.completed` once none of the batch's
 * searches is pending (queueBatchCompletion). `announce` false: no search event (a gateway answered the
 * search itself), only its batch's progress. Made by the worker after each settle (and again by a retried or
 * redelivered job), and by a gateway that took back the job of a search that job had already settled (ADR
 * 0006). Event ids derive from the search's and the batch's ids, so a second call queues no second delivery
 * while the first call's delivery jobs are kept (JOB_KEEP_*).
 */
export async function queueSettledEvents(
  repos: SettledEventRepos,
  queue: Queue<WebhookJob>,
  searchId: string,
  status: 'succeeded' | 'failed',
  announce = true,
): Promise<void> {
  const type = status === 'succeeded' ? 'search.completed' : 'search.failed';
  const { batchId, subscribers } = await repos.webhooks.onSearchSettled(searchId, type);
  if (announce && subscribers.length > 0) {
    const search = await repos.searches.findForAccount(searchId, subscribers[0]!.account_id, null);
    if (search) {
      await queueWebhookEvent(queue, subscribers, {
        id: searchEventId(searchId),
        type,
        created_at: (search.completed_at ?? new Date()).toISOString(),
        data: searchEnvelope(search),
      });
    }
  }
  if (batchId !== null) await queueBatchCompletion(repos, queue, batchId);
}
