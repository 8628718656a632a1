import { APIConnectionError, APIError, APITimeoutError, errorFromResponse, parseRetryAfterMs } from './errors.js';
import type { FetchLike } from './types.js';
import { backoffDelayMs, shortened, sleep } from './util.js';
import { USER_AGENT } from './version.js';

/** Settings shared by every request of one client. */
export interface TransportSettings {
  apiKey: string | null;
  baseUrl: string;
  timeoutMs: number;
  maxRetries: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  maxRetryAfterMs: number;
  fetch: FetchLike;
}

/** Per-call overrides. */
export interface CallSettings {
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Sent as `X-Request-Id` on every attempt (see `RequestOptions.requestId`). */
  requestId?: string | undefined;
}

/**
 * What the gateway echoes as the answer's `X-Request-Id` (API.md): 1–128 of these characters. It replaces anything
 * else with an id of its own, so the client refuses it rather than send an id the caller would never see again.
 */
const REQUEST_ID = /^[A-Za-z0-9._~:@+=/-]{1,128}$/;

export interface HttpRequest extends CallSettings {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * Whether a connection failure may be retried even if the request might have reached the
   * server (true for GET, DELETE and lookups sent with an Idempotency-Key). When false, only
   * failures where the connection could not be opened at all are retried, and a 408, 502 or 504 is not.
   */
  retrySafe: boolean;
  /**
   * For a DELETE: a retry's 404 is answered as `gone` (success), because the attempt whose answer was lost (a
   * connection cut after sending, a 502 or 504) had already deleted it. A 404 on the first attempt is still an error.
   */
  goneOnRetry?: boolean;
}

/** A 2xx answer. */
export interface HttpAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  /** A DELETE's 404 on a retry (`goneOnRetry`): the resource is gone, as asked. */
  gone?: true;
}

/** Error codes of a connection that was never opened: the request cannot have reached the server. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Codes of a certificate the client does not trust (Node's names of OpenSSL's verification errors, and
 * its own for another host's name). Not transient: asking again meets the same certificate, so they
 * are never retried, as in the other clients.
 */
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CRL_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CRL_NOT_YET_VALID',
  'CRL_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD',
  'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The time and the waits of a client: the system's, or a test's stand-in (no test measures the wall clock). */
export interface Clock {
  /** Now, in milliseconds: deadlines are counted with it. */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const SYSTEM_CLOCK: Clock = { now: () => Date.now(), sleep };

/** Sends requests: headers, timeouts, typed errors, and retries with backoff. */
export class Transport {
  /** Every setting but the API key, which is kept in a private field: printing a transport never shows it. */
  readonly settings: Omit<TransportSettings, 'apiKey'>;
  readonly #apiKey: string | null;
  /** @internal The clock of retry sleeps, poll sleeps and poll deadlines; tests replace it. */
  clock: Clock = SYSTEM_CLOCK;

  constructor({ apiKey, ...settings }: TransportSettings) {
    this.#apiKey = apiKey;
    this.settings = settings;
  }

  /** The API key shortened for printing (`dsk_live…`), or null without a key. */
  get apiKeyHint(): string | null {
    return this.#apiKey === null ? null : shortened(this.#apiKey, 8);
  }

  async send(req: HttpRequest): Promise<HttpAnswer> {
    const requestId: unknown = req.requestId;
    if (requestId !== undefined && (typeof requestId !== 'string' || !REQUEST_ID.test(requestId))) {
      throw new TypeError(
        'requestId must be 1–128 of the characters A-Z a-z 0-9 . _ ~ : @ + = / - (the gateway would not echo it)',
      );
    }
    const payload = req.body === undefined ? undefined : encodeBody(req.body);
    const maxRetries = Math.max(0, req.maxRetries ?? this.settings.maxRetries);
    for (let attempt = 0; ; attempt++) {
      const canRetry = attempt < maxRetries;
      let answer: HttpAnswer;
      try {
        answer = await this.once(req, payload);
      } catch (err) {
        if (!(err instanceof APIConnectionError)) throw err; // the caller aborted
        if (canRetry && !certificateError(err.cause) && (req.retrySafe || neverSent(err.cause))) {
          await this.clock.sleep(this.backoff(attempt), req.signal);
          continue;
        }
        throw err;
      }
      if (answer.status >= 200 && answer.status < 300) {
        // Every answer of the API is a JSON object; anything else (a proxy's page, an empty body) is an error.
        if (isJsonObject(answer.body)) return answer;
        throw invalidResponse(answer, 'a JSON object');
      }

      if (attempt > 0 && answer.status === 404 && req.goneOnRetry !== undefined) {
        return { ...answer, gone: true };
      }
      const error = errorFromResponse(answer.status, answer.body, answer.headers);
      if (canRetry && isRetryable(req, error)) {
        const retryAfterMs = parseRetryAfterMs(answer.headers['retry-after']);
        // A longer wait than we are willing to sleep: hand the error (with retry_after) to the caller.
        if (retryAfterMs !== null && retryAfterMs > this.settings.maxRetryAfterMs) throw error;
        await this.clock.sleep(retryAfterMs ?? this.backoff(attempt), req.signal);
        continue;
      }
      throw error;
    }
  }

  private backoff(attempt: number): number {
    return backoffDelayMs(attempt, this.settings.retryBaseDelayMs, this.settings.retryMaxDelayMs);
  }

