import type { BatchResult, SearchResult } from './result.js';
import type { FieldIssue } from './types.js';

/**
 * Root of everything this library throws on purpose. Catch this to catch them all:
 *
 * - {@link APIError} (and its subclasses): the server answered with an error.
 * - {@link APIConnectionError} / {@link APITimeoutError}: no answer, after the retries.
 * - {@link PollTimeoutError}: a `202` search or batch was still pending when the polling deadline passed.
 * - {@link SignatureVerificationError}: `Webhook.verify()` refused a delivery.
 */
export class DossierError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** What an {@link APIError} is built from. */
export interface APIErrorInit {
  /** HTTP status. */
  status: number;
  /** The envelope's `error.code`, e.g. `validation_error`; `null` when the answer was not an error envelope. */
  code: string | null;
  message: string;
  request_id: string | null;
  details?: FieldIssue[];
  /** The parsed JSON body (or the raw text when it was not JSON). */
  body: unknown;
  /** Response headers, names in lower case. */
  headers: Record<string, string>;
}

/**
 * The server answered with an error envelope
 * (`{status: "error", error: {code, message, details?}, request_id}`).
 * Subclasses narrow it by code; an unmapped code (`method_not_allowed`, `payload_too_large`,
 * `unsupported_media_type`, `internal_error`, …) is an `APIError` itself.
 */
export class APIError extends DossierError {
  /** HTTP status of the response; `0` for a batch item's error (an item has none of its own). */
  readonly status: number;
  /**
   * The contract's error code, e.g. `insufficient_credits`; `null` when the answer was not an error envelope (a
   * proxy's page, a `2xx` that is not what the API sends), as in the Python, Ruby and PHP clients.
   */
  readonly code: string | null;
  /** The request id (`request_id` in the body, or the `X-Request-Id` header). */
  readonly request_id: string | null;
  /** Field details (`[{field, issue}]`); empty unless the server sent some. */
  readonly details: FieldIssue[];
  /** The raw body: parsed JSON, or the text when it was not JSON. */
  readonly body: unknown;
  /** Response headers, names in lower case. */
  readonly headers: Record<string, string>;

  constructor(init: APIErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.request_id = init.request_id;
    this.details = init.details ?? [];
    this.body = init.body;
    this.headers = init.headers;
  }

  /** camelCase alias of {@link APIError.request_id}. */
  get requestId(): string | null {
    return this.request_id;
  }
}

/** `401`: `unauthorized` (no, malformed, unknown or revoked key) or `invalid_credentials` (login). */
export class AuthenticationError extends APIError {}

/** `402 insufficient_credits`: the balance is below the lookup's cost; nothing was charged. */
export class InsufficientCreditsError extends APIError {
  /** The balance (`X-Credits-Remaining`), or `null` when the answer has none (a batch item's error). */
  readonly credits_remaining: number | null;

  constructor(init: APIErrorInit) {
    super(init);
    this.credits_remaining = parseCount(init.headers['x-credits-remaining']);
  }

  /** camelCase alias of {@link InsufficientCreditsError.credits_remaining}. */
  get creditsRemaining(): number | null {
    return this.credits_remaining;
  }
}

/** `400 validation_error` or `invalid_json`; {@link APIError.details} names each field. */
export class ValidationError extends APIError {}

/** `404 not_found`: unknown search id (or one of another account), unknown key id, unknown route. */
export class NotFoundError extends APIError {}

/** `409`: `email_taken` (register) or `idempotency_conflict` (same key, different body). */
export class ConflictError extends APIError {}

/** Errors that carry the `Retry-After` header in seconds. */
function retryAfterOf(headers: Record<string, string>): number | null {
  const value = headers['retry-after'];
  if (value === undefined) return null;
  const ms = parseRetryAfterMs(value);
  return ms === null ? null : ms / 1000;
}

/** `429 rate_limited`: over the key's rate. Thrown once the retries are used up. */
export class RateLimitError extends APIError {
  /** Seconds the server asked to wait (`Retry-After`), or `null` when it sent none. */
  readonly retry_after: number | null;

  constructor(init: APIErrorInit) {
    super(init);
    this.retry_after = retryAfterOf(init.headers);
  }

  /** camelCase alias of {@link RateLimitError.retry_after}. */
  get retryAfter(): number | null {
    return this.retry_after;
  }
}

/**
 * `503 unavailable`: Redis or Postgres unreachable, the queue saturated, or the lookup itself
 * failed (then {@link UnavailableError.search_id} is set). Nothing was charged.
 */
export class UnavailableError extends APIError {
  /** Seconds the server asked to wait (`Retry-After`), or `null`. */
  readonly retry_after: number | null;
  /** The failed search, when the error is about one. */
  readonly search_id: string | null;

