import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { DataSource } from 'typeorm';
import { throttledErrorLog, type RedisConnections, type WorkerConfig } from '@dossier/config';
import {
  SIGNATURE_HEADER,
  WEBHOOK_BACKOFF,
  WEBHOOK_JOB_NAME,
  WEBHOOK_QUEUE,
  batchBody,
  batchEventId,
  checkWebhookTarget,
  openSecret,
  searchEnvelope,
  searchEventId,
  signatureHeader,
  webhookAttempts,
  webhookBackoffMs,
  webhookJobId,
  webhookJobSchema,
  type WebhookJob,
} from '@dossier/contracts';
import { BatchesRepository, SearchesRepository, WebhooksRepository } from '@dossier/persistence';
import { DATA_SOURCE, REDIS_CONNECTIONS, STARTING, WORKER_CONFIG } from '../infra/tokens';
import { postPinned, type PostResult } from './webhook-post';
import { closeWithin } from '../processors/close-workers';

/**
 * Webhooks in the worker (ADR 0020): `searchSettled` puts one delivery job per subscribed webhook on the
 * `webhook-delivery` queue; this process's consumer of that queue POSTs them, signed, to the pinned
 * address, records every attempt and lets BullMQ retry with exponential backoff and jitter for at least
 * 24 hours. The consumer has its own concurrency: a slow receiver never takes a lookup's slot.
 */
