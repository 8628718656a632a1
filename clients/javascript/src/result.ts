import { parseCount } from './errors.js';
import type {
  AnyResult,
  BatchEnvelope,
  BatchErrorItem,
  BatchItem,
  PendingEnvelope,
  RateLimit,
  SourceReport,
  SuccessEnvelope,
} from './types.js';

/**
 * The HTTP answer an API call's result was built from. A `SearchResult` and a `BatchResult` have it, and so has the
 * body every other method returns (`account()`, `listKeys()`, the webhook calls, `register()`…), as properties that
 * are not enumerable: the body spreads, prints and serializes as the wire body it is.
 */
export interface ResponseInfo {
  /** HTTP status of the answer (`200`, `201`, `202`). */
  readonly httpStatus: number;
  /** Response headers, names in lower case. */
  readonly headers: Record<string, string>;
  /** `X-Request-Id` of the answer: your own `requestId` when you sent one, else the gateway's. */
  readonly requestId: string | null;
  /**
   * The calling key's rate limit as this answer reports it: `limit` (`RateLimit-Limit`, requests allowed in a
   * burst), `remaining` (`RateLimit-Remaining`, requests left in it) and `reset` (`RateLimit-Reset`, seconds
   * until it is full again). Each is a whole number, or `null` when the header is absent or not one (read as
   * the credit headers are). As `rate_limit` in the other three clients.
   */
  readonly rateLimit: RateLimit;
}

/** The `RateLimit-*` headers of an answer, as {@link ResponseInfo.rateLimit} reads them. */
function rateLimitOf(headers: Record<string, string>): RateLimit {
  return {
    limit: parseCount(headers['ratelimit-limit']),
    remaining: parseCount(headers['ratelimit-remaining']),
    reset: parseCount(headers['ratelimit-reset']),
  };
}

/**
 * `body` (a method's parsed answer) with the {@link ResponseInfo} of its HTTP answer, as properties that are not
 * enumerable: `{ ...body }`, `JSON.stringify(body)` and `assert.deepEqual` see the wire body alone, as before.
 */
export function withResponseInfo<T extends object>(
  body: T,
  answer: { status: number; headers: Record<string, string> },
): T & ResponseInfo {
  const { headers } = answer;
  const hidden = (value: unknown) => ({ value, enumerable: false, configurable: true });
  Object.defineProperties(body, {
    httpStatus: hidden(answer.status),
    headers: hidden(headers),
    requestId: hidden(headers['x-request-id'] ?? null),
    rateLimit: { get: () => rateLimitOf(headers), enumerable: false, configurable: true },
  });
  return body as T & ResponseInfo;
}

/** What a {@link SearchResult} is built from (one HTTP answer). */
export interface SearchResultInit {
  httpStatus: number;
  body: SuccessEnvelope<unknown> | PendingEnvelope;
  headers: Record<string, string>;
  idempotencyKey: string | null;
}

/** What every answer that may still be pending shares: a search or a batch. */
abstract class PendingAware implements ResponseInfo {
  /** `"success"`, or `"pending"` while work still runs. */
  abstract readonly status: 'success' | 'pending';
  /** HTTP status of the answer this result was built from (`200` or `202`). */
  readonly httpStatus: number;
  /** Response headers, names in lower case. */
  readonly headers: Record<string, string>;
  /** The `Idempotency-Key` the request was sent with (`null` for a GET). */
  readonly idempotencyKey: string | null;

  constructor(init: { httpStatus: number; headers: Record<string, string>; idempotencyKey: string | null }) {
    this.httpStatus = init.httpStatus;
    this.headers = init.headers;
    this.idempotencyKey = init.idempotencyKey;
  }

  /** `true` while the work is still running (`status === "pending"`). */
  get pending(): boolean {
    return this.status === 'pending';
  }

  /** `true` when the server replayed an earlier request for the same `Idempotency-Key`. */
  get replayed(): boolean {
    return this.headers['idempotent-replayed'] === 'true';
  }

  /** `X-Request-Id` of the answer. */
  get requestId(): string | null {
    return this.headers['x-request-id'] ?? null;
  }

  /** The calling key's rate limit as this answer reports it (see {@link ResponseInfo.rateLimit}). */
  get rateLimit(): RateLimit {
    return rateLimitOf(this.headers);
  }
}

