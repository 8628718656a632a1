import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Job } from 'bullmq';
import { settledBefore } from '@dossier/domain';
import { whenReady, type RedisClient } from '@dossier/runtime';
import { LOOKUP_RESULT_VERSION, type LookupJobResult } from '@dossier/contracts';
import { REDIS, STARTING } from '../infra/tokens';
import { searchIdOf } from './lookup.processor';

/**
 * Tells the gateway that queued a job (its `reply_to`) how it ended, on its reply channel (ADR 0024). Best
 * effort: a gateway that misses it finds the settled search in Postgres within a second.
 */
@Injectable()
export class ReplyPublisher {
  private readonly logger = new Logger('worker');

  constructor(
    /** The process's fail-fast command connection, which the upstream guards use too. */
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(STARTING) private readonly starting: AbortSignal,
  ) {}

  /**
   * Whether the connection is ready (a fail-fast connection refuses commands until it is connected); false
   * when a stop came first, while Redis was still away.
   */
  ready(): Promise<boolean> {
    return settledBefore(whenReady(this.redis), this.starting);
  }

  /** A job's result. */
  publish(job: Job, result: LookupJobResult): void {
    const to = (job.data as { reply_to?: unknown } | null)?.reply_to;
    if (typeof to !== 'string') return;
    this.redis
      .publish(to, JSON.stringify(result))
      .catch((err: unknown) => this.logger.warn(`could not publish the result of ${job.id}: ${String(err)}`));
  }

  /** That a job's search failed, once its last attempt has released it. */
  failed(job: Job): void {
    const searchId = searchIdOf(job);
    if (searchId) this.publish(job, { v: LOOKUP_RESULT_VERSION, search_id: searchId, status: 'failed' });
  }
}
