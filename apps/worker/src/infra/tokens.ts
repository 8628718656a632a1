/** Injection tokens for the worker's infrastructure: RuntimeModule's (re-exported here), and its own. */
export { DATA_SOURCE, LOOKUP_QUEUES, METRICS, REDIS, REDIS_CONNECTIONS, STARTING } from '@dossier/runtime';

export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
export const PROVIDER_SETTINGS = Symbol('PROVIDER_SETTINGS');
