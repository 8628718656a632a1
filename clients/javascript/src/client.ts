import { DossierError, PollTimeoutError, parseRetryAfterMs } from './errors.js';
import { BatchResult, SearchResult, withResponseInfo, type ResponseInfo } from './result.js';
import { Transport, invalidResponse, type CallSettings, type HttpAnswer, type HttpRequest } from './transport.js';
import type {
  AccountResponse,
  AnyResult,
  BatchEnvelope,
  BatchRequest,
  CompanyResult,
  CompanySearchParams,
  CreateKeyParams,
  EmailResult,
  FetchLike,
  KeyIssuedResponse,
  KeyListResponse,
  KeyRevokedResponse,
  LoginResponse,
  PendingEnvelope,
  PersonResult,
  PersonSearchParams,
  PhoneResult,
  RegisterResponse,
  ScreenParams,
  SearchHistoryParams,
  SearchHistoryItem,
  SearchHistoryResponse,
  SearchParams,
  SuccessEnvelope,
  VerifyEmailParams,
  VerifyPhoneParams,
  WebhookCreatedResponse,
  WebhookDeletedResponse,
  WebhookDeliveryListResponse,
  WebhookEventType,
  WebhookListResponse,
} from './types.js';
import { INSPECT, compact, envVar, hideSecretsWhenPrinted, uuidv4 } from './util.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

/** Options of `new Client(...)`. Every one is optional. */
export interface ClientOptions {
  /**
   * `dsk_…`. Defaults to the `DOSSIER_API_KEY` environment variable (also when blank). Surrounding
   * whitespace is removed; one with a control character inside throws a `DossierError`.
   */
  apiKey?: string | undefined;
  /**
   * Defaults to the `DOSSIER_BASE_URL` environment variable (also when blank), else `http://127.0.0.1:3000`.
   * Surrounding whitespace and a trailing slash are ignored.
   */
  baseUrl?: string | undefined;
  /**
   * Timeout of one HTTP attempt as a whole, from connecting to the complete answer read, in milliseconds
   * (default 30 000). A lookup asks the server to answer 2 s before it (`Prefer: wait`, when that is under
   * the server's 10 s) and polls after the `202`.
   */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt, on 429, 503, connection failures and (when safe to repeat) 408, 502 and 504 (default 2). */
  maxRetries?: number | undefined;
  /** Base of the exponential backoff in milliseconds (default 500). */
  retryBaseDelayMs?: number | undefined;
  /** Cap of the exponential backoff in milliseconds (default 8 000). */
  retryMaxDelayMs?: number | undefined;
  /**
   * The longest `Retry-After` the client sleeps for before retrying (default 60 000 ms); a longer
   * one ends the retries and the error is thrown at once.
   */
  maxRetryAfterMs?: number | undefined;
  /**
   * How long a lookup may take, from its first request and polling of a `202` included, before
   * `PollTimeoutError` (default 60 000 ms), as the other clients count it.
   */
  pollTimeoutMs?: number | undefined;
  /**
   * Poll interval when a `202` carries no (readable) `Retry-After` (default 1 000 ms). A poll waits the
   * `Retry-After` otherwise, at most `maxRetryAfterMs`, and never past the deadline.
   */
  pollIntervalMs?: number | undefined;
  /** A `fetch` implementation to use instead of the global one. */
  fetch?: FetchLike | undefined;
}

/** Options of `Client.register()` and `Client.login()` (they need no API key). */
export interface AuthOptions extends Omit<ClientOptions, 'apiKey' | 'pollTimeoutMs' | 'pollIntervalMs'>, CallSettings {
  email: string;
  password: string;
}

/** Per-call options of every method (the last argument). */
export interface RequestOptions extends CallSettings {
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number | undefined;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number | undefined;
  /** Aborts the call (including its retries and polling); the promise rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /**
   * Your own id for the call, sent as `X-Request-Id` on every request it makes (retries and polls included): the
   * gateway echoes it in the answer's `X-Request-Id` (`result.requestId`, `err.requestId`) and its logs. 1–128 of
   * `A-Z a-z 0-9 . _ ~ : @ + = / -` (anything else is a `TypeError` before anything is sent). Default: none, and
   * the gateway makes one up.
   */
  requestId?: string | undefined;
}