@Injectable()
export class WebhookDeliveryService
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly logger = new Logger('webhooks');
  /** The queue's and the consumer's connection errors: one line per 10 s while Redis is away. */
  private readonly logRedisError = throttledErrorLog((message) => this.logger.warn(message));
  private readonly webhooks: WebhooksRepository;
  private readonly batches: BatchesRepository;
  /** The delivery queue (retention cleans its finished jobs: each holds a lookup's envelope). */
  readonly queue: Queue<WebhookJob>;
  private readonly attempts: number;
  private worker?: Worker<WebhookJob>;
  /** The consumer's close, once shutdown has begun: true when the grace ran out first. */
  private closingWorker?: Promise<boolean>;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    @Inject(DATA_SOURCE) db: DataSource,
    @Inject(REDIS_CONNECTIONS) private readonly redis: RedisConnections,
    private readonly searches: SearchesRepository,
    @Inject(STARTING) private readonly starting: AbortSignal,
  ) {
    this.webhooks = new WebhooksRepository(db);
    this.batches = new BatchesRepository(db);
    this.attempts = config.webhooks.testAttempts ?? webhookAttempts(config.webhooks.retryBaseMs);
    this.queue = new Queue<WebhookJob>(WEBHOOK_QUEUE, {
      prefix: config.queuePrefix,
      connection: redis.queues(),
      defaultJobOptions: {
        attempts: this.attempts,
        backoff: { type: WEBHOOK_BACKOFF },
        removeOnComplete: { ...config.jobRetention.completed },
        removeOnFail: { ...config.jobRetention.failed },
      },
    });
    this.queue.on('error', (err) => this.logRedisError(WEBHOOK_QUEUE, err));
  }

  /**
   * Queues the search's event for every webhook of its account that takes it. Called after the search
   * settled, and again by a redelivered lookup job: the job id (webhook + event) makes that a no-op.
   */
  async searchSettled(searchId: string, status: 'succeeded' | 'failed'): Promise<void> {
    const type = status === 'succeeded' ? 'search.completed' : 'search.failed';
    const { batchId, subscribers } = await this.webhooks.onSearchSettled(searchId, type);
    if (subscribers.length > 0) {
      const search = await this.searches.findForAccount(searchId, subscribers[0]!.account_id, null);
      if (search) {
        await this.send(subscribers, {
          id: searchEventId(searchId),
          type,
          created_at: (search.completed_at ?? new Date()).toISOString(),
          data: searchEnvelope(search),
        });
      }
    }
    if (batchId !== null) await this.batchProgress(batchId);
  }

  /**
   * After one of a batch's searches settled: once none is pending, the batch is marked completed and its
   * `batch.completed` event (the body `GET /v1/batches/{id}` gives) queued for the account's webhooks.
   * Checked after every settle of the batch (and on redeliveries); the event's job id keeps it to one.
   */
  async batchProgress(batchId: string): Promise<void> {
    const done = await this.batches.completeIfSettled(batchId);
    if (!done) return;
    const subscribers = await this.webhooks.batchSubscribers(batchId, 'batch.completed');
    if (subscribers.length === 0) return;
    const batch = await this.batches.findForAccount(batchId, done.account_id, null);
    if (!batch) return;
    const ids = batch.items.flatMap((i) => ('search_id' in i ? [i.search_id] : []));
    const searches = await this.searches.findManyForAccount(ids, done.account_id);
    const balance = searches[0]?.balance ?? (await this.searches.balanceOf(done.account_id)) ?? 0;
    await this.send(subscribers, {
      id: batchEventId(batchId),
      type: 'batch.completed',
      created_at: done.completed_at.toISOString(),
      data: batchBody(batchId, batch.items, new Map(searches.map((s) => [s.id, s])), balance),
    });
  }

  /** One delivery job per webhook; the job id (webhook + event) makes a second enqueue of the same event a no-op. */
  private async send(subscribers: readonly { id: string }[], event: WebhookJob['event']): Promise<void> {
    await this.queue.addBulk(
      subscribers.map((w) => ({
        name: WEBHOOK_JOB_NAME,
        data: { v: 1 as const, webhook_id: w.id, event },
        opts: { jobId: webhookJobId(w.id, event.id) },
      })),
    );
  }

  onApplicationBootstrap(): void {
    if (this.config.webhooks.key === null) {
      this.logger.warn(`WEBHOOK_SECRET_KEY is not set: ${WEBHOOK_QUEUE} is not consumed (deliveries wait)`);
      return;
    }
    const baseMs = this.config.webhooks.retryBaseMs;
    this.worker = new Worker<WebhookJob>(WEBHOOK_QUEUE, (job) => this.deliver(job), {
      connection: this.redis.consumers(),
      prefix: this.config.queuePrefix,
      concurrency: this.config.webhooks.concurrency,
      settings: { backoffStrategy: (attemptsMade: number) => webhookBackoffMs(attemptsMade, baseMs) },
    });
    this.worker.on('error', (err) => this.logRedisError('webhook worker', err));
    this.logger.log(
      `consuming ${WEBHOOK_QUEUE} (concurrency ${this.config.webhooks.concurrency}, ${this.attempts} attempts)`,
    );
  }

  /**
   * The consumer stops with the lookup workers, at the start of shutdown, within the same grace: it waits
   * for nothing they do. The queue stays open until they have finished (their jobs queue events).
   */
  beforeApplicationShutdown(): void {
    this.closingWorker = this.worker
      ? closeWithin([this.worker], this.config.shutdownGraceMs, this.starting)
      : undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    if (await this.closingWorker) {
      this.logger.warn('grace period over: closing anyway (deliveries still running are retried)');
    }
    await this.queue.close();
  }

  /** One attempt: recorded whatever happens; a failure throws so BullMQ retries (or, the last, fails for good). */
  private async deliver(job: Job<WebhookJob>): Promise<void> {
    const parsed = webhookJobSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`job ${job.id} has an invalid webhook payload`);
    const { webhook_id: webhookId, event } = parsed.data;
    const webhook = await this.webhooks.target(webhookId);
    if (!webhook) return; // deleted since: nothing to deliver to
    const attempt = job.attemptsMade + 1;
    const startedAt = performance.now();
    const body = JSON.stringify(event);
    const check = await checkWebhookTarget(webhook.url, this.config.webhooks.allowPrivate);
    let result: PostResult;
    if (!check.ok) {
      result = { statusCode: null, error: `refused: the URL ${check.reason}` };
    } else {
      const secret = openSecret(webhook.secret_sealed, this.config.webhooks.key!);
      const signature = signatureHeader(secret, body, Math.floor(Date.now() / 1000));
      result = await postPinned(
        check.target,
        body,
        { [SIGNATURE_HEADER]: signature, 'User-Agent': 'Dossier-Webhooks/1' },
        this.config.webhooks.timeoutMs,
      );
    }
    const last = attempt >= (job.opts.attempts ?? 1);
    const outcome = result.error === null ? 'delivered' : last ? 'failed' : 'retrying';
    await this.webhooks.recordAttempt(webhookId, {
      event_id: event.id,
      event_type: event.type,
      attempt,
      outcome,
      status_code: result.statusCode,
      error: result.error,
      duration_ms: Math.round(performance.now() - startedAt),
    });
    this.logger.log({
      msg: 'webhook',
      webhook_id: webhookId,
      event_id: event.id,
      attempt,
      outcome,
      status: result.statusCode,
    });
    if (result.error !== null) throw new Error(result.error);
  }
}
