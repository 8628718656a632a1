export * from './errors';
export * from './lookup';
export * from './ids';
export * from './countries';
export * from './phone';
export * from './async';
export * from './email';
export * from './normalize';
