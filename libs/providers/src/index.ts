export * from './provider';
export * from './registry';
export { parsePhone, PHONE_INPUT_MAX_LENGTH, type ParsedPhone } from './libphonenumber/phone-parse';
export { libphonenumberProvider } from './libphonenumber/libphonenumber.provider';