  constructor(init: APIErrorInit) {
    super(init);
    this.retry_after = retryAfterOf(init.headers);
    const body = init.body as { search_id?: unknown } | null;
    this.search_id = body && typeof body === 'object' && typeof body.search_id === 'string' ? body.search_id : null;
  }

  get retryAfter(): number | null {
    return this.retry_after;
  }

  get searchId(): string | null {
    return this.search_id;
  }
}

/**
 * The request never got an answer: connection refused or reset, DNS failure, TLS error… —
 * after the retries. The underlying error is in `cause`.
 */
export class APIConnectionError extends DossierError {}

/** A request took longer than `timeoutMs` (after the retries). */
export class APITimeoutError extends APIConnectionError {}

/**
 * A lookup (or a batch) answered `202` and was still pending when the polling deadline
 * (`pollTimeoutMs`) passed. The work goes on (and may be charged): fetch it later with
 * `client.getSearch(err.search_id)` (a batch: `client.getBatch(err.batch_id)`).
 */
export class PollTimeoutError extends DossierError {
  /** The pending search (`null` for a batch). */
  readonly search_id: string | null;
  /** The pending batch (`null` for a search). */
  readonly batch_id: string | null;
  /**
   * The last pending answer seen (a `SearchResult`, or a `BatchResult` for a batch), as Ruby's `result`, Python's
   * `search` and PHP's `getPendingResult()`; `null` only when the error was made without one.
   */
  readonly result: SearchResult<unknown> | BatchResult<unknown> | null;

  constructor(
    pending: { search_id: string } | { batch_id: string },
    waitedMs: number,
    result: SearchResult<unknown> | BatchResult<unknown> | null = null,
  ) {
    const [what, getter] = 'batch_id' in pending ? ['batch', 'getBatch()'] : ['search', 'getSearch()'];
    const id = 'batch_id' in pending ? pending.batch_id : pending.search_id;
    super(`${what} ${id} is still pending after ${waitedMs} ms; fetch it later with ${getter}`);
    this.search_id = 'search_id' in pending ? pending.search_id : null;
    this.batch_id = 'batch_id' in pending ? pending.batch_id : null;
    this.result = result;
  }

  get searchId(): string | null {
    return this.search_id;
  }

  get batchId(): string | null {
    return this.batch_id;
  }

  /** `X-Request-Id` of the last pending answer (the one to quote), or `null`; as an `APIError`'s `request_id`. */
  get request_id(): string | null {
    return this.result?.requestId ?? null;
  }

  /** camelCase alias of {@link PollTimeoutError.request_id}. */
  get requestId(): string | null {
    return this.request_id;
  }
}

/**
 * `Webhook.verify()` refused a delivery: the `Dossier-Signature` header is missing or malformed,
 * no `v1` signature matches, its timestamp is outside the tolerance, or the payload is not a JSON
 * object. Answer the delivery with a 4xx and do not act on it.
 */
export class SignatureVerificationError extends DossierError {}

const BY_CODE: Record<string, new (init: APIErrorInit) => APIError> = {
  unauthorized: AuthenticationError,
  invalid_credentials: AuthenticationError,
  insufficient_credits: InsufficientCreditsError,
  validation_error: ValidationError,
  invalid_json: ValidationError,
  not_found: NotFoundError,
  email_taken: ConflictError,
  idempotency_conflict: ConflictError,
  rate_limited: RateLimitError,
  unavailable: UnavailableError,
};

const BY_STATUS: Record<number, new (init: APIErrorInit) => APIError> = {
  400: ValidationError,
  401: AuthenticationError,
  402: InsufficientCreditsError,
  404: NotFoundError,
  409: ConflictError,
  429: RateLimitError,
  503: UnavailableError,
};

/** Builds the typed error for a non-2xx response: by `error.code`, else by HTTP status. */
export function errorFromResponse(status: number, body: unknown, headers: Record<string, string>): APIError {
  const envelope = isErrorEnvelope(body) ? body : null;
  const code = envelope?.error.code ?? null;
  const message =
    envelope?.error.message ??
    (typeof body === 'string' && body.trim() !== ''
      ? `HTTP ${status}: ${body.trim().slice(0, 200)}`
      : `HTTP ${status}`);
  const requestId =
    envelope && typeof envelope.request_id === 'string' ? envelope.request_id : (headers['x-request-id'] ?? null);
  const details = Array.isArray(envelope?.error.details)
    ? envelope.error.details.filter(
        (d): d is FieldIssue =>
          !!d && typeof d === 'object' && typeof d.field === 'string' && typeof d.issue === 'string',
      )
    : [];
  const Ctor = (envelope && BY_CODE[envelope.error.code]) || BY_STATUS[status] || APIError;
  return new Ctor({ status, code, message, request_id: requestId, details, body, headers });
}

