export * from './provider';
export * from './registry';
export { libphonenumberProvider } from './libphonenumber/libphonenumber.provider';
export { createUsernameProvider } from './username/username.provider';
export * from './merge';
export * from './http';
export * from './email-item';
export * from './http-contract';
