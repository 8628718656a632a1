export * from './test-env';
export * from './wait-for';
export * from './processes';
export * from './http-client';
export * from './tcp-proxy';
export * from './db';
export * from './queues';
export * from './contract';
