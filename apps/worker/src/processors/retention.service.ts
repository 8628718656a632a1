import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Queue, Worker, type Job } from 'bullmq';
import { LOOKUP_KINDS, settledBefore } from '@dossier/domain';
import { queuePrefixFor, type WorkerConfig } from '@dossier/config';
import { throttledErrorLog, type RedisConnections } from '@dossier/runtime';
import { MAINTENANCE_QUEUE, RETENTION_JOB_NAME, RETENTION_SCHEDULER_ID, type LookupQueues } from '@dossier/contracts';
import { BatchesRepository, SearchesRepository, WebhooksRepository } from '@dossier/persistence';
import { LOOKUP_QUEUES, REDIS_CONNECTIONS, STARTING, WORKER_CONFIG } from '../infra/tokens';
import { WebhookDeliveryService } from '../webhooks/webhook-delivery.service';
import { WorkerMetrics } from './worker-metrics';
import { closeWithin } from './close-workers';
import { ReconcilerService } from './reconciler.service';

/** Finished jobs cleaned from one queue's set per pass (BullMQ cleans in bounded steps). */
const CLEAN_LIMIT = 10_000;
const DAY_MS = 86_400_000;

export interface RetentionOutcome {
  /** Searches still pending past RESULTS_TTL_DAYS, failed and released (their jobs removed) before the purge. */
  expired: number;
  /** Searches whose input, results and sources were erased. */
  searches: number;
  /** Batches whose request hash and Idempotency-Key were erased. */
  batches: number;
  /** Webhook delivery attempts (rows of `GET /v1/webhooks/{id}/deliveries`) deleted. */
  deliveries: number;
  /** Finished lookup and webhook-delivery jobs, and expired delivery jobs (and their payloads), removed from Redis. */
  jobs: number;
}

/**
 * Retention, once across all workers: a BullMQ job scheduler on the maintenance queue produces one
 * retention job every RETENTION_INTERVAL_MS. Every worker with WORKER_MAINTENANCE on upserts the same
 * scheduler id (one schedule however many start) and consumes the queue: one worker runs each pass, and a
 * pass that outlasts the interval may meet the next on another worker (each purge statement skips the rows
 * the other holds; ADR 0016). A pass fails and releases the searches still pending RESULTS_TTL_DAYS after
 * they were made (their jobs removed), erases the inputs and results of searches older than
 * RESULTS_TTL_DAYS (the audit columns stay), deletes webhook delivery attempts as old, and removes
 * finished lookup and webhook-delivery jobs (a lookup's input; an event's whole envelope) past their
 * JOB_KEEP_* age, which BullMQ otherwise removes only when another job of the queue finishes, and every
 * webhook-delivery job queued more than RESULTS_TTL_DAYS ago, whatever its state.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('retention');
  /** The queue's and the consumer's connection errors: one line per 10 s while Redis is away. */
  private readonly logRedisError = throttledErrorLog((message) => this.logger.warn(message));
  private queue?: Queue;
  private worker?: Worker;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    private readonly searchesRepository: SearchesRepository,
    private readonly batchesRepository: BatchesRepository,
    private readonly webhooksRepository: WebhooksRepository,
    @Inject(REDIS_CONNECTIONS) private readonly redis: RedisConnections,
    @Inject(LOOKUP_QUEUES) private readonly lookupQueues: LookupQueues,
    private readonly metrics: WorkerMetrics,
    private readonly webhooks: WebhookDeliveryService,
    private readonly reconciler: ReconcilerService,
    @Inject(STARTING) private readonly starting: AbortSignal,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const maintenance = this.config.maintenance;
    if (!maintenance) return;
    const prefix = queuePrefixFor(this.config, MAINTENANCE_QUEUE);
    this.queue = new Queue(MAINTENANCE_QUEUE, { prefix, connection: this.redis.queues() });
    this.queue.on('error', (err) => this.logRedisError(MAINTENANCE_QUEUE, err));
    const scheduled = this.queue.upsertJobScheduler(
      RETENTION_SCHEDULER_ID,
      { every: maintenance.intervalMs },
      {
        name: RETENTION_JOB_NAME,
        data: { v: 1 },
        opts: { removeOnComplete: { count: 20 }, removeOnFail: { count: 50 } },
      },
    );
    // A stop while Redis is still away ends the start-up waits; shutdown closes what started.
    if (!(await settledBefore(scheduled, this.starting))) return;
    this.worker = new Worker(MAINTENANCE_QUEUE, (job: Job) => this.process(job), {
      prefix,
      connection: this.redis.consumers(),
      concurrency: 1,
      autorun: false,
    });
    this.worker.on('error', (err) => this.logRedisError('maintenance worker', err));
    this.worker.on('failed', (_job, err) => this.logger.warn(`retention pass failed: ${err.message}`));
    void this.worker.run().catch((err: unknown) => this.logger.error(`maintenance worker stopped: ${String(err)}`));
    await settledBefore(this.worker.waitUntilReady(), this.starting);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.worker && (await closeWithin([this.worker], this.config.shutdownGraceMs, this.starting))) {
      this.logger.warn('grace period over: closing anyway (a retention pass still running runs again later)');
    }
    await this.queue?.close();
  }

  private async process(job: Job): Promise<RetentionOutcome> {
    if (job.name !== RETENTION_JOB_NAME)
      throw new Error(`no processor for job name ${job.name} on ${MAINTENANCE_QUEUE}`);
    return this.runOnce();
  }

  /** One retention pass (what the scheduled job runs). */
  async runOnce(): Promise<RetentionOutcome> {
    const days = this.config.resultsTtlDays;
    // First, so that the purge below erases their inputs with the settled searches'.
    const expired = await this.reconciler.expire(days);
    const searches = await this.searchesRepository.purgeResults(days);
    this.metrics.reconciled('purged', searches);
    const batches = await this.batchesRepository.purgeRequestHashes(days);
    const deliveries = await this.webhooksRepository.purgeDeliveries(days);
    const { completed, failed } = this.config.jobRetention;
    let jobs = 0;
    for (const queue of [...LOOKUP_KINDS.map((kind) => this.lookupQueues[kind]), this.webhooks.queue]) {
      jobs += (await queue.clean(completed.age * 1000, CLEAN_LIMIT, 'completed')).length;
      jobs += (await queue.clean(failed.age * 1000, CLEAN_LIMIT, 'failed')).length;
    }
    // An event's body is the envelope with its results: gone at the age the search's are, whatever its state.
    jobs += await this.webhooks.expire(days * DAY_MS);
    if (expired > 0 || searches > 0 || batches > 0 || deliveries > 0 || jobs > 0) {
      this.logger.log(
        `failed and released ${expired} search(es) still pending; purged the inputs and results of ${searches} search(es), the request hashes of ${batches} batch(es) and ${deliveries} webhook delivery attempt(s) older than ${days} days; removed ${jobs} finished job(s)`,
      );
    }
    return { expired, searches, batches, deliveries, jobs };
  }
}
