import type { ConnectionOptions, RedisOptions } from 'bullmq';
import IORedis, { Cluster, type ClusterOptions, type Redis } from 'ioredis';
import { StandaloneConnector } from 'ioredis/built/connectors/index.js';
import type { Duplex } from 'node:stream';
import { hasSocketErrorCode } from '@dossier/domain';
import type { RedisTarget } from '@dossier/config';

/** A command connection: one server or a cluster (both run the same commands and Lua scripts). */
export type RedisClient = Redis | Cluster;

/** ioredis options from a `redis://[user:pass@]host:port/db` or `rediss://` URL. */
export function redisOptionsFromUrl(url: string): RedisOptions {
  const u = new URL(url);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  return {
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: Number.isInteger(db) ? db : 0,
    tls: u.protocol === 'rediss:' ? {} : undefined,
  };
}

/**
 * For producers and request-path commands: no offline queue and short timeouts, so a Redis outage
 * is an error in milliseconds (the gateway answers 503) instead of a request that hangs.
 */
export function failFastRedisOptions(url: string): RedisOptions {
  return {
    ...redisOptionsFromUrl(url),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    connectTimeout: 1000,
    retryStrategy: (times: number) => Math.min(times * 100, 1000),
  };
}

/** For blocking consumers (BullMQ workers, QueueEvents): retry forever, never time a blocking command out. */
export function blockingRedisOptions(url: string): RedisOptions {
  return {
    ...redisOptionsFromUrl(url),
    maxRetriesPerRequest: null,
    retryStrategy: (times: number) => Math.min(times * 200, 2000),
  };
}

/**
 * The connection settings a cluster's nodes share: REDIS_URL's credentials and TLS, never its host or
 * db; writes coalesced, as on one server.
 */
function nodeOptionsFromUrl(url: string, flush: WriteFlush): RedisOptions {
  const { username, password, tls } = redisOptionsFromUrl(url);
  return coalesced({ username, password, tls }, flush);
}

function failFastClusterOptions(url: string, flush: WriteFlush): ClusterOptions {
  return {
    enableOfflineQueue: false,
    clusterRetryStrategy: (times: number) => Math.min(times * 100, 1000),
    slotsRefreshTimeout: 1000,
    redisOptions: {
      ...nodeOptionsFromUrl(url, flush),
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
      connectTimeout: 1000,
    },
  };
}

function blockingClusterOptions(url: string, flush: WriteFlush): ClusterOptions {
  return {
    // A template: BullMQ duplicates it for each blocking consumer and connects the copies.
    lazyConnect: true,
    clusterRetryStrategy: (times: number) => Math.min(times * 200, 2000),
    redisOptions: { ...nodeOptionsFromUrl(url, flush), maxRetriesPerRequest: null },
  };
}

/**
 * When a socket's coalesced writes leave (ADR 0026):
 * - `turn`: after every I/O callback of the event-loop turn (an immediate). For a process whose
 *   commands start in separate callbacks, as a gateway's do, one per request read.
 * - `tick`: once the microtask queue has drained (a next tick). For a process whose commands follow
 *   replies read together, as a worker's do; BullMQ fetches jobs one after another, and waiting for the
 *   end of the turn would add a turn to each fetch.
 */
export type WriteFlush = 'turn' | 'tick';

/**
 * Makes the writes `stream` takes until the flush (see `WriteFlush`) leave in one system call: the
 * first corks the socket and the flush uncorks it, so the commands of many requests go out as one
 * `writev`. On loopback a write costs its sender the receiver's TCP path and wake-up too.
 */
export function coalesceWrites(stream: Duplex, flush: WriteFlush): void {
  let corked = false;
  const uncork = (): void => {
    corked = false;
    stream.uncork();
  };
  const schedule = flush === 'turn' ? (fn: () => void) => void setImmediate(fn) : process.nextTick;
  const write = stream.write;
  stream.write = function (this: Duplex, ...args: Parameters<Duplex['write']>): boolean {
    if (!corked) {
      corked = true;
      stream.cork();
      schedule(uncork);
    }
    return write.apply(this, args);
  } as Duplex['write'];
}

/** ioredis's own connector (TCP or TLS to one node), with the socket's writes coalesced. */
function coalescingConnector(flush: WriteFlush): typeof StandaloneConnector {
  return class CoalescingConnector extends StandaloneConnector {
    override async connect(
      onError: Parameters<StandaloneConnector['connect']>[0],
    ): ReturnType<StandaloneConnector['connect']> {
      const stream = await super.connect(onError);
      coalesceWrites(stream, flush);
      return stream;
    }
  };
}

const CONNECTORS: Record<WriteFlush, typeof StandaloneConnector> = {
  turn: coalescingConnector('turn'),
  tick: coalescingConnector('tick'),
};

/** `options` with its writes coalesced (see `coalesceWrites`); the raw bench keeps ioredis's own. */
function coalesced<T extends RedisOptions>(options: T, flush: WriteFlush): T {
  return { ...options, Connector: CONNECTORS[flush] };
}

/**
 * Every Redis connection of one process, for one server or a cluster. With one server BullMQ gets
 * options and opens (and closes) its own connections. With a cluster it gets cluster clients made
 * here: BullMQ duplicates them for its blocking consumers (Worker, QueueEvents) and shares them for
 * queues, so `close()` — after every queue and worker has closed — ends them.
 */
export class RedisConnections {
  private failFast?: Cluster;
  private blocking?: Cluster;
  private readonly owned: RedisClient[] = [];

  /** `flush`: when this process's coalesced writes leave (see `WriteFlush`). */
  constructor(
    readonly target: RedisTarget,
    private readonly flush: WriteFlush,
  ) {}