/**
 * The typed error of a batch item in error (`{status: "error", error: {code, message, details?}}`), by its code
 * as for an answer; its `status` is `0` (an item has no HTTP status of its own, as in the PHP client).
 */
export function errorFromBatchItem(item: unknown): APIError {
  return errorFromResponse(0, item, {});
}

function isErrorEnvelope(body: unknown): body is {
  error: { code: string; message?: string; details?: FieldIssue[] };
  request_id?: unknown;
} {
  if (!body || typeof body !== 'object') return false;
  const error = (body as { error?: unknown }).error;
  return !!error && typeof error === 'object' && typeof (error as { code?: unknown }).code === 'string';
}

/**
 * A count header (`X-Credits-Spent`, `X-Credits-Remaining`): a whole number of ASCII digits, surrounding
 * spaces ignored; anything else (`-1`, `+7`, `1.5`, `1e2`, blank) is `null`. As in the other clients.
 */
export function parseCount(value: string | undefined): number | null {
  const trimmed = value?.replace(/^[ \t]+|[ \t]+$/g, '');
  return trimmed !== undefined && /^[0-9]+$/.test(trimmed) ? Number(trimmed) : null;
}

/** A longer `Retry-After` is read as this: one day, in milliseconds. */
export const RETRY_AFTER_CAP_MS = 86_400_000;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '([0-9]{2}):([0-9]{2}):([0-9]{2})';
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) ${MONTH} ([0-9]{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{2})-${MONTH}-([0-9]{2}) ${TIME} GMT$`,
);
const ASCTIME_DATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ([0-9]{2}| [0-9]) ${TIME} ([0-9]{4})$`);

/**
 * `Retry-After` (RFC 9110 §10.2.3) in milliseconds, or `null` when absent or unreadable — read the same
 * way by the four Dossier clients. Delay-seconds (`"120"`; a decimal fraction such as `"1.5"` is
 * tolerated) or an HTTP-date (`"Tue, 24 Nov 2026 14:00:30 GMT"`, or the obsolete RFC 850 and asctime
 * forms) counted from `now` (a past date is `0`), capped at {@link RETRY_AFTER_CAP_MS} (one day).
 * Anything else, such as `"-5"`, `"1e3"` or an RFC 3339 time, is garbage: `null`, so a retry waits
 * its backoff and a poll its interval.
 */
export function parseRetryAfterMs(value: string | null | undefined, now: number = Date.now()): number | null {
  if (value === null || value === undefined) return null;
  const trimmed = value.replace(/^[ \t]+|[ \t]+$/g, '');
  if (/^[0-9]+(\.[0-9]+)?$/.test(trimmed)) return Math.min(Math.round(Number(trimmed) * 1000), RETRY_AFTER_CAP_MS);
  const date = httpDate(trimmed, now);
  if (date === null) return null;
  return Math.min(Math.max(0, date - now), RETRY_AFTER_CAP_MS);
}

/** An HTTP-date (RFC 9110 §5.6.7) as epoch milliseconds, or `null`. */
function httpDate(value: string, now: number): number | null {
  let parts: { year: number; month: string; day: string; hour: string; minute: string; second: string };
  let m = IMF_FIXDATE.exec(value);
  if (m) {
    parts = { day: m[1]!, month: m[2]!, year: Number(m[3]), hour: m[4]!, minute: m[5]!, second: m[6]! };
  } else if ((m = RFC850_DATE.exec(value))) {
    // Two digits: the year within 50 years from now, else the century before.
    const thisYear = new Date(now).getUTCFullYear();
    const year = thisYear - (thisYear % 100) + Number(m[3]);
    parts = { day: m[1]!, month: m[2]!, year: year > thisYear + 50 ? year - 100 : year, hour: m[4]!, minute: m[5]!, second: m[6]! };
  } else if ((m = ASCTIME_DATE.exec(value))) {
    parts = { month: m[1]!, day: m[2]!, hour: m[3]!, minute: m[4]!, second: m[5]!, year: Number(m[6]) };
  } else {
    return null;
  }
  const [month, day, hour, minute, second] = [
    MONTHS.indexOf(parts.month),
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  ];
  const date = new Date(Date.UTC(parts.year, month, day, hour, minute, second));
  date.setUTCFullYear(parts.year); // Date.UTC reads years 0–99 as 1900–1999
  // No such day or time (30 Feb, 24:00:00): Date.UTC would roll it over.
  const valid =
    date.getUTCMonth() === month && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
  return valid ? date.getTime() : null;
}
