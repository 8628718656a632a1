/**
 * Injection tokens for what RuntimeModule gives both apps. Each app's `infra/tokens.ts` re-exports them beside
 * its own (its config, its extra queues).
 */

/** The process's Postgres connection pool (a TypeORM DataSource), opened by the app's own opener. */
export const DATA_SOURCE = Symbol('DATA_SOURCE');
/** The process's Redis connections (one server or a cluster): RedisConnections. */
export const REDIS_CONNECTIONS = Symbol('REDIS_CONNECTIONS');
/** A fail-fast Redis command connection (rate-limit buckets, revocation markers, reply channels, reports). */
export const REDIS = Symbol('REDIS');
/** The four lookup queues: the gateway adds to them, the worker reads job states and cleans finished jobs. */
export const LOOKUP_QUEUES = Symbol('LOOKUP_QUEUES');
/**
 * Aborted by a stop signal that comes while the app is starting (StopWhileStarting): start-up waits on Redis end
 * on it, so the start-up settles and the app can close and exit 0 instead of hanging.
 */
export const STARTING = Symbol('STARTING');
/** The process's Prometheus registry, with Node's default metrics (served on the app's metrics or health port). */
export const METRICS = Symbol('METRICS');
