export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
export const DATA_SOURCE = Symbol('DATA_SOURCE');
export const PROVIDER_SETTINGS = Symbol('PROVIDER_SETTINGS');
/** The worker's Prometheus registry, served on the health port's /metrics. */
export const METRICS = Symbol('METRICS');
/** A fail-fast Redis connection for commands (the providers' shared rate limits). */
export const REDIS = Symbol('REDIS');
/** The process's Redis connections (one server or a cluster): RedisConnections from @dossier/config. */
export const REDIS_CONNECTIONS = Symbol('REDIS_CONNECTIONS');
/** The four lookup queues, for reading job states and cleaning finished jobs (the reconciler, retention). */
export const LOOKUP_QUEUES = Symbol('LOOKUP_QUEUES');
/**
 * An AbortSignal that aborts when a stop (SIGTERM, SIGINT) comes while the worker is still starting: the
 * start-up waits (for Redis) end early, so that the process can close and exit 0 instead of hanging.
 */
export const STARTING = Symbol('STARTING');
