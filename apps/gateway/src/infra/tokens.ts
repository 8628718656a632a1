/** Injection tokens for the gateway's infrastructure: RuntimeModule's (re-exported here), and its own. */
export { DATA_SOURCE, LOOKUP_QUEUES, METRICS, REDIS, REDIS_CONNECTIONS, STARTING } from '@dossier/runtime';

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
/** The webhook-delivery queue, for the Bull board (the worker's outbox relay fills it, ADR 0062). */
export const WEBHOOK_DELIVERY = Symbol('WEBHOOK_DELIVERY');
/** Counts the credits this process's repositories move (dossier_credits_total). */
export const CREDIT_OBSERVER = Symbol('CREDIT_OBSERVER');