  /**
   * The connections, with a cluster's shared fail-fast client ready before anything uses it. BullMQ
   * counts a cluster as connected once its status is `connect`, before the slots are known, and a
   * fail-fast client refuses every command until `ready`: a queue opened in that window fails to start.
   */
  static async open(target: RedisTarget, flush: WriteFlush): Promise<RedisConnections> {
    const connections = new RedisConnections(target, flush);
    if (target.clusterNodes) await whenReady(connections.failFastCluster(target.clusterNodes));
    return connections;
  }

  /** For producers and queue reads (fail fast: a Redis outage is an error in milliseconds). */
  queues(): ConnectionOptions {
    const nodes = this.target.clusterNodes;
    return nodes ? this.failFastCluster(nodes) : coalesced(failFastRedisOptions(this.target.url), this.flush);
  }

  /** The cluster client every queue of this process shares (made on first use). */
  private failFastCluster(nodes: { host: string; port: number }[]): Cluster {
    this.failFast ??= this.own(new Cluster(nodes, failFastClusterOptions(this.target.url, this.flush)));
    return this.failFast;
  }

  /** For blocking consumers: BullMQ Workers and QueueEvents (retry forever). */
  consumers(): ConnectionOptions {
    const nodes = this.target.clusterNodes;
    if (!nodes) return coalesced(blockingRedisOptions(this.target.url), this.flush);
    this.blocking ??= this.own(new Cluster(nodes, blockingClusterOptions(this.target.url, this.flush)));
    return this.blocking;
  }

  /**
   * A new connection for SUBSCRIBE (a gateway's reply channel), retrying forever and re-subscribing after
   * a reconnect; closed by `close()`. On a cluster, PUBLISH reaches every node, so any node serves it.
   */
  subscriber(): RedisClient {
    const nodes = this.target.clusterNodes;
    return this.own(
      nodes
        ? new Cluster(nodes, { ...blockingClusterOptions(this.target.url, this.flush), lazyConnect: false })
        : new IORedis(coalesced(blockingRedisOptions(this.target.url), this.flush)),
    );
  }

  /**
   * A new fail-fast command connection (rate-limit buckets, revocation markers), closed by `close()`.
   * A cluster's is handed over once ready (see `open`); one server's fails fast until it connects.
   */
  async commands(): Promise<RedisClient> {
    const nodes = this.target.clusterNodes;
    if (!nodes) return this.own(new IORedis(coalesced(failFastRedisOptions(this.target.url), this.flush)));
    return whenReady(this.own(new Cluster(nodes, failFastClusterOptions(this.target.url, this.flush))));
  }

  /** Ends every connection made here (call it after BullMQ's queues and workers have closed). */
  close(): void {
    for (const client of this.owned.splice(0)) client.disconnect();
    this.failFast = undefined;
    this.blocking = undefined;
  }

  private own<T extends RedisClient>(client: T): T {
    // Errors surface on the commands that fail; an unhandled 'error' event would end the process.
    client.on('error', () => undefined);
    this.owned.push(client);
    return client;
  }
}

/**
 * Resolves once `client` is ready to take commands, however long its reconnects take (a process that
 * starts before Redis waits for it). Only 'ready' counts: connection errors are retried, not thrown.
 */
export async function whenReady<T extends RedisClient>(client: T): Promise<T> {
  if (client.status !== 'ready') await new Promise<void>((resolve) => client.once('ready', () => resolve()));
  return client;
}

const REDIS_DOWN_MESSAGES =
  /Stream isn't writeable|Connection is closed|Command timed out|enableOfflineQueue|Reached the max retries per request|Cluster isn't ready|Failed to refresh slots cache|None of startup nodes is available/i;

/**
 * Redis's own answers for a command it cannot run now, whatever the command: full under `noeviction` (OOM),
 * a replica after a failover (READONLY), loading its data (LOADING), a script running too long (BUSY),
 * unable to persist (MISCONF), a replica without its primary (MASTERDOWN), a cluster without a slot's
 * node or mid-resharding (CLUSTERDOWN, TRYAGAIN), too few replicas for min-replicas-to-write (NOREPLICAS).
 */
const REDIS_REFUSALS = /^(?:OOM|READONLY|LOADING|BUSY|MISCONF|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|NOREPLICAS)\b/;

/**
 * Whether an error means Redis is unreachable or cannot serve (so the answer is a retryable `503`): a socket
 * error, ioredis's own errors for a closed connection, an empty offline queue, a timed-out command, or Redis
 * refusing every command of a kind for now (REDIS_REFUSALS) — not a fault of the request, nor of this code.
 */
export function isRedisUnavailable(err: unknown): boolean {
  if (hasSocketErrorCode(err)) return true;
  if (typeof err !== 'object' || err === null) return false;
  const { name, message } = err as { name?: unknown; message?: unknown };
  return (
    name === 'MaxRetriesPerRequestError' ||
    (typeof message === 'string' && (REDIS_DOWN_MESSAGES.test(message) || REDIS_REFUSALS.test(message)))
  );
}

/**
 * A handler for a Redis client's or a queue's connection errors that logs at most one line per `everyMs`
 * (a Redis outage raises several a second on every connection), saying how many it left out since.
 */
export function throttledErrorLog(
  warn: (message: string) => void,
  everyMs = 10_000,
): (source: string, error: Error) => void {
  let last = -Infinity;
  let skipped = 0;
  return (source, error) => {
    const now = Date.now();
    if (now - last < everyMs) {
      skipped++;
      return;
    }
    warn(`${source}: ${error.message}${skipped > 0 ? ` (${skipped} more errors since the last line)` : ''}`);
    last = now;
    skipped = 0;
  };
}
