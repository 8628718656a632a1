export * from './redis';
export * from './log-levels';
export * from './token-bucket';
export * from './logger';
export * from './internal-http';
export * from './heap';
export * from './stop-signals';
