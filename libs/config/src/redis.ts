import type { RedisOptions } from 'bullmq';
import { hasSocketErrorCode } from '@dossier/domain';

/** BullMQ's connection options type: also accepted by `new IORedis(…)`. */

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

const REDIS_DOWN_MESSAGES =
  /Stream isn't writeable|Connection is closed|Command timed out|enableOfflineQueue|Reached the max retries per request/i;

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
