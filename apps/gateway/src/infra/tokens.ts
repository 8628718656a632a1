/** Injection tokens for the gateway's infrastructure. */
export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
export const DATA_SOURCE = Symbol('DATA_SOURCE');
export const REDIS = Symbol('REDIS');
export const LOOKUP_QUEUES = Symbol('LOOKUP_QUEUES');
/** The webhook-delivery queue, for the Bull board (the worker's outbox relay fills it, ADR 0062). */
export const WEBHOOK_DELIVERY = Symbol('WEBHOOK_DELIVERY');
/** The process's Redis connections (one server or a cluster): RedisConnections from @dossier/config. */
export const REDIS_CONNECTIONS = Symbol('REDIS_CONNECTIONS');
/**
 * Aborted by a stop signal that comes while the gateway is starting (StopWhileStarting): start-up waits on
 * Redis (the reply channel's subscription) end on it, so the start-up settles and the gateway can close.
 */
export const STARTING = Symbol('STARTING');
/** The gateway's Prometheus registry (served on /metrics, or on METRICS_PORT when set). */
export const METRICS = Symbol('METRICS');
/** Counts the credits this process's repositories move (dossier_credits_total). */
export const CREDIT_OBSERVER = Symbol('CREDIT_OBSERVER');
