import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { throttledErrorLog } from '@dossier/runtime';
import {
  batchBody,
  batchEventId,
  queueWebhookEvent,
  searchEnvelope,
  searchEventId,
  type WebhookJob,
} from '@dossier/contracts';
import {
  BatchesRepository,
  OutboxRepository,
  SearchesRepository,
  WebhooksRepository,
  type OutboxRow,
} from '@dossier/persistence';
import { DATA_SOURCE } from '../infra/tokens';
import { WebhookDeliveryService } from './webhook-delivery.service';

/** Rows claimed per transaction. */
const RELAY_BATCH = 100;
/** How often the relay looks for rows nobody woke it for (settled by a gateway, or left by a dead relay). */
export const RELAY_POLL_MS = 1000;

/** What relaying reads. */
interface RelayRepos {
  outbox: OutboxRepository;
  batches: BatchesRepository;
  webhooks: WebhooksRepository;
  searches: SearchesRepository;
}

/**
 * The outbox relay (ADR 0062): moves the events of settled searches from the `outbox` table, where the
 * statement that settled each search wrote its row, to the `webhook-delivery` queue — a search's
 * `search.completed` or `search.failed` for every webhook of its account that takes it, then its batch's
 * `batch.completed` once none of the batch's searches runs — and deletes the rows in the transaction that
 * claimed them. A relay that dies between a commit and its publish loses nothing: the row waits for the next
 * pass of any worker's relay. Event ids derive from the search's and the batch's ids, so a row published twice
 * queues no second delivery. Woken at once by this process's own settles (`wake`), and every RELAY_POLL_MS.
 */
@Injectable()
export class OutboxRelayService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('outbox');
  private readonly logFailure = throttledErrorLog((message) => this.logger.warn(message));
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private again = false;
  private stopped = false;

  private readonly repos: RelayRepos;
  private readonly queue: Queue<WebhookJob>;

  constructor(@Inject(DATA_SOURCE) db: DataSource, searches: SearchesRepository, delivery: WebhookDeliveryService) {
    this.repos = {
      outbox: new OutboxRepository(db),
      batches: new BatchesRepository(db),
      webhooks: new WebhooksRepository(db),
      searches,
    };
    this.queue = delivery.queue;
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.wake(), RELAY_POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Stops waking, and lets a pass under way finish (the queue closes after this). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** Runs a pass now, or right after the one under way (a settle committed while it read). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Relays until the outbox holds nothing this relay can claim; how many rows it published. Never throws. */
  async drain(): Promise<number> {
    let published = 0;
    try {
      for (;;) {
        const pass = await this.repos.outbox.relay(RELAY_BATCH, (row) => this.publish(row));
        published += pass.published;
        for (const failure of pass.failures) this.logFailure('relay', failure as Error);
        if (pass.claimed < RELAY_BATCH || pass.failures.length > 0) return published;
      }
    } catch (err) {
      this.logFailure('relay', err as Error);
      return published;
    }
  }

  /** Queues one row's events: its search's (unless not announced), then its batch's completion. */
  private async publish(row: OutboxRow): Promise<void> {
    const { batchId, subscribers } = await this.repos.webhooks.onSearchSettled(row.search_id, row.event);
    if (row.announce && subscribers.length > 0) {
      const search = await this.repos.searches.findForAccount(row.search_id, subscribers[0]!.account_id, null);
      if (search) {
        await queueWebhookEvent(this.queue, subscribers, {
          id: searchEventId(row.search_id),
          type: row.event,
          created_at: (search.completed_at ?? new Date()).toISOString(),
          data: searchEnvelope(search),
        });
      }
    }
    if (batchId !== null) await this.batchSettled(batchId);
  }

  /**
   * After one of a batch's searches settled (ADR 0019): once none is pending, queues its `batch.completed`
   * (the body `GET /v1/batches/{id}` gives) for the account's webhooks that take it, then marks the batch
   * completed — nothing while some search runs. The read made after the last settle commits sees every search
   * settled; the mark comes last, so a relay whose queueing fails leaves the row, and the batch open, for the
   * next pass. The event's id (the batch's) keeps its delivery jobs to one per webhook.
   */
  private async batchSettled(batchId: string): Promise<void> {
    const { batches, webhooks, searches } = this.repos;
    const done = await batches.settledState(batchId);
    if (!done) return;
    const subscribers = await webhooks.batchSubscribers(batchId, 'batch.completed');
    const batch = subscribers.length > 0 ? await batches.findForAccount(batchId, done.account_id, null) : null;
    if (batch) {
      const ids = batch.items.flatMap((i) => ('search_id' in i ? [i.search_id] : []));
      const found = await searches.findManyForAccount(ids, done.account_id);
      const balance = found[0]?.balance ?? (await searches.balanceOf(done.account_id)) ?? 0;
      await queueWebhookEvent(this.queue, subscribers, {
        id: batchEventId(batchId),
        type: 'batch.completed',
        created_at: done.completed_at.toISOString(),
        data: batchBody(batchId, batch.items, new Map(found.map((s) => [s.id, s])), balance),
      });
    }
    if (!done.marked) await batches.markCompleted(batchId, done.completed_at);
  }
}
