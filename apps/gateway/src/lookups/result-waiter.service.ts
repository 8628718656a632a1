import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { QueueEvents } from 'bullmq';
import { LOOKUP_KINDS } from '@dossier/domain';
import type { GatewayConfig, RedisConnections } from '@dossier/config';
import { QUEUE_NAMES, lookupJobResultSchema, type LookupJobResult } from '@dossier/contracts';
import { SearchesRepository } from '@dossier/persistence';
import { GATEWAY_CONFIG, REDIS_CONNECTIONS } from '../infra/tokens';

/** How often waiters that have seen no event re-check Postgres (a missed event costs latency, never correctness). */
const FALLBACK_POLL_MS = 1000;

/**
 * One QueueEvents listener per queue and process, and a map of waiters: never a
 * `waitUntilFinished` per request (listener leaks, races with removeOnComplete).
 */
@Injectable()
export class ResultWaiterService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ResultWaiterService.name);
  private readonly waiters = new Map<string, { since: number; wake: Set<(result?: LookupJobResult) => void> }>();
  private readonly events: QueueEvents[] = [];
  private poller?: NodeJS.Timeout;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(SearchesRepository) private readonly searches: SearchesRepository,
    @Inject(REDIS_CONNECTIONS) private readonly redis: RedisConnections,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const kind of LOOKUP_KINDS) {
      const events = new QueueEvents(QUEUE_NAMES[kind], {
        connection: this.redis.consumers(),
        prefix: this.config.queuePrefix,
      });
      events.on('completed', ({ jobId, returnvalue }) => this.completed(jobId, returnvalue));
      events.on('failed', ({ jobId }) => this.failed(jobId));
      events.on('error', (err) => this.logger.warn(`queue events (${kind}): ${err.message}`));
      this.events.push(events);
    }
    await Promise.all(this.events.map((e) => e.waitUntilReady()));
    this.poller = setInterval(() => void this.pollSettled(), FALLBACK_POLL_MS);
    this.poller.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.poller) clearInterval(this.poller);
    for (const w of this.waiters.values()) for (const wake of w.wake) wake();
    await Promise.allSettled(this.events.map((e) => e.close()));
  }

  /**
   * Resolves when something happened to the search (an event or a fallback check) or the time is up.
   * Register before enqueueing so a fast completion cannot be missed; callers re-read Postgres after.
   */
  watch(searchId: string): SearchWatch {
    let entry = this.waiters.get(searchId);
    if (!entry) {
      entry = { since: Date.now(), wake: new Set() };
      this.waiters.set(searchId, entry);
    }
    const current = entry;
    let signalled = false;
    let carried: LookupJobResult | undefined;
    let resolveCurrent: (() => void) | null = null;
    const wake = (result?: LookupJobResult) => {
      signalled = true;
      carried = result ?? carried;
      resolveCurrent?.();
    };
    current.wake.add(wake);
    return {
      next: (timeoutMs) =>
        new Promise<LookupJobResult | undefined>((resolve) => {
          const take = () => {
            const result = carried;
            carried = undefined;
            signalled = false;
            return result;
          };
          if (signalled) {
            resolve(take());
            return;
          }
          const timer = setTimeout(() => {
            resolveCurrent = null;
            resolve(undefined);
          }, timeoutMs);
          resolveCurrent = () => {
            clearTimeout(timer);
            resolveCurrent = null;
            resolve(take());
          };
        }),
      dispose: () => {
        current.wake.delete(wake);
        if (current.wake.size === 0 && this.waiters.get(searchId) === current) this.waiters.delete(searchId);
      },
    };
  }

  /** A lookup job completed (job id = search id): wake its waiters with the outcome it carries, if any. */
  completed(jobId: string, returnvalue: unknown): void {
    this.notify(jobId, parseResult(returnvalue));
  }

  /** A lookup job failed: its waiters read the search from Postgres. */
  failed(jobId: string): void {
    this.notify(jobId);
  }

  private notify(searchId: string, result?: LookupJobResult): void {
    const entry = this.waiters.get(searchId);
    if (entry) for (const wake of entry.wake) wake(result);
  }

  /** Re-checks Postgres for the searches whose waiters have heard nothing for a while, and wakes the settled ones. */
  async pollSettled(): Promise<void> {
    const cutoff = Date.now() - FALLBACK_POLL_MS;
    const stale = [...this.waiters.entries()].filter(([, w]) => w.since < cutoff).map(([id]) => id);
    if (stale.length === 0) return;
    try {
      for (const id of await this.searches.findSettled(stale)) this.notify(id);
    } catch (err) {
      this.logger.warn(`fallback poll failed: ${String(err)}`);
    }
  }
}

export interface SearchWatch {
  /**
   * Resolves when something happened to the search or the time is up; with the job's return value
   * when a completion event carried one (callers fall back to Postgres without it).
   */
  next: (timeoutMs: number) => Promise<LookupJobResult | undefined>;
  dispose: () => void;
}

/** A completion event's return value, if it is one this gateway understands (else undefined: read Postgres). */
function parseResult(returnvalue: unknown): LookupJobResult | undefined {
  let value = returnvalue;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  const parsed = lookupJobResultSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
