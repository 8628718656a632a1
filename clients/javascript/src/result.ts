import type { AnyResult, PendingEnvelope, SourceReport, SuccessEnvelope } from './types.js';

/** What a {@link SearchResult} is built from (one HTTP answer). */
export interface SearchResultInit {
  httpStatus: number;
  body: SuccessEnvelope<unknown> | PendingEnvelope;
  headers: Record<string, string>;
  idempotencyKey: string | null;
}

/**
 * The answer to a lookup or to `getSearch()`: the envelope's wire fields (`status`, `search_id`,
 * `results`, `credits_remaining`, `sources`) as they were sent, camelCase aliases
 * (`searchId`, `creditsRemaining`), and details of the HTTP answer.
 *
 * `status` is `"success"` once the search is done, or `"pending"` when you asked not to wait
 * (`{ wait: false }`); a pending result has `results: []` and `sources: []`.
 */
export class SearchResult<T = AnyResult> {
  /** `"success"` or `"pending"`. */
  readonly status: 'success' | 'pending';
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
  /** HTTP status of the answer this result was built from (`200` or `202`). */
  readonly httpStatus: number;
  /** Response headers, names in lower case. */
  readonly headers: Record<string, string>;
  /** The `Idempotency-Key` the lookup was sent with (`null` for `getSearch()`). */
  readonly idempotencyKey: string | null;

  constructor(init: SearchResultInit) {
    const body = init.body as SuccessEnvelope<T> | PendingEnvelope;
    this.raw = body;
    this.status = body.status;
    this.search_id = body.search_id;
    this.results = body.status === 'success' && Array.isArray(body.results) ? body.results : [];
    this.credits_remaining = body.credits_remaining;
    this.sources = body.status === 'success' && Array.isArray(body.sources) ? body.sources : [];
    this.httpStatus = init.httpStatus;
    this.headers = init.headers;
    this.idempotencyKey = init.idempotencyKey;
  }

  /** camelCase alias of `search_id`. */
  get searchId(): string {
    return this.search_id;
  }

  /** camelCase alias of `credits_remaining`. */
  get creditsRemaining(): number {
    return this.credits_remaining;
  }

  /** `true` while the search is still running (`status === "pending"`). */
  get pending(): boolean {
    return this.status === 'pending';
  }

  /** `X-Credits-Spent` of this answer (`0` on an idempotent replay), or `null` when absent. */
  get creditsSpent(): number | null {
    const value = this.headers['x-credits-spent'];
    return value === undefined || value === '' || Number.isNaN(Number(value)) ? null : Number(value);
  }

  /** `true` when the server replayed an earlier search for the same `Idempotency-Key`. */
  get replayed(): boolean {
    return this.headers['idempotent-replayed'] === 'true';
  }

  /** `X-Request-Id` of the answer. */
  get requestId(): string | null {
    return this.headers['x-request-id'] ?? null;
  }

  /** The wire envelope, for `JSON.stringify(result)`. */
  toJSON(): SuccessEnvelope<T> | PendingEnvelope {
    return this.raw;
  }
}
