export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
export const DATA_SOURCE = Symbol('DATA_SOURCE');
export const PROVIDER_SETTINGS = Symbol('PROVIDER_SETTINGS');
/** The worker's Prometheus registry, served on the health port's /metrics. */
export const METRICS = Symbol('METRICS');
/** A fail-fast Redis connection for commands (the providers' shared rate limits). */
export const REDIS = Symbol('REDIS');
