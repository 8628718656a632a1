export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
export const DATA_SOURCE = Symbol('DATA_SOURCE');
export const PROVIDER_SETTINGS = Symbol('PROVIDER_SETTINGS');