  /**
   * One HTTP exchange, `payload` the body as sent. Throws APIConnectionError/APITimeoutError, or the caller's abort
   * reason.
   */
  private async once(req: HttpRequest, payload: string | undefined): Promise<HttpAnswer> {
    const { settings } = this;
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': USER_AGENT,
      ...(this.#apiKey ? { Authorization: `Bearer ${this.#apiKey}` } : {}),
      ...(payload !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...(req.requestId !== undefined ? { 'X-Request-Id': req.requestId } : {}),
      ...req.headers,
    };
    const timeoutMs = req.timeoutMs ?? settings.timeoutMs;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const signal = req.signal;
    const onCallerAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) {
      clearTimeout(timer);
      throw signal.reason;
    }
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    const url = settings.baseUrl + req.path;
    try {
      const res = await settings.fetch(url, {
        method: req.method,
        headers,
        ...(payload !== undefined ? { body: payload } : {}),
        signal: controller.signal,
        // The API never redirects: a 3xx (a proxy, a wrong base URL) is an error with its status, as in the
        // other clients, and a POST is never turned into a GET or re-sent elsewhere.
        redirect: 'manual',
      });
      const text = await res.text();
      const out: Record<string, string> = {};
      res.headers.forEach((value, name) => {
        out[name.toLowerCase()] = value;
      });
      return { status: res.status, body: parseBody(text), headers: out };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (timedOut) {
        throw new APITimeoutError(`${req.method} ${url} timed out after ${timeoutMs} ms`, { cause: err });
      }
      throw new APIConnectionError(`${req.method} ${url} failed: ${describe(err)}`, { cause: err });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onCallerAbort);
    }
  }
}

/** The error for a 2xx answer that is not what the API sends (`code` `null`: it is no error envelope). */
export function invalidResponse(answer: HttpAnswer, expected: string): APIError {
  return new APIError({
    status: answer.status,
    code: null,
    message: `HTTP ${answer.status} with a body that is not ${expected}`,
    request_id: answer.headers['x-request-id'] ?? null,
    body: answer.body,
    headers: answer.headers,
  });
}

/** A lone surrogate: half of a UTF-16 pair (with the `u` flag, a well-formed pair is one code point and no match). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * A request body as JSON. What JSON cannot carry is a `TypeError` before anything is sent, as the other clients
 * refuse it: a string with a lone surrogate (a bad decode or a sliced emoji leaves one; it has no UTF-8 form), and a
 * number that is NaN or infinite (`JSON.stringify` would write `null` in its place). The message never quotes the
 * value (a password, for register and login).
 */
function encodeBody(body: unknown): string {
  return JSON.stringify(body, (key: string, value: unknown) => {
    const text = (v: unknown) => typeof v === 'string' && LONE_SURROGATE.test(v);
    if (text(key) || text(value) || (typeof value === 'number' && !Number.isFinite(value))) {
      throw new TypeError(
        'the request cannot be sent as JSON: every string in it must be well-formed Unicode (no lone surrogate), ' +
          'and every number finite (no NaN or Infinity)',
      );
    }
    return value;
  });
}

function isJsonObject(body: unknown): body is Record<string, unknown> {
  return !!body && typeof body === 'object' && !Array.isArray(body);
}

/**
 * Retried only when the request is safe to repeat, as a connection that failed after sending is: 408 (the request
 * did not arrive in time, the gateway's or a proxy's), 502 and 504 (a load balancer's while a gateway restarts: the
 * request may have been acted on). As in the other clients.
 */
const RETRY_IF_SAFE_STATUSES = new Set([408, 502, 504]);

/** 429 always; 503 unless it is the final answer about a failed search (a GET that names it); 408, 502 and 504 when safe. */
function isRetryable(req: HttpRequest, error: APIError): boolean {
  if (error.status === 429) return true;
  if (RETRY_IF_SAFE_STATUSES.has(error.status)) return req.retrySafe;
  if (error.status !== 503) return false;
  const body = error.body as { search_id?: unknown } | null;
  const aboutFailedSearch = !!body && typeof body === 'object' && typeof body.search_id === 'string';
  return !(req.method === 'GET' && aboutFailedSearch);
}

function parseBody(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `err` and its chain of causes, outermost first (at most 5 deep). */
function causes(err: unknown): { code?: unknown; errors?: unknown }[] {
  const chain: { code?: unknown; errors?: unknown }[] = [];
  for (let e: unknown = err; e && typeof e === 'object' && chain.length < 5; e = (e as { cause?: unknown }).cause) {
    chain.push(e);
  }
  return chain;
}

/** Whether a fetch failure happened before the request could be sent. */
function neverSent(err: unknown): boolean {
  return causes(err).some(
    ({ code, errors }) =>
      (typeof code === 'string' && NOT_SENT_CODES.has(code)) ||
      (Array.isArray(errors) && errors.length > 0 && errors.every((x) => neverSent(x))),
  );
}

/** Whether a fetch failure is a certificate the client does not trust. */
function certificateError(err: unknown): boolean {
  return causes(err).some(({ code }) => typeof code === 'string' && CERTIFICATE_CODES.has(code));
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  const detail =
    cause && typeof cause === 'object' ? (typeof cause.code === 'string' ? cause.code : cause.message) : undefined;
  return detail ? `${err.message} (${String(detail)})` : err.message;
}
