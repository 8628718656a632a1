import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { randomBase62, settledBefore } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import { throttledErrorLog, type RedisClient, type RedisConnections } from '@dossier/runtime';
import { lookupJobResultSchema, replyChannel, type LookupJobResult } from '@dossier/contracts';
import { SearchesRepository } from '@dossier/persistence';
import { GATEWAY_CONFIG, REDIS_CONNECTIONS, STARTING } from '../infra/tokens';

/** How often waiters that have seen no event re-check Postgres (a missed event costs latency, never correctness). */
const FALLBACK_POLL_MS = 1000;

/**
 * How this gateway hears that its lookups finished (ADR 0024): every job it queues names this process's
 * reply channel, the worker publishes the job's result there, and one subscriber connection wakes the
 * waiters — so a gateway parses only its own requests' completions, however many gateways and jobs
 * there are. Never a `waitUntilFinished` per request (listener leaks, races with removeOnComplete). A
 * missed message (a reconnect, a worker that could not publish) costs latency, never correctness: the
 * waiters that heard nothing re-check Postgres every second.
 */
@Injectable()
export class ResultWaiterService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ResultWaiterService.name);
  private readonly waiters = new Map<string, { since: number; wake: Set<(result?: LookupJobResult) => void> }>();
  private subscriber?: RedisClient;
  private poller?: NodeJS.Timeout;
  /** This process's reply channel: what its jobs carry as `reply_to`. */
  readonly replyTo: string;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Inject(SearchesRepository) private readonly searches: SearchesRepository,
    @Inject(REDIS_CONNECTIONS) private readonly redis: RedisConnections,
    @Inject(STARTING) private readonly starting: AbortSignal,
  ) {
    this.replyTo = replyChannel(config.queuePrefix, `gw_${randomBase62(20)}`);
  }

  async onApplicationBootstrap(): Promise<void> {
    const subscriber = this.redis.subscriber();
    this.subscriber = subscriber;
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.replyTo) this.replied(message);
    });
    const logError = throttledErrorLog((message) => this.logger.warn(message));
    subscriber.on('error', (err: Error) => logError('reply channel', err));
    // The gateway listens once its reply channel is subscribed, which waits for Redis. A stop meanwhile ends
    // the wait: the start-up settles (Nest's shutdown waits for it), and the gateway closes.
    if (!(await settledBefore(subscriber.subscribe(this.replyTo), this.starting))) return;
    this.poller = setInterval(() => void this.pollSettled(), FALLBACK_POLL_MS);
    this.poller.unref();
  }

  onApplicationShutdown(): void {
    if (this.poller) clearInterval(this.poller);
    for (const w of this.waiters.values()) for (const wake of w.wake) wake();
    // Disconnect, not UNSUBSCRIBE: the subscriber queues commands while Redis is away, so an UNSUBSCRIBE
    // during an outage would wait for Redis to come back and hold the gateway's shutdown until then.
    this.subscriber?.disconnect();
  }

  /**
   * Resolves when something happened to the search (an event or a fallback check) or the time is up;
   * given several searches (a batch's), when something happened to any of them.
   * Register before enqueueing so a fast completion cannot be missed; callers re-read Postgres after.
   */
  watch(...searchIds: string[]): SearchWatch {
    const entries = searchIds.map((searchId) => {
      let entry = this.waiters.get(searchId);
      if (!entry) {
        entry = { since: Date.now(), wake: new Set() };
        this.waiters.set(searchId, entry);
      }
      return [searchId, entry] as const;
    });
    let signalled = false;
    let carried: LookupJobResult | undefined;
    let resolveCurrent: (() => void) | null = null;
    const wake = (result?: LookupJobResult) => {
      signalled = true;
      carried = result ?? carried;
      resolveCurrent?.();
    };
    for (const [, entry] of entries) entry.wake.add(wake);
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
        for (const [searchId, entry] of entries) {
          entry.wake.delete(wake);
          if (entry.wake.size === 0 && this.waiters.get(searchId) === entry) this.waiters.delete(searchId);
        }
      },
    };
  }

  /** A worker published a job's result on this gateway's channel: wake its waiters (with the outcome it carries). */
  replied(message: string): void {
    const result = parseResult(message);
    if (result) this.notify(result.search_id, result);
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

/** A published result, if it is one this gateway understands (else undefined: the fallback poll reads Postgres). */
function parseResult(message: string): LookupJobResult | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  const parsed = lookupJobResultSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
