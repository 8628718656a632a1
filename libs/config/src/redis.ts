import type { ConnectionOptions, RedisOptions } from 'bullmq';
import IORedis, { Cluster, type ClusterOptions, type Redis } from 'ioredis';
import { hasSocketErrorCode } from '@dossier/domain';

/** Where Redis is: one server (`url`), or a Redis Cluster (`clusterNodes`; credentials and TLS still from `url`). */
export interface RedisTarget {
  url: string;
  clusterNodes: { host: string; port: number }[] | null;
}

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

/** The connection settings a cluster's nodes share: REDIS_URL's credentials and TLS, never its host or db. */
function nodeOptionsFromUrl(url: string): RedisOptions {
  const { username, password, tls } = redisOptionsFromUrl(url);
  return { username, password, tls };
}

function failFastClusterOptions(url: string): ClusterOptions {
  return {
    enableOfflineQueue: false,
    clusterRetryStrategy: (times: number) => Math.min(times * 100, 1000),
    slotsRefreshTimeout: 1000,
    redisOptions: { ...nodeOptionsFromUrl(url), maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 1000 },
  };
}

function blockingClusterOptions(url: string): ClusterOptions {
  return {
    // A template: BullMQ duplicates it for each blocking consumer and connects the copies.
    lazyConnect: true,
    clusterRetryStrategy: (times: number) => Math.min(times * 200, 2000),
    redisOptions: { ...nodeOptionsFromUrl(url), maxRetriesPerRequest: null },
  };
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

  constructor(readonly target: RedisTarget) {}

  /**
   * The connections, with a cluster's shared fail-fast client ready before anything uses it. BullMQ
   * counts a cluster as connected once its status is `connect`, before the slots are known, and a
   * fail-fast client refuses every command until `ready`: a queue opened in that window fails to start.
   */
  static async open(target: RedisTarget): Promise<RedisConnections> {
    const connections = new RedisConnections(target);
    if (target.clusterNodes) await whenReady(connections.failFastCluster(target.clusterNodes));
    return connections;
  }

  /** For producers and queue reads (fail fast: a Redis outage is an error in milliseconds). */
  queues(): ConnectionOptions {
    const nodes = this.target.clusterNodes;
    return nodes ? this.failFastCluster(nodes) : failFastRedisOptions(this.target.url);
  }

  /** The cluster client every queue of this process shares (made on first use). */
  private failFastCluster(nodes: { host: string; port: number }[]): Cluster {
    this.failFast ??= this.own(new Cluster(nodes, failFastClusterOptions(this.target.url)));
    return this.failFast;
  }

  /** For blocking consumers: BullMQ Workers and QueueEvents (retry forever). */
  consumers(): ConnectionOptions {
    const nodes = this.target.clusterNodes;
    if (!nodes) return blockingRedisOptions(this.target.url);
    this.blocking ??= this.own(new Cluster(nodes, blockingClusterOptions(this.target.url)));
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
        ? new Cluster(nodes, { ...blockingClusterOptions(this.target.url), lazyConnect: false })
        : new IORedis(blockingRedisOptions(this.target.url)),
    );
  }

  /**
   * A new fail-fast command connection (rate-limit buckets, revocation markers), closed by `close()`.
   * A cluster's is handed over once ready (see `open`); one server's fails fast until it connects.
   */
  async commands(): Promise<RedisClient> {
    const nodes = this.target.clusterNodes;
    if (!nodes) return this.own(new IORedis(failFastRedisOptions(this.target.url)));
    return whenReady(this.own(new Cluster(nodes, failFastClusterOptions(this.target.url))));
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
 * Whether an error means Redis is unreachable (so the answer is a retryable `503`): a socket error, or
 * ioredis's own errors for a closed connection, an empty offline queue, a timed-out command.
 */
export function isRedisUnavailable(err: unknown): boolean {
  if (hasSocketErrorCode(err)) return true;
  if (typeof err !== 'object' || err === null) return false;
  const { name, message } = err as { name?: unknown; message?: unknown };
  return name === 'MaxRetriesPerRequestError' || (typeof message === 'string' && REDIS_DOWN_MESSAGES.test(message));
}
