import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import { settledBefore, type LookupKind } from '@dossier/domain';
import { queuePrefixFor, type WorkerConfig } from '@dossier/config';
import { throttledErrorLog, type RedisConnections } from '@dossier/runtime';
import { JOB_NAMES, QUEUE_NAMES, type LookupQueues } from '@dossier/contracts';
import { PROVIDERS, providersFor } from '@dossier/providers';
import { LOOKUP_QUEUES, REDIS_CONNECTIONS, STARTING, WORKER_CONFIG } from '../infra/tokens';
import { WorkerMetrics } from './worker-metrics';
import { closeWithin } from './close-workers';
import { LookupProcessors } from './lookup-processors';
import { ReplyPublisher } from './reply-publisher';
import { StallWatchdog, type Consumer, type ConsumerHealth } from './stall-watchdog';

/**
 * One BullMQ Worker per lookup kind named in LOOKUP_QUEUES. On shutdown the workers close first and
 * let active jobs finish (up to WORKER_SHUTDOWN_GRACE_MS); connections close after. A worker the
 * StallWatchdog finds stalled is closed and started again (ADR 0016).
 */
@Injectable()
export class WorkerHostService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('worker');
  /** A Redis outage raises several errors a second on every consumer: one line per 10 s says it. */
  private readonly logConsumerError = throttledErrorLog((message) => this.logger.error(message));
  private readonly consumers: Consumer[] = [];
  private readonly restarting = new Set<LookupKind>();
  private readonly watchdog: StallWatchdog;
  private closing = false;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    @Inject(REDIS_CONNECTIONS) private readonly redis: RedisConnections,
    @Inject(LOOKUP_QUEUES) queues: LookupQueues,
    private readonly processors: LookupProcessors,
    private readonly replies: ReplyPublisher,
    private readonly metrics: WorkerMetrics,
    @Inject(STARTING) private readonly starting: AbortSignal,
  ) {
    this.watchdog = new StallWatchdog(this.consumers, queues, config, (c) => this.restart(c));
  }

  private get workers(): Worker[] {
    return this.consumers.map((c) => c.worker);
  }

  async onApplicationBootstrap(): Promise<void> {
    // Ready before the first job. A stop while Redis is still away ends the wait: shutdown closes what started.
    if (!(await this.replies.ready())) return;
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
    this.watchdog.start();
  }

  /** How this process consumes its queues (see ConsumerHealth); a stalled queue's worker is restarted. */
  health(): Promise<ConsumerHealth> {
    return this.watchdog.health();
  }

  private startWorker(kind: LookupKind): Worker {
    const processor = this.processors.for(kind);
    const consumer = () => this.consumers.find((c) => c.worker === worker);
    const worker = new Worker(
      QUEUE_NAMES[kind],
      async (job: Job) => {
        if (job.name !== JOB_NAMES[kind])
          throw new Error(`no processor for job name ${job.name} on ${QUEUE_NAMES[kind]}`);
        const running = this.consumers.find((c) => c.kind === kind);
        if (running) running.inFlight += 1;
        try {
          const result = await this.metrics.timeJob(QUEUE_NAMES[kind], () => processor.process(job));
          this.replies.publish(job, result);
          // The outcome (the lookup's results) goes to the waiting gateway only. BullMQ keeps a return value in
          // the job and in the queue's events stream, which is trimmed by length, never by age: past
          // RESULTS_TTL_DAYS it would still hold the results that the retention pass erased (ADR 0016).
          const { outcome: _outcome, ...pointer } = result;
          return pointer;
        } finally {
          if (running) running.inFlight = Math.max(0, running.inFlight - 1);
        }
      },
      {
        connection: this.redis.consumers(),
        prefix: queuePrefixFor(this.config, QUEUE_NAMES[kind]),
        concurrency: this.config.concurrency[kind],
        lockDuration: this.config.lockDurationMs,
        stalledInterval: this.config.stalledIntervalMs,
        maxStalledCount: 2,
        autorun: false,
      },
    );
    const finished = () => {
      const c = consumer();
      if (c) c.lastFinishedAt = Date.now();
    };
    worker.on('completed', finished);
    worker.on('failed', (job, err) => {
      finished();
      if (!job) return;
      const exhausted = job.attemptsMade >= (job.opts.attempts ?? 1) || err.name === 'UnrecoverableError';
      if (!exhausted) return;
      processor
        .fail(job, err.message)
        .then(() => this.replies.failed(job))
        .catch((e: unknown) =>
          this.logger.error(`could not release failed job ${job.id}: ${String(e)} (the reconciler will)`),
        );
    });
    worker.on('error', (err) => {
      const c = consumer();
      if (c) c.lastTroubleAt = Date.now();
      this.logConsumerError(`${kind} worker`, err);
    });
    void worker.run().catch((err: unknown) => this.logger.error(`${kind} worker stopped: ${String(err)}`));
    return worker;
  }

  /** Closes a stalled queue's worker (its active jobs are redelivered once their locks expire) and starts another. */
  private async restart(consumer: Consumer): Promise<void> {
    const { kind } = consumer;
    if (this.closing || this.restarting.has(kind)) return;
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
    this.watchdog.stop();
    this.logger.log(`shutting down (${signal ?? 'close'}): finishing active jobs`);
    if (await closeWithin(this.workers, this.config.shutdownGraceMs, this.starting)) {
      this.logger.warn('grace period over: closing anyway (jobs still active will be redelivered)');
    }
  }
}
