export { Client, DEFAULT_BASE_URL } from './client.js';
export type {
  AuthOptions,
  BatchOptions,
  ClientOptions,
  GetSearchOptions,
  LookupOptions,
  RequestOptions,
} from './client.js';
export { BatchItem, BatchResult, SearchResult } from './result.js';
export type { ResponseInfo } from './result.js';
export { SIGNATURE_HEADER, Webhook } from './webhook.js';
export type { VerifyOptions } from './webhook.js';
export {
  APIConnectionError,
  APIError,
  APITimeoutError,
  AuthenticationError,
  ConflictError,
  DossierError,
  InsufficientCreditsError,
  NotFoundError,
  PollTimeoutError,
  RateLimitError,
  SignatureVerificationError,
  UnavailableError,
  ValidationError,
} from './errors.js';
export type { APIErrorInit } from './errors.js';
export { VERSION } from './version.js';
export type * from './types.js';
