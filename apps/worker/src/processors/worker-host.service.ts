import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import type { DataSource } from 'typeorm';
import { settledBefore, type LookupKind } from '@dossier/domain';
import {
  throttledErrorLog,
  whenReady,
  type RedisClient,
  type RedisConnections,
  type WorkerConfig,
} from '@dossier/config';
import {
  JOB_NAMES,
  LOOKUP_RESULT_VERSION,
  QUEUE_NAMES,
  type LookupJobResult,
  type LookupQueues,
} from '@dossier/contracts';
import { PROVIDERS, providersFor } from '@dossier/providers';
import { SearchesRepository, SuppressionsRepository } from '@dossier/persistence';
import { DATA_SOURCE, LOOKUP_QUEUES, REDIS, REDIS_CONNECTIONS, STARTING, WORKER_CONFIG } from '../infra/tokens';
import { FanOut } from '../fan-out/fan-out';
import { SuppressionFilter } from '../fan-out/suppression';
import { LookupProcessor, searchIdOf } from './lookup.processor';
import { WorkerMetrics } from './worker-metrics';
import { closeWithin } from './close-workers';
import { WebhookDeliveryService } from '../webhooks/webhook-delivery.service';

/** One queue's consumer in this process, and when it last finished a job (completed or failed). */
interface Consumer {
  kind: LookupKind;
  worker: Worker;
  lastFinishedAt: number;
  /** When its connection last failed (an error, or found not connected): an outage is not a stall. */
  lastTroubleAt: number;
  /** Jobs this process is running for the queue now. */
  inFlight: number;
}

/** Whether this process consumes its queues: connected, and finishing jobs when jobs wait. */
export interface ConsumerHealth {
  /** Every queue's worker runs, is not closing, and its Redis connection is up. */
  connected: boolean;
  /**
   * The kinds whose queue has held a waiting job for longer than WORKER_READY_STALL_MS while this
   * process finished none of that kind, and had no connection trouble, in as long: jobs wait and
   * nothing here takes them.
   */
  stalled: LookupKind[];
}

/**
 * One BullMQ Worker per lookup kind named in LOOKUP_QUEUES. On shutdown the workers close first and
 * let active jobs finish (up to WORKER_SHUTDOWN_GRACE_MS); connections close after. A worker found
 * stalled (see ConsumerHealth) with a free slot is closed and started again: BullMQ workers have been
 * seen to stop fetching after a Redis restart without reporting an error (ADR 0016).
 */