/** Per-call options of the lookups. */
export interface LookupOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key` (1–255 printable ASCII characters; anything else throws a
   * `TypeError` before the request is sent). Defaults to a fresh UUID v4.
   * The same key is sent on every retry of the call, so a retry never charges twice.
   */
  idempotencyKey?: string | undefined;
  /**
   * `true` (default): wait for the outcome, polling `GET /v1/searches/{id}` after a `202`.
   * `false`: send `Prefer: respond-async` and return the pending search at once
   * (`result.status === "pending"`); fetch it later with `getSearch()`.
   */
  wait?: boolean | undefined;
  /** Overrides the client's `pollTimeoutMs` for this call. */
  pollTimeoutMs?: number | undefined;
  /** Sends `Prefer: wait=N`: how long the server holds the request before answering `202` (default 10, at most 60). */
  serverWaitSeconds?: number | undefined;
}

/** Per-call options of `batch()`: as for a lookup; `idempotencyKey` covers the whole batch. */
export type BatchOptions = LookupOptions;

/** Per-call options of `getSearch()` and `getBatch()`. */
export interface GetSearchOptions extends RequestOptions {
  /** `false` (default): return the search as it is now. `true`: poll while it is pending. */
  wait?: boolean | undefined;
  /** Overrides the client's `pollTimeoutMs` when `wait` is true. */
  pollTimeoutMs?: number | undefined;
}

/** The gateway's synchronous wait when `Prefer: wait` does not shorten it (its SYNC_WAIT_DEFAULT_S). */
const SERVER_WAIT_S = 10;

/** What the gateway accepts as an `Idempotency-Key` (API.md): 1–255 visible ASCII characters (no spaces). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

const GENERIC_FIELDS = ['query', 'type', 'country'] as const;
const PERSON_FIELDS = ['name', 'email', 'phone', 'username', 'location', 'age_range'] as const;

interface Resolved {
  transport: Transport;
  pollTimeoutMs: number;
  pollIntervalMs: number;
}

/** A setting as given: a string without its surrounding whitespace; anything else is none (''). */
function trimmed(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

function resolve(options: ClientOptions, apiKey: string | null): Resolved {
  const fetchImpl = options.fetch ?? (globalThis as { fetch?: FetchLike }).fetch;
  if (typeof fetchImpl !== 'function') {
    throw new DossierError('no global fetch: use Node.js 18 or later, or pass { fetch }');
  }
  // The option, else DOSSIER_BASE_URL, else the default; blank counts as none (as in the other clients).
  const baseUrl = (trimmed(options.baseUrl) || trimmed(envVar('DOSSIER_BASE_URL')) || DEFAULT_BASE_URL).replace(
    /\/+$/,
    '',
  );
  return {
    transport: new Transport({
      apiKey,
      baseUrl,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRetries: options.maxRetries ?? 2,
      retryBaseDelayMs: options.retryBaseDelayMs ?? 500,
      retryMaxDelayMs: options.retryMaxDelayMs ?? 8_000,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
      fetch: options.fetch ?? ((input, init) => fetchImpl(input, init)),
    }),
    pollTimeoutMs: options.pollTimeoutMs ?? 60_000,
    pollIntervalMs: options.pollIntervalMs ?? 1_000,
  };
}

/** What the polling loop needs of an answer: whether it is pending, and its `Retry-After`. */
interface Pollable {
  readonly pending: boolean;
  readonly headers: Record<string, string>;
}

/** How to poll one kind of answer: fetch it again, and the error once the deadline passed. */
interface PollPlan<R> {
  refetch: (options: RequestOptions) => Promise<R>;
  /** The error once the deadline passed, `last` the last pending answer. */
  timeout: (waitedMs: number, last: R) => Error;
}

function call(options: CallSettings | undefined): CallSettings {
  return {
    timeoutMs: options?.timeoutMs,
    maxRetries: options?.maxRetries,
    signal: options?.signal,
    requestId: options?.requestId,
  };
}

/**
 * A Dossier API client.
 *
 * ```ts
 * import { Client } from '@dossier/client';
 * const client = new Client({ apiKey: 'dsk_…' });
 * const result = await client.search({ name: 'Gonzalo Halvorson' });
 * ```
 */
export class Client {
  /** The base URL requests go to (without a trailing slash). */
  readonly baseUrl: string;
  private readonly transport: Transport;
  private readonly pollTimeoutMs: number;
  private readonly pollIntervalMs: number;

  constructor(options: ClientOptions = {}) {
    // Trimmed (a key read from a file keeps its line break); a blank key is no key. As in the other clients.
    const apiKey = trimmed(options.apiKey) || trimmed(envVar('DOSSIER_API_KEY'));
    if (!apiKey) {
      throw new DossierError('no API key: pass new Client({ apiKey: "dsk_…" }) or set DOSSIER_API_KEY');
    }
    if (/[\x00-\x1f\x7f]/.test(apiKey)) {
      // Refused here, without echoing it: fetch would refuse the header on every attempt, key in the message.
      throw new DossierError('the API key contains a control character (a line break or a tab?); it cannot be sent');
    }
    const resolved = resolve(options, apiKey);
    this.transport = resolved.transport;
    this.baseUrl = resolved.transport.settings.baseUrl;
    this.pollTimeoutMs = resolved.pollTimeoutMs;
    this.pollIntervalMs = resolved.pollIntervalMs;
  }

  // -------------------------------------------------------------------------------------------
  // Accounts (static: no key needed)
  // -------------------------------------------------------------------------------------------

  /** Creates an account: `POST /v1/auth/register`. The response carries its first `api_key`. */
  static async register(options: AuthOptions): Promise<RegisterResponse & ResponseInfo> {
    const { transport } = resolve(options, null);
    const answer = await transport.send({
      method: 'POST',
      path: '/v1/auth/register',
      body: compact({ email: options.email, password: options.password }),
      retrySafe: false,
      ...call(options),
    });
    return withResponseInfo(hideSecretsWhenPrinted(shaped<RegisterResponse>(answer, 'register')), answer);
  }

  /** Logs in and issues a new key: `POST /v1/auth/login` → `{ status, api_key, key_id }`. */
  static async login(options: AuthOptions): Promise<LoginResponse & ResponseInfo> {
    const { transport } = resolve(options, null);
    const answer = await transport.send({
      method: 'POST',
      path: '/v1/auth/login',
      body: compact({ email: options.email, password: options.password }),
      retrySafe: false,
      ...call(options),
    });
    return withResponseInfo(hideSecretsWhenPrinted(shaped<LoginResponse>(answer, 'keyIssued')), answer);
  }

  // -------------------------------------------------------------------------------------------
  // Lookups
  // -------------------------------------------------------------------------------------------

  /**
   * Searches with either the generic form (`query`, `type`, `country` → `POST /v1/search`) or
   * person fields (`name`, `email`, `phone`, `username`, `location`, `age_range` →
   * `POST /v1/search/person`). Mixing the two forms throws a `TypeError`. `sites`, `tags` and `top`
   * choose the sites a username is checked on, in either form. `country` is read as the generic form's: for a
   * person search narrowed to a country, use `searchPerson()`.
   */
  async search(params: SearchParams, options?: LookupOptions): Promise<SearchResult<AnyResult>> {
    const body = compact(params) as Record<string, unknown>;
    const generic = GENERIC_FIELDS.filter((k) => k in body);
    const person = PERSON_FIELDS.filter((k) => k in body);
    if (generic.length > 0 && person.length > 0) {
      throw new TypeError(
        `search() takes either query/type/country or person fields, not both (got ${[...generic, ...person].join(', ')})`,
      );
    }
    return this.lookup(generic.length > 0 ? '/v1/search' : '/v1/search/person', body, options);
  }

  /**
   * `POST /v1/search/person`: at least one of name, email, phone, username. With a username, `sites`, `tags` and
   * `top` choose the sites it is checked on (`{ username: 'gonzalo_halvorson', top: 50 }`). `country` keeps people
   * known there (and reads a national `phone` there), `limit` (1–100, default 25) and `min_score` (0–1) cut the
   * answer, all sent as given: `{ name: 'Gonzalo Halvorson', country: 'US', limit: 10, min_score: 0.5 }`. The
   * result's `total_results` says how many items passed `min_score` before `limit` cut them.
   */
  searchPerson(params: PersonSearchParams, options?: LookupOptions): Promise<SearchResult<PersonResult>> {
    return this.lookup('/v1/search/person', compact(params), options);
  }

  /** `POST /v1/search/company`: at least one of company_name, domain, registration_number. */
  searchCompany(params: CompanySearchParams, options?: LookupOptions): Promise<SearchResult<CompanyResult>> {
    return this.lookup('/v1/search/company', compact(params), options);
  }

  /**
   * `POST /v1/screen`: a name screened against the imported sanctions lists alone (ADR 0064). `screen('Rustam
   * Karimov')` or `screen({ name, type, birth_year, country })`. Each item is a listed entity the name matches,
   * with its `watchlist_hits`; charged as a person (or company) lookup, only with a hit.
   */
  screen(params: string | ScreenParams, options?: LookupOptions): Promise<SearchResult<PersonResult | CompanyResult>> {
    const body = typeof params === 'string' ? { name: params } : compact(params);
    return this.lookup('/v1/screen', body, options);
  }

  /** `POST /v1/verify/email`: `verifyEmail('a@example.com')` or `verifyEmail({ email, permissible_purpose })`. */
  verifyEmail(params: string | VerifyEmailParams, options?: LookupOptions): Promise<SearchResult<EmailResult>> {
    const body = typeof params === 'string' ? { email: params } : compact(params);
    return this.lookup('/v1/verify/email', body, options);
  }

  /** `POST /v1/verify/phone`: `verifyPhone('+14155552671')` or `verifyPhone({ phone, country })`. */
  verifyPhone(params: string | VerifyPhoneParams, options?: LookupOptions): Promise<SearchResult<PhoneResult>> {
    const body = typeof params === 'string' ? { phone: params } : compact(params);
    return this.lookup('/v1/verify/phone', body, options);
  }

  /**
   * `GET /v1/searches/{id}`: the search as it is now (`status` `"success"` or `"pending"`), or
   * with `{ wait: true }` once it is done. A failed search throws `UnavailableError`.
   */
  async getSearch(id: string, options?: GetSearchOptions): Promise<SearchResult<AnyResult>> {
    const started = this.transport.clock.now();
    const plan = this.searchPlan<AnyResult>(id, null);
    const result = await plan.refetch(options ?? {});
    if (result.pending && options?.wait) return this.poll(result, plan, options, started);
    return result;
  }

  // -------------------------------------------------------------------------------------------
  // Search history
  // -------------------------------------------------------------------------------------------

  /**
   * `GET /v1/searches`: one page of the account's own searches, newest first, without inputs or
   * results (free). Pass the answer's `next_cursor` as `cursor`, with the same filters, for the
   * next page; `iterSearches()` does that for you.
   */
  async listSearches(params: SearchHistoryParams = {}, options?: RequestOptions): Promise<SearchHistoryResponse & ResponseInfo> {
    const query = new URLSearchParams();
    for (const name of ['kind', 'since', 'until', 'limit', 'cursor'] as const) {
      const value = params[name];
      if (value !== undefined && value !== null) query.set(name, value instanceof Date ? instant(value) : String(value));
    }
    const qs = query.toString();
    const answer = await this.transport.send({
      method: 'GET',
      path: qs ? `/v1/searches?${qs}` : '/v1/searches',
      retrySafe: true,
      ...call(options),
    });
    return withResponseInfo(shaped<SearchHistoryResponse>(answer, 'history'), answer);
  }

  /**
   * Every search `listSearches()` lists with these filters, newest first, fetching page after page
   * (`limit` per request) until `next_cursor` is `null`: `for await (const s of client.iterSearches({ kind: 'phone' }))`.
   */
  async *iterSearches(
    params: Omit<SearchHistoryParams, 'cursor'> = {},
    options?: RequestOptions,
  ): AsyncGenerator<SearchHistoryItem, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.listSearches({ ...params, cursor }, options);
      yield* page.searches;
      if (page.next_cursor === null || page.next_cursor === undefined) return;
      cursor = page.next_cursor;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Batch
  // -------------------------------------------------------------------------------------------

  /**
   * `POST /v1/batch`: 1 to 100 lookups in one call, each `{ kind, input }` with `input` the body
   * of that kind's endpoint. `result.items[i]` answers `requests[i]`: tell success, pending and
   * error apart by `item.status`. Waits and polls `GET /v1/batches/{id}` like a lookup. Fields of
   * an `input` set to `null` or `undefined` are not sent, as for a lookup.
   */
  async batch(requests: BatchRequest[], options: BatchOptions = {}): Promise<BatchResult<AnyResult>> {
    const body = { requests: Array.isArray(requests) ? requests.map(batchRequest) : requests };
    return this.submit('/v1/batch', body, options, toBatch, (first) =>
      this.batchPlan(first.batch_id, first.idempotencyKey),
    );
  }

  /**
   * `GET /v1/batches/{id}`: the batch as it is now (`status` `"success"` or `"pending"`), or with
   * `{ wait: true }` once every item is settled.
   */
  async getBatch(id: string, options?: GetSearchOptions): Promise<BatchResult<AnyResult>> {
    const started = this.transport.clock.now();
    const plan = this.batchPlan(id, null);
    const result = await plan.refetch(options ?? {});
    if (result.pending && options?.wait) return this.poll(result, plan, options, started);
    return result;
  }

  // -------------------------------------------------------------------------------------------
  // Webhooks
  // -------------------------------------------------------------------------------------------

  /**
   * `POST /v1/webhooks`: registers `url` (https) for `events` (default all). The answer's
   * `secret` (`whsec_…`) signs every delivery and is shown only here: keep it for `Webhook.verify()`.
   */
  async createWebhook(
    params: { url: string; events?: WebhookEventType[] | undefined },
    options?: RequestOptions,
  ): Promise<WebhookCreatedResponse & ResponseInfo> {
    const answer = await this.transport.send({
      method: 'POST',
      path: '/v1/webhooks',
      body: compact(params),
      retrySafe: false,
      ...call(options),
    });
    return withResponseInfo(hideSecretsWhenPrinted(shaped<WebhookCreatedResponse>(answer, 'webhookCreated')), answer);
  }

  /** `GET /v1/webhooks`: the account's webhooks, oldest first, without their secrets. */
  async listWebhooks(options?: RequestOptions): Promise<WebhookListResponse & ResponseInfo> {
    const answer = await this.transport.send({
      method: 'GET',
      path: '/v1/webhooks',
      retrySafe: true,
      ...call(options),
    });
    return withResponseInfo(shaped<WebhookListResponse>(answer, 'webhookList'), answer);
  }

  /** `DELETE /v1/webhooks/{id}`: nothing is sent to it from then on. */
  async deleteWebhook(id: string, options?: RequestOptions): Promise<WebhookDeletedResponse & ResponseInfo> {
    const answer = await this.transport.send({
      method: 'DELETE',
      path: `/v1/webhooks/${segment(id)}`,
      retrySafe: true,
      goneOnRetry: true,
      ...call(options),
    });
    const body: WebhookDeletedResponse = answer.gone
      ? { status: 'success', webhook: null }
      : shaped<WebhookDeletedResponse>(answer, 'webhookDeleted');
    return withResponseInfo(body, answer);
  }

  /** `GET /v1/webhooks/{id}/deliveries`: its delivery attempts, newest first (the latest 100). */
  async webhookDeliveries(id: string, options?: RequestOptions): Promise<WebhookDeliveryListResponse & ResponseInfo> {
    const answer = await this.transport.send({
      method: 'GET',
      path: `/v1/webhooks/${segment(id)}/deliveries`,
      retrySafe: true,
      ...call(options),
    });
    return withResponseInfo(shaped<WebhookDeliveryListResponse>(answer, 'deliveries'), answer);
  }

  // -------------------------------------------------------------------------------------------
  // Account and keys
  // -------------------------------------------------------------------------------------------

  /** `GET /v1/account`: the account and its `credits_remaining`. */
  async account(options?: RequestOptions): Promise<AccountResponse & ResponseInfo> {
    const answer = await this.transport.send({ method: 'GET', path: '/v1/account', retrySafe: true, ...call(options) });
    return withResponseInfo(shaped<AccountResponse>(answer, 'account'), answer);
  }

  /**
   * `POST /v1/auth/keys`: a new key (`api_key` is shown once). `createKey('ci')`,
   * `createKey({ name: 'ci' })`, or `createKey({ mode: 'test' })` for a sandbox key (`dsk_test_…`:
   * free lookups answered from the synthetic data set). The default is the calling key's mode: a
   * test key makes only test keys.
   */
  async createKey(params?: string | CreateKeyParams, options?: RequestOptions): Promise<KeyIssuedResponse & ResponseInfo> {
    const body = typeof params === 'string' ? { name: params } : compact(params ?? {});
    const answer = await this.transport.send({
      method: 'POST',
      path: '/v1/auth/keys',
      body,
      retrySafe: false,
      ...call(options),
    });
    return withResponseInfo(hideSecretsWhenPrinted(shaped<KeyIssuedResponse>(answer, 'keyIssued')), answer);
  }

  /**
   * `GET /v1/auth/keys`: every live key of the account and its 100 most recently revoked (`revoked_at` set); a
   * test key sees only the test keys.
   */
  async listKeys(options?: RequestOptions): Promise<KeyListResponse & ResponseInfo> {
    const answer = await this.transport.send({
      method: 'GET',
      path: '/v1/auth/keys',
      retrySafe: true,
      ...call(options),
    });
    return withResponseInfo(shaped<KeyListResponse>(answer, 'keyList'), answer);
  }

  /** `DELETE /v1/auth/keys/{id}`: the key is refused from the next request on. */
  async revokeKey(id: string, options?: RequestOptions): Promise<KeyRevokedResponse & ResponseInfo> {
    const answer = await this.transport.send({
      method: 'DELETE',
      path: `/v1/auth/keys/${segment(id)}`,
      retrySafe: true,
      goneOnRetry: true,
      ...call(options),
    });
    const body: KeyRevokedResponse = answer.gone ? { status: 'success', key: null } : shaped<KeyRevokedResponse>(answer, 'keyRevoked');
    return withResponseInfo(body, answer);
  }

  /** What `JSON.stringify(client)` gives: the base URL and the API key shortened (`dsk_live…`). */
  toJSON(): { baseUrl: string; apiKey: string | null } {
    return { baseUrl: this.baseUrl, apiKey: this.transport.apiKeyHint };
  }

  /** What `console.log(client)` prints: as `toJSON()`, never the whole key. */
  [INSPECT](_depth: number, options: unknown, inspect?: (value: unknown, options: unknown) => string): string {
    const shown = this.toJSON();
    return inspect
      ? `Client ${inspect(shown, options)}`
      : `Client { baseUrl: '${shown.baseUrl}', apiKey: '${shown.apiKey}' }`;
  }

  // -------------------------------------------------------------------------------------------
  // Internals
  // -------------------------------------------------------------------------------------------

  private lookup<T>(path: string, body: object, options: LookupOptions = {}): Promise<SearchResult<T>> {
    return this.submit(path, body, options, toResult<T>, (first) =>
      this.searchPlan<T>(first.search_id, first.idempotencyKey),
    );
  }

  /** POSTs work with an `Idempotency-Key` and `Prefer`, then polls a pending answer until it settles. */
  private async submit<R extends Pollable>(
    path: string,
    body: object,
    options: LookupOptions,
    parse: (answer: HttpAnswer, idempotencyKey: string) => R,
    plan: (first: R) => PollPlan<R>,
  ): Promise<R> {
    const given: unknown = options.idempotencyKey;
    if (given !== undefined && given !== null && (typeof given !== 'string' || !IDEMPOTENCY_KEY.test(given))) {
      // Refused before sending: the gateway would refuse it too, and a CR/LF must never reach a header.
      throw new TypeError('idempotencyKey must be 1–255 printable ASCII characters (no spaces or control characters)');
    }
    const idempotencyKey = options.idempotencyKey ?? uuidv4();
    const wait = options.wait ?? true;
    const headers: Record<string, string> = { 'Idempotency-Key': idempotencyKey };
    if (!wait) headers['Prefer'] = 'respond-async';
    else if (options.serverWaitSeconds !== undefined)
      headers['Prefer'] = `wait=${Math.max(0, Math.floor(options.serverWaitSeconds))}`;
    else if (this.serverWaitFor(options) < SERVER_WAIT_S) headers['Prefer'] = `wait=${this.serverWaitFor(options)}`;
    const request: HttpRequest = { method: 'POST', path, body, headers, retrySafe: true, ...call(options) };
    const started = this.transport.clock.now();
    const result = parse(await this.transport.send(request), idempotencyKey);
    if (result.pending && wait) return this.poll(result, plan(result), options, started);
    return result;
  }

  /** Polling of a search: `GET /v1/searches/{id}`, keeping the lookup's idempotency key on the result. */
  private searchPlan<T>(id: string, idempotencyKey: string | null): PollPlan<SearchResult<T>> {
    return this.pollPlan(`/v1/searches/${segment(id)}`, toResult<T>, idempotencyKey, (waitedMs, last) => {
      return new PollTimeoutError({ search_id: id }, waitedMs, last);
    });
  }

  /** Polling of a batch: `GET /v1/batches/{id}`. */
  private batchPlan(id: string, idempotencyKey: string | null): PollPlan<BatchResult> {
    return this.pollPlan(`/v1/batches/${segment(id)}`, toBatch, idempotencyKey, (waitedMs, last) => {
      return new PollTimeoutError({ batch_id: id }, waitedMs, last);
    });
  }

  private pollPlan<R>(
    path: string,
    parse: (answer: HttpAnswer, idempotencyKey: string | null) => R,
    idempotencyKey: string | null,
    timeout: (waitedMs: number, last: R) => Error,
  ): PollPlan<R> {
    return {
      refetch: async (options) =>
        parse(await this.transport.send({ method: 'GET', path, retrySafe: true, ...call(options) }), idempotencyKey),
      timeout,
    };
  }

  /**
   * How long the gateway may hold a lookup before its `202`, as the Python and PHP clients reckon it: its
   * default, less when the caller's polling budget is shorter, and 2 s under one HTTP attempt's timeout
   * (else every attempt would time out while the server still waits, and be retried).
   */
  private serverWaitFor(options: LookupOptions): number {
    const pollTimeoutMs = options.pollTimeoutMs ?? this.pollTimeoutMs;
    const timeoutMs = options.timeoutMs ?? this.transport.settings.timeoutMs;
    return Math.max(0, Math.min(SERVER_WAIT_S, Math.floor(pollTimeoutMs / 1000), Math.floor(timeoutMs / 1000) - 2));
  }

  /**
   * Polls while pending, honouring `Retry-After`, until the deadline: `pollTimeoutMs` after `started`, when
   * the call sent its first request (as the other clients count it), so the call ends within the budget.
   */
  private async poll<R extends Pollable>(
    first: R,
    plan: PollPlan<R>,
    options: LookupOptions | GetSearchOptions,
    started: number,
  ): Promise<R> {
    const pollTimeoutMs = options.pollTimeoutMs ?? this.pollTimeoutMs;
    const deadline = started + pollTimeoutMs;
    let current = first;
    while (current.pending) {
      const { clock } = this.transport;
      const remaining = deadline - clock.now();
      if (remaining <= 0) throw plan.timeout(clock.now() - started, current);
      const delay = pollDelayMs(current.headers['retry-after'], {
        pollIntervalMs: this.pollIntervalMs,
        maxRetryAfterMs: this.transport.settings.maxRetryAfterMs,
        remainingMs: remaining,
      });
      await clock.sleep(delay, options.signal);
      current = await plan.refetch(options);
    }
    return current;
  }
}

