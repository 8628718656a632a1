import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import { blockingRedisOptions, type WorkerConfig } from '@dossier/config';
import { JOB_NAMES, QUEUE_NAMES } from '@dossier/contracts';
import { PROVIDERS, providersFor } from '@dossier/providers';
import { SearchesRepository } from '@dossier/persistence';
import { WORKER_CONFIG } from '../infra/tokens';
import { FanOut } from '../fan-out/fan-out';
import { LookupProcessor } from './lookup.processor';
import { WorkerMetrics } from './worker-metrics';

/**
 * One BullMQ Worker per lookup kind named in LOOKUP_QUEUES. On shutdown the workers close first and
 * let active jobs finish (up to WORKER_SHUTDOWN_GRACE_MS); connections close after.
 */
@Injectable()
export class WorkerHostService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('worker');
  private readonly workers: Worker[] = [];

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    private readonly searches: SearchesRepository,
    private readonly fanOut: FanOut,
    private readonly metrics: WorkerMetrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const searches = this.searches;
    for (const kind of this.config.kinds) {
      const providers = providersFor(kind, PROVIDERS);
      if (providers.length === 0) {
        this.logger.warn(
          `no provider serves ${kind} lookups yet: they complete with empty results and are not charged`,
        );
      }
      const processor = new LookupProcessor(kind, providers, searches, this.fanOut, this.config.testHold);
      const worker = new Worker(
        QUEUE_NAMES[kind],
        async (job: Job) => {
          if (job.name !== JOB_NAMES[kind])
            throw new Error(`no processor for job name ${job.name} on ${QUEUE_NAMES[kind]}`);
          return this.metrics.timeJob(QUEUE_NAMES[kind], () => processor.process(job));
        },
        {
          connection: blockingRedisOptions(this.config.redisUrl),
          prefix: this.config.queuePrefix,
          concurrency: this.config.concurrency[kind],
          lockDuration: this.config.lockDurationMs,
          stalledInterval: this.config.stalledIntervalMs,
          maxStalledCount: 2,
          autorun: false,
        },
      );
      worker.on('failed', (job, err) => {
        if (!job) return;
        const exhausted = job.attemptsMade >= (job.opts.attempts ?? 1) || err.name === 'UnrecoverableError';
        if (!exhausted) return;
        processor
          .fail(job, err.message)
          .catch((e: unknown) =>
            this.logger.error(`could not release failed job ${job.id}: ${String(e)} (the reconciler will)`),
          );
      });
      worker.on('error', (err) => this.logger.error(`${kind} worker: ${err.message}`));
      this.workers.push(worker);
      void worker.run().catch((err: unknown) => this.logger.error(`${kind} worker stopped: ${String(err)}`));
      this.logger.log(
        `consuming ${QUEUE_NAMES[kind]} (concurrency ${this.config.concurrency[kind]}, providers: ${providers.map((p) => p.id).join(', ') || 'none'})`,
      );
    }
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  /** Every queue's worker runs, is not closing, and its Redis connection is up. */
  async isHealthy(): Promise<boolean> {
    if (this.workers.length === 0) return false;
    const states = await Promise.all(
      this.workers.map(async (w) => w.isRunning() && !w.closing && (await w.getBackend().client).status === 'ready'),
    );
    return states.every(Boolean);
  }

  async onApplicationShutdown(signal?: string): Promise<void> {
    this.logger.log(`shutting down (${signal ?? 'close'}): finishing active jobs`);
    const graceful = Promise.all(this.workers.map((w) => w.close()));
    const timedOut = await Promise.race([
      graceful.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), this.config.shutdownGraceMs).unref()),
    ]);
    if (timedOut) {
      this.logger.warn('grace period over: closing with jobs still active (they will be redelivered)');
      await Promise.all(this.workers.map((w) => w.close(true)));
    }
  }
}
