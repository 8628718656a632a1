export { Client, DEFAULT_BASE_URL } from './client.js';
export type { AuthOptions, ClientOptions, GetSearchOptions, LookupOptions, RequestOptions } from './client.js';
export { SearchResult } from './result.js';
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
  UnavailableError,
  ValidationError,
} from './errors.js';
export type { APIErrorInit } from './errors.js';
export { VERSION } from './version.js';
export type * from './types.js';