/**
 * The wait before the next poll of a pending answer: its `Retry-After` (1 s from the gateway), else
 * `pollIntervalMs` when it has none or an unreadable one; at most `maxRetryAfterMs` (the longest wait a
 * retry sleeps) and never past the deadline. The same rule as in the Python, Ruby and PHP clients.
 */
export function pollDelayMs(
  retryAfter: string | undefined,
  limits: { pollIntervalMs: number; maxRetryAfterMs: number; remainingMs: number },
): number {
  const wanted = parseRetryAfterMs(retryAfter) ?? limits.pollIntervalMs;
  return Math.min(wanted, limits.maxRetryAfterMs, limits.remainingMs);
}

/**
 * An id as a path segment. An empty one (a bug in the caller) is a `TypeError` before anything is sent, as
 * in the other clients, rather than a 404 "no such route" after a round trip.
 */
function segment(id: unknown): string {
  if (typeof id !== 'string' || id === '') throw new TypeError(`an id must be a non-empty string, got ${String(id)}`);
  return encodeURIComponent(id);
}

/**
 * A history filter's `Date` as sent: RFC 3339 in UTC, its fraction of a second only when it has one (trailing
 * zeros dropped), as in the other clients. An invalid `Date` is a `TypeError` before anything is sent.
 */
