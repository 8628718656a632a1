import { DomainError, isDomainError, type ErrorCode, type FieldIssue } from '@dossier/domain';
import { isBackingServiceDown } from './unavailable';
import { notJsonMediaType, tooLarge } from './json-body';

/** The one table from error code to HTTP status. */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_json: 400,
  validation_error: 400,
  unauthorized: 401,
  invalid_credentials: 401,
  insufficient_credits: 402,
  not_found: 404,
  method_not_allowed: 405,
  email_taken: 409,
  idempotency_conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
  request_timeout: 408,
  internal_error: 500,
};

export interface ErrorEnvelope {
  status: 'error';
  error: { code: ErrorCode; message: string; details?: FieldIssue[] };
  request_id: string;
  /** An accepted lookup that failed: its id and the balance after releasing its credits. */
  search_id?: string;
  credits_remaining?: number;
}

export const noSuchRoute = (): DomainError => new DomainError('not_found', 'no such route');

/**
 * Fastify's own errors that a request can raise (before a handler runs), mapped onto contract codes. Every
 * other code Fastify exports is raised at startup or by the gateway's own misuse of a reply, never by what a
 * client sends (http.spec.ts walks Fastify's `errorCodes` and holds each to one list or the other).
 */
export const FASTIFY_CODES: Readonly<Record<string, () => DomainError>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: notJsonMediaType,
  // A QUERY (RFC 10008) without Content-Type, refused by Fastify before it routes; no route of the API takes
  // QUERY, so the filter answers it as the unrouted request it is (404, or 405 on a known path).
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: notJsonMediaType,
  FST_ERR_CTP_BODY_TOO_LARGE: tooLarge,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new DomainError('invalid_json', 'the body length does not match Content-Length'),
  // Fastify's own JSON parser's, which json-body.ts replaces: kept so that it could not become a 500.
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new DomainError('invalid_json', 'the body is empty'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new DomainError('invalid_json', 'the body is not valid JSON'),
  // Fastify's 404 handler's, which Nest replaces.
  FST_ERR_NOT_FOUND: noSuchRoute,
  // The router's own two (Fastify's `frameworkErrors`): a path that does not percent-decode, and a path
  // parameter over 100 characters. Every path parameter of the API names a resource by id (a search, a
  // batch, a key, a webhook, a docs asset), and API.md answers an id that does not exist `404 not_found`;
  // such a path names nothing, so it is `404` too (or `405` on a known path with the wrong method, like
  // any unrouted request). Values a client chooses travel in the body or the query, and a bad one there
  // is `400 validation_error`. Neither message echoes the path.
  FST_ERR_BAD_URL: () => new DomainError('not_found', 'no such resource: the path is not valid percent-encoding'),
  FST_ERR_MAX_PARAM_LENGTH: () =>
    new DomainError('not_found', 'no such resource: a path segment is longer than any id (100 characters)'),
};

/**
 * Turns anything thrown into a DomainError. Unknown errors become `internal_error` with a generic
 * message: no stack trace, SQL or path ever reaches a client.
 */
export function toDomainError(err: unknown): DomainError {
  if (isDomainError(err)) return err;
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && Object.hasOwn(FASTIFY_CODES, code)) return FASTIFY_CODES[code]!();
  if (err instanceof SyntaxError) return new DomainError('invalid_json', 'the body is not valid JSON');
  if (isBackingServiceDown(err))
    return DomainError.unavailable('a backing service is unavailable; try again shortly', err);
  const status = statusOf(err);
  if (status === 404) return noSuchRoute();
  if (status === 413) return tooLarge();
  if (status === 415) return notJsonMediaType();
  // Any other error its framework marks as the client's (Nest's HttpExceptions, a Fastify code newer than
  // the table above): a bad request, not a server fault.
  if (status !== undefined && status >= 400 && status < 500)
    return new DomainError('validation_error', 'the request is not valid');
  return new DomainError('internal_error', 'an internal error occurred', { cause: err });
}

/** The HTTP status carried by Nest's HttpException (getStatus) or a Fastify error (statusCode). */
function statusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { getStatus?: unknown; statusCode?: unknown };
  if (typeof e.getStatus === 'function') return (e.getStatus as () => number).call(err);
  return typeof e.statusCode === 'number' ? e.statusCode : undefined;
}

export function envelopeOf(err: DomainError, requestId: string): ErrorEnvelope {
  return {
    status: 'error',
    error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) },
    ...(err.searchId !== undefined
      ? { search_id: err.searchId, ...(err.credits ? { credits_remaining: err.credits.remaining } : {}) }
      : {}),
    request_id: requestId,
  };
}

/** Credit headers, on every lookup answer: what this call charged and the balance after. */
export function creditHeaders(spent: number, remaining: number): Record<string, string> {
  return { 'X-Credits-Spent': String(spent), 'X-Credits-Remaining': String(remaining) };
}
