import { errorFromBatchItem, parseCount, type APIError } from './errors.js';
import type {
  AnyResult,
  BatchEnvelope,
  BatchItemEnvelope,
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
  /**
   * A person search: how many items passed `min_score` before `limit` cut them; `null` for other kinds, while
   * pending, and for a person search settled before the server counted them.
   */
  readonly total_results: number | null;
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
    this.total_results = body.status === 'success' && typeof body.total_results === 'number' ? body.total_results : null;
  }

  /** camelCase alias of `search_id`. */
  get searchId(): string {
    return this.search_id;
  }

  /** camelCase alias of `credits_remaining`. */
  get creditsRemaining(): number {
    return this.credits_remaining;
  }

  /** camelCase alias of `total_results`. */
  get totalResults(): number | null {
    return this.total_results;
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
 * One item of a batch, answering the request at its place: a lookup's answer or an item error, as in the
 * Python, Ruby and PHP clients.
 *
 * - `ok` (`status === "success"`): a finished lookup, with `search_id`, `results`, `sources` and
 *   `credits_remaining` as a {@link SearchResult} has them;
 * - `pending` (`status === "pending"`): a lookup still running (`search_id`; `results` empty);
 * - `failed` (`status === "error"`): the item was not run, or its lookup failed; `error` is the typed
 *   {@link APIError} its code maps to (`ValidationError` for an invalid item, `InsufficientCreditsError` when the
 *   balance did not cover it, `UnavailableError` for a failed lookup, which names its `search_id`), returned,
 *   not thrown; its `status` is `0` (an item has no HTTP status of its own). An item in error cost nothing.
 */
export class BatchItem<T = AnyResult> {
  /** `"success"`, `"pending"` or `"error"`. */
  readonly status: 'success' | 'pending' | 'error';
  /** Id of the item's search (`srch_…`); also on a failed lookup's error, `null` for an item that was not run. */
  readonly search_id: string | null;
  /** The result items, best first; always an array (empty unless `ok`). */
  readonly results: T[];
  /** One entry per provider tried (empty unless `ok`). */
  readonly sources: SourceReport[];
  /** The balance the item's envelope carries, or `null` when it has none (an item error). */
  readonly credits_remaining: number | null;
  /** A person search: how many items passed `min_score` before `limit` cut them; otherwise `null`. */
  readonly total_results: number | null;
  /** For an item in error, the typed error its code maps to; otherwise `null`. */
  readonly error: APIError | null;
  /** The item exactly as received. */
  readonly raw: BatchItemEnvelope<T>;

  constructor(raw: BatchItemEnvelope<T>) {
    const item = (raw && typeof raw === 'object' ? raw : {}) as Partial<Record<string, unknown>>;
    this.raw = raw;
    this.status = item['status'] === 'success' || item['status'] === 'pending' ? item['status'] : 'error';
    this.search_id = typeof item['search_id'] === 'string' ? item['search_id'] : null;
    this.results = Array.isArray(item['results']) ? (item['results'] as T[]) : [];
    this.sources = Array.isArray(item['sources']) ? (item['sources'] as SourceReport[]) : [];
    this.credits_remaining = typeof item['credits_remaining'] === 'number' ? item['credits_remaining'] : null;
    this.total_results = typeof item['total_results'] === 'number' ? item['total_results'] : null;
    this.error = this.status === 'error' ? errorFromBatchItem(raw) : null;
  }

  /** `true` for a finished lookup (`status === "success"`). */
  get ok(): boolean {
    return this.status === 'success';
  }

  /** `true` while the item's lookup still runs (`status === "pending"`). */
  get pending(): boolean {
    return this.status === 'pending';
  }

  /** `true` for an item in error (see `error`). */
  get failed(): boolean {
    return this.status === 'error';
  }

  /** camelCase alias of `search_id`. */
  get searchId(): string | null {
    return this.search_id;
  }

  /** camelCase alias of `credits_remaining`. */
  get creditsRemaining(): number | null {
    return this.credits_remaining;
  }

  /** camelCase alias of `total_results`. */
  get totalResults(): number | null {
    return this.total_results;
  }

  /** The item as received, for `JSON.stringify(item)`. */
  toJSON(): BatchItemEnvelope<T> {
    return this.raw;
  }
}

/**
 * The answer to `batch()` or `getBatch()`: the wire fields (`status`, `batch_id`, `items`,
 * `credits_remaining`), camelCase aliases, and details of the HTTP answer.
 *
 * `items[i]` answers request `i`: a {@link BatchItem}, `ok` (a finished lookup), `pending` (still running) or
 * `failed` (its typed `error`; it cost nothing).
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
    this.items = Array.isArray(body.items) ? body.items.map((item) => new BatchItem<T>(item)) : [];
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

  /** The finished lookups (`item.ok`). */
  get succeeded(): BatchItem<T>[] {
    return this.items.filter((item) => item.ok);
  }

  /** The items in error (`item.failed`: invalid, not covered by the balance, or failed). */
  get errors(): BatchItem<T>[] {
    return this.items.filter((item) => item.failed);
  }

  /** The wire envelope, for `JSON.stringify(result)`. */
  toJSON(): BatchEnvelope<T> {
    return this.raw;
  }
}
