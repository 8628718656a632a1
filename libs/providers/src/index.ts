export * from './provider';
export * from './registry';
export { libphonenumberProvider } from './libphonenumber/libphonenumber.provider';