function instant(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new TypeError('since and until must be valid Dates (got an Invalid Date)');
  return date.toISOString().replace(/\.?0+Z$/, 'Z');
}

/** One batch request as sent: its `input` without `null`/`undefined` fields, like a lookup's body. */
function batchRequest(request: BatchRequest): BatchRequest {
  const input: unknown = request?.input;
  if (!input || typeof input !== 'object' || Array.isArray(input)) return request;
  return { ...request, input: compact(input) } as BatchRequest;
}

/**
 * A lookup's or `getSearch()`'s answer. One that is not the envelope (`status` `"success"` with its `results` array,
 * or `"pending"`; a `search_id`; `credits_remaining`) is an `APIError` with `code` `null`, as in the other clients:
 * a broken answer is never shown as a search that found nothing.
 */
function toResult<T>(answer: HttpAnswer, idempotencyKey: string | null): SearchResult<T> {
  const body = answer.body as Partial<SuccessEnvelope<T> | PendingEnvelope>;
  const settled = body.status === 'success' && Array.isArray(body.results);
  if (!(settled || body.status === 'pending') || !namesItAndTheBalance(body, 'search_id')) {
    throw invalidResponse(answer, 'a search envelope (status, search_id, credits_remaining and, once done, results)');
  }
  return new SearchResult<T>({
    httpStatus: answer.status,
    body: body as SuccessEnvelope<T> | PendingEnvelope,
    headers: answer.headers,
    idempotencyKey,
  });
}