@Injectable()
export class WorkerHostService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('worker');
  /** A Redis outage raises several errors a second on every consumer: one line per 10 s says it. */
  private readonly logConsumerError = throttledErrorLog((message) => this.logger.error(message));
  private readonly consumers: Consumer[] = [];
  private readonly restarting = new Set<LookupKind>();
  private closing = false;
  private watchdog?: NodeJS.Timeout;
  /** One list for every kind's consumer: the checks of all of them made at the same time share a query. */
  private readonly suppressions: SuppressionsRepository;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    private readonly searches: SearchesRepository,
    @Inject(DATA_SOURCE) db: DataSource,
    @Inject(REDIS_CONNECTIONS) private readonly redis: RedisConnections,
    /**
     * The process's fail-fast command connection, which the upstream guards use too: publishes each job's
     * result on the reply channel of the gateway that queued it (ADR 0024).
     */
    @Inject(REDIS) private readonly replies: RedisClient,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
    private readonly fanOut: FanOut,
    private readonly metrics: WorkerMetrics,
    private readonly webhooks: WebhookDeliveryService,
    @Inject(STARTING) private readonly starting: AbortSignal,
  ) {
    this.suppressions = new SuppressionsRepository(db);
  }

  private get workers(): Worker[] {
    return this.consumers.map((c) => c.worker);
  }

  async onApplicationBootstrap(): Promise<void> {
    // Ready before the first job: a fail-fast connection refuses commands until it is connected. A stop
    // while Redis is still away ends the wait: shutdown closes what started.
    if (!(await settledBefore(whenReady(this.replies), this.starting))) return;
    for (const kind of this.config.kinds) {
      const providers = providersFor(kind, PROVIDERS);
      if (providers.length === 0) {
        this.logger.warn(
          `no provider serves ${kind} lookups yet: they complete with empty results and are not charged`,
        );
      }
      this.consumers.push({
        kind,
        worker: this.startWorker(kind),
        lastFinishedAt: Date.now(),
        lastTroubleAt: 0,
        inFlight: 0,
      });
      this.logger.log(
        `consuming ${QUEUE_NAMES[kind]} (concurrency ${this.config.concurrency[kind]}, providers: ${providers.map((p) => p.id).join(', ') || 'none'})`,
      );
    }
    if (!(await settledBefore(Promise.all(this.workers.map((w) => w.waitUntilReady())), this.starting))) return;
    // Whether or not anything probes /health/ready, a stalled worker is found and restarted.
    this.watchdog = setInterval(() => void this.health(), Math.max(500, Math.floor(this.config.readyStallMs / 2)));
    this.watchdog.unref();
  }

  /**
   * Tells the gateway that queued the job (its `reply_to`) how it ended. Best effort: a gateway that
   * misses it finds the settled search in Postgres within a second.
   */
  private reply(job: Job, result: LookupJobResult): void {
    const to = (job.data as { reply_to?: unknown } | null)?.reply_to;
    if (typeof to !== 'string') return;
    this.replies
      .publish(to, JSON.stringify(result))
      .catch((err: unknown) => this.logger.warn(`could not publish the result of ${job.id}: ${String(err)}`));
  }

  private startWorker(kind: LookupKind): Worker {
    const processor = new LookupProcessor(
      kind,
      providersFor(kind, PROVIDERS),
      providersFor(kind, PROVIDERS, 'test'),
      this.searches,
      this.fanOut,
      new SuppressionFilter(
        this.suppressions,
        new Set(PROVIDERS.filter((p) => p.findsOnly === 'accounts').map((p) => p.id)),
      ),
      this.config.testFailEvents
        ? () => Promise.reject(new Error('test: queueing the webhook events failed (WORKER_TEST_FAIL_EVENTS)'))
        : (searchId, status, announce) => this.webhooks.searchSettled(searchId, status, announce),
    );
    const worker = new Worker(
      QUEUE_NAMES[kind],
      async (job: Job) => {
        if (job.name !== JOB_NAMES[kind])
          throw new Error(`no processor for job name ${job.name} on ${QUEUE_NAMES[kind]}`);
        const consumer = this.consumers.find((c) => c.kind === kind);
        if (consumer) consumer.inFlight += 1;
        try {
          const result = await this.metrics.timeJob(QUEUE_NAMES[kind], () => processor.process(job));
          this.reply(job, result);
          // The outcome (the lookup's results) goes to the waiting gateway only. BullMQ keeps a return value in
          // the job and in the queue's events stream, which is trimmed by length, never by age: past
          // RESULTS_TTL_DAYS it would still hold the results that the retention pass erased (ADR 0016).
          const { outcome: _outcome, ...pointer } = result;
          return pointer;
        } finally {
          if (consumer) consumer.inFlight = Math.max(0, consumer.inFlight - 1);
        }
      },
      {
        connection: this.redis.consumers(),
        prefix: this.config.queuePrefix,
        concurrency: this.config.concurrency[kind],
        lockDuration: this.config.lockDurationMs,
        stalledInterval: this.config.stalledIntervalMs,
        maxStalledCount: 2,
        autorun: false,
      },
    );
    const finished = () => {
      const consumer = this.consumers.find((c) => c.worker === worker);
      if (consumer) consumer.lastFinishedAt = Date.now();
    };
    worker.on('completed', finished);
    worker.on('failed', (job, err) => {
      finished();
      if (!job) return;
      const exhausted = job.attemptsMade >= (job.opts.attempts ?? 1) || err.name === 'UnrecoverableError';
      if (!exhausted) return;
      processor
        .fail(job, err.message)
        .then(() => {
          const searchId = searchIdOf(job);
          if (searchId) this.reply(job, { v: LOOKUP_RESULT_VERSION, search_id: searchId, status: 'failed' });
        })
        .catch((e: unknown) =>
          this.logger.error(`could not release failed job ${job.id}: ${String(e)} (the reconciler will)`),
        );
    });
    worker.on('error', (err) => {
      const consumer = this.consumers.find((c) => c.worker === worker);
      if (consumer) consumer.lastTroubleAt = Date.now();
      this.logConsumerError(`${kind} worker`, err);
    });
    void worker.run().catch((err: unknown) => this.logger.error(`${kind} worker stopped: ${String(err)}`));
    return worker;
  }

  /** How this process consumes its queues; a stalled queue's worker is restarted (see the class). */
  async health(): Promise<ConsumerHealth> {
    if (this.consumers.length === 0) return { connected: false, stalled: [] };
    const [connected, stalled] = await Promise.all([
      this.isConnected(),
      // Unreadable queues (Redis down) show as not connected, not as stalled.
      this.stalledKinds().catch((): LookupKind[] => []),
    ]);
    if (!connected) for (const c of this.consumers) c.lastTroubleAt = Date.now();
    // A worker with a free slot that takes no waiting job has stopped fetching: restart it. One whose
    // slots are all busy with slow jobs is only reported (restarting would abandon those jobs).
    for (const c of this.consumers) {
      if (stalled.includes(c.kind) && c.inFlight < this.config.concurrency[c.kind]) void this.restart(c.kind);
    }
    return { connected, stalled };
  }

  private async isConnected(): Promise<boolean> {
    const states = await Promise.all(
      this.workers.map(async (w) => w.isRunning() && !w.closing && (await w.getBackend().client).status === 'ready'),
    );
    return states.every(Boolean);
  }

  private async stalledKinds(): Promise<LookupKind[]> {
    const bound = this.config.readyStallMs;
    const now = Date.now();
    const stalled = await Promise.all(
      this.consumers.map(async (c) => {
        // Counted from the last job finished or the last connection trouble, whichever is later: after
        // a Redis outage the worker gets the whole bound to take the jobs that waited through it.
        if (now - Math.max(c.lastFinishedAt, c.lastTroubleAt) <= bound) return false;
        const [oldest] = await this.queues[c.kind].getJobs(['wait'], 0, 0, true);
        return oldest !== undefined && now - oldest.timestamp > bound;
      }),
    );
    return this.consumers.filter((_, i) => stalled[i]).map((c) => c.kind);
  }

  /** Closes a stalled queue's worker (its active jobs are redelivered once their locks expire) and starts another. */
  private async restart(kind: LookupKind): Promise<void> {
    const consumer = this.consumers.find((c) => c.kind === kind);
    if (!consumer || this.closing || this.restarting.has(kind)) return;
    this.restarting.add(kind);
    try {
      this.logger.warn(
        `${QUEUE_NAMES[kind]}: jobs wait and this worker finished none in ${this.config.readyStallMs} ms: restarting it`,
      );
      await consumer.worker
        .close(true)
        .catch((err: unknown) => this.logger.warn(`closing the stalled ${kind} worker: ${String(err)}`));
      if (this.closing) return;
      consumer.worker = this.startWorker(kind);
      consumer.lastFinishedAt = Date.now();
      consumer.inFlight = 0;
    } finally {
      this.restarting.delete(kind);
    }
  }

  async onApplicationShutdown(signal?: string): Promise<void> {
    this.closing = true;
    if (this.watchdog) clearInterval(this.watchdog);
    this.logger.log(`shutting down (${signal ?? 'close'}): finishing active jobs`);
    if (await closeWithin(this.workers, this.config.shutdownGraceMs, this.starting)) {
      this.logger.warn('grace period over: closing anyway (jobs still active will be redelivered)');
    }
  }
}
