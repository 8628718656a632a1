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
  'request_timeout',
  'internal_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface FieldIssue {
  field: string;
  issue: string;
}

/** The credits a refused or failed lookup moved: nothing spent, and the balance after. */
export interface CreditsContext {
  spent: number;
  remaining: number;
}

export interface DomainErrorOptions {
  details?: FieldIssue[];
  /** Seconds a client should wait before trying again (429, 503). */
  retryAfterS?: number;
  /** The credit balance the answer reports (a 402, a failed lookup). */
  credits?: CreditsContext;
  /** The accepted lookup that failed (its id is part of the answer). */
  searchId?: string;
  cause?: unknown;
}

export class DomainError extends Error {
  readonly details?: FieldIssue[];
  readonly retryAfterS?: number;
  readonly credits?: CreditsContext;
  readonly searchId?: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: DomainErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.details = options.details;
    this.retryAfterS = options.retryAfterS;
    this.credits = options.credits;
    this.searchId = options.searchId;
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

const SOCKET_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Whether `err`, or an error it was caused by, is one of Node's socket errors (refused, reset, unreachable, DNS). */
export function hasSocketErrorCode(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 4) return false;
  const { code, cause } = err as { code?: unknown; cause?: unknown };
  return (typeof code === 'string' && SOCKET_ERROR_CODES.has(code)) || hasSocketErrorCode(cause, depth + 1);
}
