import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { UnrecoverableError, Worker, type Job, type Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { queuePrefixFor, type WorkerConfig } from '@dossier/config';
import { throttledErrorLog, type RedisConnections } from '@dossier/runtime';
import {
  SIGNATURE_HEADER,
  WEBHOOK_QUEUE,
  checkWebhookTarget,
  openSecret,
  openWebhookQueue,
  resolverAt,
  signatureHeader,
  webhookAttempts,
  webhookBackoffMs,
  webhookJobKeysSchema,
  webhookJobSchema,
  type ResolveHost,
  type WebhookJob,
} from '@dossier/contracts';
import { WebhooksRepository, type DeliveryAttempt } from '@dossier/persistence';
import { DATA_SOURCE, REDIS_CONNECTIONS, STARTING, WORKER_CONFIG } from '../infra/tokens';
import { postPinned, type PostResult } from './webhook-post';
import { FINISHED_STATES, WAITING_STATES, jobsAddedBefore } from './jobs-added-before';
import { closeWithin } from '../processors/close-workers';

/**
 * Attempts of one event that a worker may die in (SIGKILL, OOM: the job's lock expired) and still see it
 * tried again; the next such death ends the event `failed` (ADR 0020). A delivery that crashes its worker
 * every time must not crash one per retry for a day.
 */
export const WEBHOOK_MAX_INTERRUPTED = 2;
/** What a delivery row says of an attempt this worker could not sign (the operator's key, not the receiver). */
const UNSIGNABLE = "not sent: this server's WEBHOOK_SECRET_KEY does not open the webhook's signing secret";
/** What a delivery row says of an attempt whose worker died before it had an outcome. */
const INTERRUPTED = 'interrupted: the worker stopped during the attempt';
/** What a delivery row says of an event the retention pass removed before it was delivered. */
const EXPIRED = 'expired: not delivered within RESULTS_TTL_DAYS, so its body was erased with the results it carried';

/**
 * Webhooks in the worker (ADR 0020): the outbox relay (OutboxRelayService) puts one delivery job per subscribed webhook on the
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
  /** The delivery queue (retention cleans its finished jobs: each holds a lookup's envelope). */
  readonly queue: Queue<WebhookJob>;
  private readonly attempts: number;
  /** How a webhook's host is resolved before each attempt: the system's resolver, or the test's DNS servers. */
  private readonly resolveHost: ResolveHost | undefined;
  private worker?: Worker<WebhookJob>;
  /** The consumer's close, once shutdown has begun: true when the grace ran out first. */
  private closingWorker?: Promise<boolean>;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    @Inject(DATA_SOURCE) db: DataSource,
    @Inject(REDIS_CONNECTIONS) private readonly redis: RedisConnections,
    @Inject(STARTING) private readonly starting: AbortSignal,
  ) {
    this.webhooks = new WebhooksRepository(db);
    this.attempts = webhookAttempts(config.webhooks.retryBaseMs);
    this.resolveHost = config.webhooks.dnsServers ? resolverAt(config.webhooks.dnsServers) : undefined;
    this.queue = openWebhookQueue(
      queuePrefixFor(config, WEBHOOK_QUEUE),
      redis.queues(),
      this.attempts,
      config.jobRetention,
    );
    this.queue.on('error', (err) => this.logRedisError(WEBHOOK_QUEUE, err));
  }

  /**
   * Retention (ADR 0016): removes every delivery job whose event was queued more than `olderThanMs` ago,
   * in any state but active (a running attempt is left to the next pass) — its body is a search's or a
   * batch's envelope, whose results the same pass erases from Postgres at that age. BullMQ's own
   * removal counts from when a job finished, and an event retried for a day and then kept failed for
   * JOB_KEEP_FAILED_S outlived RESULTS_TTL_DAYS. An event not yet delivered is recorded `failed`.
   * Returns how many jobs it removed.
   */
  async expire(olderThanMs: number): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    for (const state of [...WAITING_STATES, ...FINISHED_STATES]) {
      const waiting = (WAITING_STATES as readonly string[]).includes(state);
      for (const id of await jobsAddedBefore(this.queue, state, cutoff)) {
        const job = waiting ? await this.queue.getJob(id) : undefined;
        if ((await this.queue.remove(id)) !== 1) continue; // taken by a worker meanwhile: the next pass
        removed += 1;
        const keys = job ? webhookJobKeysSchema.safeParse(job.data) : undefined;
        if (job && keys?.success) {
          const attempt = job.attemptsMade + (job.stalledCounter ?? 0) + 1;
          await this.record(keys.data.webhook_id, keys.data.event, attempt, 'failed', {
            statusCode: null,
            error: EXPIRED,
          });
        }
      }
    }
    return removed;
  }

  onApplicationBootstrap(): void {
    if (this.config.webhooks.key === null) {
      this.logger.warn(`WEBHOOK_SECRET_KEY is not set: ${WEBHOOK_QUEUE} is not consumed (deliveries wait)`);
      return;
    }
    const baseMs = this.config.webhooks.retryBaseMs;
    this.worker = new Worker<WebhookJob>(WEBHOOK_QUEUE, (job) => this.deliver(job), {
      connection: this.redis.consumers(),
      prefix: queuePrefixFor(this.config, WEBHOOK_QUEUE),
      concurrency: this.config.webhooks.concurrency,
      lockDuration: this.config.lockDurationMs,
      stalledInterval: this.config.stalledIntervalMs,
      // deliver() ends an event whose attempts were interrupted more often than WEBHOOK_MAX_INTERRUPTED,
      // recording it; BullMQ's own limit, one above, only ends one whose worker also died in that run.
      maxStalledCount: WEBHOOK_MAX_INTERRUPTED + 1,
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

  /**
   * One attempt: recorded whatever happens; a failure throws so BullMQ retries (or, the last, fails for good).
   * Attempts are numbered by start: one whose worker died (BullMQ found its job stalled and queued it again)
   * counts, and is recorded by the next one, as `retrying` — or, past WEBHOOK_MAX_INTERRUPTED, `failed`, and
   * the event ends there. An interrupted attempt that had recorded its outcome (its worker died before BullMQ
   * learnt it) keeps that row: recordAttempt writes one row per attempt. BullMQ counts only the attempts that failed towards the job's `attempts`, so the
   * documented retries are all made, however many workers died on the way.
   */
  private async deliver(job: Job<WebhookJob>): Promise<void> {
    const interrupted = job.stalledCounter;
    const attempt = job.attemptsMade + interrupted + 1;
    const parsed = webhookJobSchema.safeParse(job.data);
    if (!parsed.success) {
      // Ends for good (no retry reads it better), recorded when the job still names its webhook and event.
      const keys = webhookJobKeysSchema.safeParse(job.data);
      if (keys.success) {
        await this.record(keys.data.webhook_id, keys.data.event, attempt, 'failed', {
          statusCode: null,
          error: 'the event could not be read (invalid job payload): given up',
        });
      }
      throw new UnrecoverableError(`job ${job.id} has an invalid webhook payload`);
    }
    const { webhook_id: webhookId, event } = parsed.data;
    const webhook = await this.webhooks.target(webhookId);
    if (!webhook) return; // deleted since: nothing to deliver to
    // The job's progress is how many of its interruptions have rows: the others are the starts just before this one.
    const recorded = typeof job.progress === 'number' ? job.progress : 0;
    if (interrupted > recorded) {
      const givenUp = interrupted > WEBHOOK_MAX_INTERRUPTED;
      for (let n = attempt - (interrupted - recorded); n < attempt; n++) {
        const last = givenUp && n === attempt - 1;
        await this.record(webhookId, event, n, last ? 'failed' : 'retrying', {
          statusCode: null,
          error: last ? `${INTERRUPTED} (${interrupted} times for this event): given up` : INTERRUPTED,
        });
      }
      if (givenUp) throw new UnrecoverableError(`job ${job.id}: its worker died in ${interrupted} attempts`);
      await job.updateProgress(interrupted);
    }
    const startedAt = performance.now();
    const body = JSON.stringify(event);
    // One deadline for the attempt: resolving the host (a resolver that never answers must not hold the
    // slot), connecting and the answer.
    const timeoutMs = this.config.webhooks.timeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    const check = await checkWebhookTarget(webhook.url, this.config.webhooks.allowPrivate, this.resolveHost, deadline);
    const secret = this.secretOf(webhook.secret_sealed);
    let result: PostResult;
    if (!check.ok) {
      result = {
        statusCode: null,
        error: check.timedOut
          ? `not sent: the URL's host name did not resolve within ${timeoutMs} ms`
          : `refused: the URL ${check.reason}`,
      };
    } else if (secret === null) {
      result = { statusCode: null, error: UNSIGNABLE };
    } else {
      const signature = signatureHeader(secret, body, Math.floor(Date.now() / 1000));
      result = await postPinned(
        check.target,
        body,
        { [SIGNATURE_HEADER]: signature, 'User-Agent': 'Dossier-Webhooks/1' },
        timeoutMs,
        deadline,
      );
    }
    const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const outcome = result.error === null ? 'delivered' : last ? 'failed' : 'retrying';
    await this.record(webhookId, event, attempt, outcome, result, Math.round(performance.now() - startedAt));
    if (result.error !== null) throw new Error(result.error);
  }

  /**
   * The webhook's signing secret, or null when this worker's WEBHOOK_SECRET_KEY does not open it (another
   * key sealed it: changed since, or not the gateway's). Every attempt then fails, so each is recorded.
   */
  private secretOf(sealed: string): string | null {
    try {
      return openSecret(sealed, this.config.webhooks.key!);
    } catch {
      return null;
    }
  }

  /** A row of `GET /v1/webhooks/{id}/deliveries`, and its log line. */
  private async record(
    webhookId: string,
    event: Pick<WebhookJob['event'], 'id' | 'type'>,
    attempt: number,
    outcome: DeliveryAttempt['outcome'],
    result: PostResult,
    durationMs = 0,
  ): Promise<void> {
    await this.webhooks.recordAttempt(webhookId, {
      event_id: event.id,
      event_type: event.type,
      attempt,
      outcome,
      status_code: result.statusCode,
      error: result.error,
      duration_ms: durationMs,
    });
    this.logger.log({
      msg: 'webhook',
      webhook_id: webhookId,
      event_id: event.id,
      attempt,
      outcome,
      status: result.statusCode,
    });
  }
}
