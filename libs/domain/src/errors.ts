/**
 * The one coded error model. Domain code, libs and the worker throw `DomainError`;
 * only the gateway's global filter turns a code into an HTTP status and the error envelope.
 */
export const ERROR_CODES = [
  'invalid_json',
  'validation_error',
  'unauthorized',
  'invalid_credentials',
  'insufficient_credits',
  'not_found',
  'method_not_allowed',
  'email_taken',
  'idempotency_conflict',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'unavailable',
  'internal_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface FieldIssue {
  field: string;
  issue: string;
}

export interface DomainErrorOptions {
  details?: FieldIssue[];
  /** Seconds a client should wait before trying again (429, 503). */
  retryAfterS?: number;
  /** Extra response headers that belong to this error (e.g. the credit balance on a 402). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class DomainError extends Error {
  readonly details?: FieldIssue[];
  readonly retryAfterS?: number;
  readonly headers?: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: DomainErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.details = options.details;
    this.retryAfterS = options.retryAfterS;
    this.headers = options.headers;
  }

  static validation(details: FieldIssue[]): DomainError {
    const first = details[0];
    const message = first ? `${first.field} ${first.issue}` : 'the request is not valid';
    return new DomainError('validation_error', message, { details });
  }

  static unavailable(message: string, cause?: unknown): DomainError {
    return new DomainError('unavailable', message, { retryAfterS: 1, cause });
  }
}

export function isDomainError(value: unknown): value is DomainError {
  return value instanceof DomainError;
}
