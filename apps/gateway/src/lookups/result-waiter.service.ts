import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { QueueEvents } from 'bullmq';
import { LOOKUP_KINDS } from '@dossier/domain';
import { blockingRedisOptions, type GatewayConfig } from '@dossier/config';
import { QUEUE_NAMES } from '@dossier/contracts';
import { SearchesRepository } from '@dossier/persistence';
import { GATEWAY_CONFIG } from '../infra/tokens';

/** How often waiters that have seen no event re-check Postgres (a missed event costs latency, never correctness). */
const FALLBACK_POLL_MS = 1000;

/**
 * One QueueEvents listener per queue and process, and a map of waiters: never a
 * `waitUntilFinished` per request (listener leaks, races with removeOnComplete).
 */
@Injectable()
export class ResultWaiterService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ResultWaiterService.name);
  private readonly waiters = new Map<string, { since: number; wake: Set<() => void> }>();
  private readonly events: QueueEvents[] = [];
  private poller?: NodeJS.Timeout;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(SearchesRepository) private readonly searches: SearchesRepository,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const kind of LOOKUP_KINDS) {
      const events = new QueueEvents(QUEUE_NAMES[kind], {
        connection: blockingRedisOptions(this.config.redisUrl),
        prefix: this.config.queuePrefix,
      });
      events.on('completed', ({ jobId }) => this.notify(jobId));
      events.on('failed', ({ jobId }) => this.notify(jobId));
      events.on('error', (err) => this.logger.warn(`queue events (${kind}): ${err.message}`));
      this.events.push(events);
    }
    await Promise.all(this.events.map((e) => e.waitUntilReady()));
    this.poller = setInterval(() => void this.pollStale(), FALLBACK_POLL_MS);
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
  watch(searchId: string): { next: (timeoutMs: number) => Promise<void>; dispose: () => void } {
    let entry = this.waiters.get(searchId);
    if (!entry) {
      entry = { since: Date.now(), wake: new Set() };
      this.waiters.set(searchId, entry);
    }
    const current = entry;
    let signalled = false;
    let resolveCurrent: (() => void) | null = null;
    const wake = () => {
      signalled = true;
      resolveCurrent?.();
    };
    current.wake.add(wake);
    return {
      next: (timeoutMs) =>
        new Promise<void>((resolve) => {
          if (signalled) {
            signalled = false;
            resolve();
            return;
          }
          const timer = setTimeout(() => {
            resolveCurrent = null;
            resolve();
          }, timeoutMs);
          resolveCurrent = () => {
            clearTimeout(timer);
            resolveCurrent = null;
            signalled = false;
            resolve();
          };
        }),
      dispose: () => {
        current.wake.delete(wake);
        if (current.wake.size === 0 && this.waiters.get(searchId) === current) this.waiters.delete(searchId);
      },
    };
  }

  private notify(searchId: string): void {
    const entry = this.waiters.get(searchId);
    if (entry) for (const wake of entry.wake) wake();
  }

  private async pollStale(): Promise<void> {
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