/**
 * The answer to a lookup or to `getSearch()`: the envelope's wire fields (`status`, `search_id`,
 * `results`, `credits_remaining`, `sources`) as they were sent, camelCase aliases
 * (`searchId`, `creditsRemaining`), and details of the HTTP answer.
 *
 * `status` is `"success"` once the search is done, or `"pending"` when you asked not to wait
 * (`{ wait: false }`); a pending result has `results: []` and `sources: []`.
 */
export class SearchResult<T = AnyResult> extends PendingAware {
  /** `"success"` or `"pending"`. */
  override readonly status: 'success' | 'pending';
  /** Id of the search (`srch_…`); fetch it again with `getSearch()`. */
  readonly search_id: string;
  /** The result items, best first; always an array (empty while pending). */
  readonly results: T[];
  /** The account's balance after this call's charge. */
  readonly credits_remaining: number;
  /** One entry per provider tried (empty while pending). */
  readonly sources: SourceReport[];
  /** The parsed JSON body exactly as received. */
  readonly raw: SuccessEnvelope<T> | PendingEnvelope;

  constructor(init: SearchResultInit) {
    super(init);
    const body = init.body as SuccessEnvelope<T> | PendingEnvelope;
    this.raw = body;
    this.status = body.status;
    this.search_id = body.search_id;
    this.results = body.status === 'success' && Array.isArray(body.results) ? body.results : [];
    this.credits_remaining = body.credits_remaining;
    this.sources = body.status === 'success' && Array.isArray(body.sources) ? body.sources : [];
  }

  /** camelCase alias of `search_id`. */
  get searchId(): string {
    return this.search_id;
  }

  /** camelCase alias of `credits_remaining`. */
  get creditsRemaining(): number {
    return this.credits_remaining;
  }

  /** `X-Credits-Spent` of this answer (`0` on an idempotent replay), or `null` when absent. */
  get creditsSpent(): number | null {
    return parseCount(this.headers['x-credits-spent']);
  }

  /** The wire envelope, for `JSON.stringify(result)`. */
  toJSON(): SuccessEnvelope<T> | PendingEnvelope {
    return this.raw;
  }
}

/** What a {@link BatchResult} is built from (one HTTP answer). */
export interface BatchResultInit {
  httpStatus: number;
  body: BatchEnvelope<unknown>;
  headers: Record<string, string>;
  idempotencyKey: string | null;
}

/**
 * The answer to `batch()` or `getBatch()`: the wire fields (`status`, `batch_id`, `items`,
 * `credits_remaining`), camelCase aliases, and details of the HTTP answer.
 *
 * `items[i]` answers request `i`; tell them apart by `item.status`: `"success"` (a finished
 * lookup: `search_id`, `results`, `sources`), `"pending"` (still running: `search_id`) or
 * `"error"` (`error.code`, `error.message`, `error.details`; it cost nothing).
 */
export class BatchResult<T = AnyResult> extends PendingAware {
  /** `"success"` when every item is settled, `"pending"` while one still runs. */
  override readonly status: 'success' | 'pending';
  /** Id of the batch (`bat_…`); fetch it again with `getBatch()`. */
  readonly batch_id: string;
  /** One item per request, in order. */
  readonly items: BatchItem<T>[];
  /** The account's balance after the batch's charges. */
  readonly credits_remaining: number;
  /** The parsed JSON body exactly as received. */
  readonly raw: BatchEnvelope<T>;

  constructor(init: BatchResultInit) {
    super(init);
    const body = init.body as BatchEnvelope<T>;
    this.raw = body;
    this.status = body.status;
    this.batch_id = body.batch_id;
    this.items = Array.isArray(body.items) ? body.items : [];
    this.credits_remaining = body.credits_remaining;
  }

  /** camelCase alias of `batch_id`. */
  get batchId(): string {
    return this.batch_id;
  }

  /** camelCase alias of `credits_remaining`. */
  get creditsRemaining(): number {
    return this.credits_remaining;
  }

  /** The finished lookups. */
  get succeeded(): SuccessEnvelope<T>[] {
    return this.items.filter((item): item is SuccessEnvelope<T> => item.status === 'success');
  }

  /** The items in error (invalid, not covered by the balance, or failed). */
  get errors(): BatchErrorItem[] {
    return this.items.filter((item): item is BatchErrorItem => item.status === 'error');
  }

  /** The wire envelope, for `JSON.stringify(result)`. */
  toJSON(): BatchEnvelope<T> {
    return this.raw;
  }
}