/** A batch's answer; one that is not the envelope (`status`, `batch_id`, `items`, `credits_remaining`) is an `APIError`. */
function toBatch(answer: HttpAnswer, idempotencyKey: string | null): BatchResult<AnyResult> {
  const body = answer.body as Partial<BatchEnvelope>;
  const settles = (body.status === 'success' || body.status === 'pending') && Array.isArray(body.items);
  if (!settles || !namesItAndTheBalance(body, 'batch_id')) {
    throw invalidResponse(answer, 'a batch envelope (status, batch_id, items, credits_remaining)');
  }
  return new BatchResult({
    httpStatus: answer.status,
    body: body as BatchEnvelope,
    headers: answer.headers,
    idempotencyKey,
  });
}

type Fields = Record<string, unknown>;
const isObject = (v: unknown): v is Fields => !!v && typeof v === 'object' && !Array.isArray(v);
const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v !== '';
const named = (v: unknown): boolean => isObject(v) && nonEmpty(v['id']);
const objects = (v: unknown): boolean => Array.isArray(v) && v.every(isObject);

/**
 * The documented shape (API.md) of every other 2xx answer, beside `status` `"success"`: what it names and what a body
 * must hold to be read as that answer. The same rules in the Python, Ruby and PHP clients.
 */
const ANSWERS = {
  account: ['an account answer (status, account with its id, credits_remaining)', (b: Fields) =>
    named(b['account']) && Number.isInteger(b['credits_remaining'])],
  register: ['a registration answer (status, account with its id, api_key, credits_remaining)', (b: Fields) =>
    named(b['account']) && nonEmpty(b['api_key']) && Number.isInteger(b['credits_remaining'])],
  keyIssued: ['a new key answer (status, api_key, key_id)', (b: Fields) => nonEmpty(b['api_key']) && nonEmpty(b['key_id'])],
  keyList: ['a key list (status, keys)', (b: Fields) => objects(b['keys'])],
  keyRevoked: ['a revoked key answer (status, key with its id)', (b: Fields) => named(b['key'])],
  history: ['a search history page (status, searches, next_cursor)', (b: Fields) =>
    objects(b['searches']) && (b['next_cursor'] === null || nonEmpty(b['next_cursor']))],
  webhookCreated: ['a new webhook answer (status, webhook with its id, secret)', (b: Fields) =>
    named(b['webhook']) && nonEmpty(b['secret'])],
  webhookList: ['a webhook list (status, webhooks)', (b: Fields) => objects(b['webhooks'])],
  webhookDeleted: ['a deleted webhook answer (status, webhook with its id)', (b: Fields) => named(b['webhook'])],
  deliveries: ['a delivery list (status, deliveries)', (b: Fields) => objects(b['deliveries'])],
} as const;

/**
 * The body of a 2xx answer of `kind`; one that is not its documented shape is an `APIError` with `code` `null`, as a
 * lookup's that is not the envelope: a broken answer is never read as an account without an id or an empty list.
 */
function shaped<T>(answer: HttpAnswer, kind: keyof typeof ANSWERS): T {
  const [what, holds] = ANSWERS[kind];
  const body = answer.body as Fields;
  if (body['status'] !== 'success' || !holds(body)) throw invalidResponse(answer, what);
  return body as T;
}

/** Whether a search's or a batch's answer names it (a non-empty `idField`) and the balance (a whole number). */
function namesItAndTheBalance(body: object, idField: 'search_id' | 'batch_id'): boolean {
  const fields = body as Record<string, unknown>;
  const id = fields[idField];
  return typeof id === 'string' && id !== '' && Number.isInteger(fields['credits_remaining']);
}
