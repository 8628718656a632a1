import {
  RATE_FORMAT,
  parseRate,
  type LocalIndex,
  type LookupKind,
  type WatchlistIndex,
  type RateLimit,
  type SourceOutcome,
} from '@dossier/domain';
import type { LookupInputByKind, ProviderItemByKind, SourceReport } from '@dossier/contracts';

/**
 * The small set of upstream failure codes every provider maps its errors onto at its edge:
 *
 * | code            | upstream situation                                                    | outcome        | retried |
 * | --------------- | --------------------------------------------------------------------- | -------------- | ------- |
 * | `rate_limited`  | 429, quota exhausted, our shared limit reached                        | `rate_limited` | no      |
 * | `blocked`       | 403 from a bot filter, WAF or captcha page, login wall                | `blocked`      | no      |
 * | `timeout`       | the call's deadline passed; no connection within the connect timeout  | `timeout`      | no      |
 * | `unresolved`    | its host's name: our resolver could not answer, or lies (see http.ts) | `unknown`      | no      |
 * | `unavailable`   | 5xx, connection refused or reset                                      | `error`        | yes     |
 * | `malformed`     | an answer not in the vendor's documented format                       | `error`        | no      |
 * | `unrecoverable` | credentials refused (401), the key may not use the API                | `error`        | no      |
 * | `rejected`      | this request refused (another 4xx), input it cannot take              | `error`        | no      |
 *
 * Every code but `rate_limited`, `blocked`, `rejected` and `unresolved` counts towards the upstream's circuit
 * breaker: a 429 or a bot wall says the upstream is up, a request it refuses says nothing about the next one,
 * and a name this side's DNS could not resolve says nothing about the upstream.
 */
export const PROVIDER_ERROR_CODES = [
  'rate_limited',
  'blocked',
  'timeout',
  'unavailable',
  'malformed',
  'unrecoverable',
  'rejected',
  'unresolved',
] as const;
export type ProviderErrorCode = (typeof PROVIDER_ERROR_CODES)[number];

export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Worth another attempt within the same deadline (with backoff): only a transient upstream failure. */
  get retryable(): boolean {
    return this.code === 'unavailable';
  }
}

/** Maps a provider error code onto the outcome reported in `sources`. */
export function outcomeOfError(code: ProviderErrorCode): SourceOutcome {
  switch (code) {
    case 'rate_limited':
      return 'rate_limited';
    case 'blocked':
      return 'blocked';
    case 'timeout':
      return 'timeout';
    case 'unresolved':
      return 'unknown';
    case 'unavailable':
    case 'malformed':
    case 'unrecoverable':
    case 'rejected':
      return 'error';
  }
}

/**
 * What a provider call produced. `unknown`: it answered but could not tell (e.g. SMTP greylisting).
 * `timeout`: an upstream of its own did not answer in time, and its items say what is known without that
 * answer (the SMTP probe's item, deliverability `unknown`); a call cut by its own deadline throws instead.
 */
export interface ProviderAnswer<K extends LookupKind> {
  outcome: Extract<SourceOutcome, 'found' | 'not_found' | 'unknown' | 'timeout'>;
  items: ProviderItemByKind[K][];
  /** A short reason, for `unknown` and `timeout` (e.g. "greylisted: 451 from mx.example.com"). */
  detail?: string;
  /**
   * For a provider that checks several upstreams itself (username presence: one per site): one report
   * each, listed in the envelope's `sources` in place of the provider's own entry.
   */
  reports?: SourceReport[];
  /**
   * Person and company items: identities of each item (same index as `items`) that its fields do not
   * show but that make two items one subject when merged — `lei:<LEI>`, `<source>:<external id>`
   * (e.g. `pdl:qEnOZ5Oh0poWnQ1luFBfVw_0000`). The fields that do show (e-mail, phone, registration number
   * in a jurisdiction, domain) are compared by the merge itself.
   */
  identities?: string[][];
}

/** Calls allowed to one upstream across every worker process: `max` per `perMs`. */
export type { RateLimit };

/** Runs one call to a named upstream through the fan-out's guards (breaker, shared rate limit, retries). */
export type UpstreamCall = <T>(
  upstream: { id: string; rateLimit?: RateLimit | null },
  call: (signal: AbortSignal) => Promise<T>,
) => Promise<T>;

/**
 * What a provider that checks several upstreams itself (username presence) knows while it runs: the items and
 * reports so far, and how many of its upstreams have still to answer.
 */
export interface ProviderProgress {
  items: ProviderItemByKind[LookupKind][];
  reports: SourceReport[];
  pending: number;
}

/** Per-call context: the deadline, this provider's resolved settings, and the guards for its own upstreams. */
export interface ProviderContext {
  /** Aborts at this call's deadline: the request's remaining wait, never longer than the provider's timeout. */
  signal: AbortSignal;
  /**
   * That deadline, epoch ms (absent: the provider's own timeout from now). A provider that checks several
   * upstreams itself ends them a little before it, so that its answer carries each one's report.
   */
  deadlineAt?: number;
  /**
   * For a provider that checks several upstreams itself: told each time one of them answered, with a way to read
   * what it knows so far, which the fan-out reads when it writes the search's progress (ADR 0049).
   */
  progress?: (snapshot: () => ProviderProgress) => void;
  settings: Readonly<Record<string, string | undefined>>;
  /**
   * For a provider that fans out itself: each of its upstream calls through the same guards as a
   * provider call (its own breaker and shared rate limit, bounded retries). Errors are ProviderErrors;
   * an open breaker throws SkippedCall (`reportOfFailure` maps both onto a report).
   */
  upstream: UpstreamCall;
  /** The operator's imported records (the `local` provider reads them); absent where no database is wired. */
  localIndex?: LocalIndex;
  /** The sanctions lists the operator imported (the `watchlists` provider reads them, ADR 0064). */
  watchlists?: WatchlistIndex;
}

export interface Provider<K extends LookupKind = LookupKind> {
  /** Stable id, reported in `sources[].provider` and in result items' `sources[]`. */
  readonly id: string;
  readonly kinds: readonly K[];
  /** Environment keys this provider reads (e.g. `PDL_API_KEY`, `PDL_BASE_URL`); `<ID>_RATE_LIMIT` is implied. */
  readonly configKeys: readonly string[];
  /** The longest one call may take. */
  readonly defaultTimeoutMs: number;
  /**
   * How it reaches its source: `none` (offline), `database` (the local indexes in Postgres), `dns`, `smtp`,
   * or `http` — every `http` provider has a
   * `<id>.contract.ts` beside it and passes the shared contract test against a loopback fake of its vendor.
   */
  readonly transport: 'none' | 'dns' | 'smtp' | 'http' | 'database';
  /**
   * `request` (default): a call also ends when the request's synchronous wait does. `own`: the provider
   * keeps its own timeout even after the caller got its 202 (the providers that make the one item a phone or
   * e-mail lookup always answers: libphonenumber, email, sandbox).
   */
  readonly deadline?: 'request' | 'own';
  /** The vendor's published limit, shared by every worker; `<ID>_RATE_LIMIT` (`600/300s`) overrides it. */
  readonly rateLimit?: RateLimit;
  /**
   * `false` for a provider whose upstream is whatever the input names (the e-mail checks: each domain's
   * name servers, each address's mail hosts): a failure there says nothing about the next input, so it
   * has no circuit breaker — one domain whose mail host hangs past the callers' wait would otherwise
   * switch the check off for every address. Default `true`: one vendor, one breaker.
   */
  readonly breaker?: boolean;
  /**
   * When merged items disagree, the value of the provider with the higher precedence wins (default 0):
   * live data over range data (Twilio over libphonenumber), first-hand checks over a vendor's opinion.
   */
  readonly precedence?: number;
  /**
   * `accounts` for a provider whose whole answer is the accounts associated with the subject (Gravatar's
   * profile of an address): when the subject is suppressed those go, and with them what it found — its
   * `found` then reads `not_found` and charges nothing (ADR 0015). `watchlist_hits` for a provider whose
   * items are listed entities carrying sanctions-list hits (`watchlists`): the worker moves each hit onto the
   * items of the answer that are that subject, suppression never drops them, and a screening-only lookup
   * (`POST /v1/screen`) asks these providers alone (ADR 0064).
   */
  readonly findsOnly?: 'accounts' | 'watchlist_hits';
  /**
   * `true` for the sandbox provider only: it answers test keys' lookups, from synthetic data, and is
   * never called for a live one (ADR 0021).
   */
  readonly sandbox?: boolean;
  /**
   * Checks the operator's settings beyond their names (a file it reads, a number's range): throws an Error
   * whose message names the setting, and the worker refuses to start with it. Runs once, at boot.
   */
  validateSettings?(settings: Readonly<Record<string, string | undefined>>): void;
  /** `true`, or why it is not called for this lookup (reported as `skipped` with that detail). */
  isConfigured(settings: Readonly<Record<string, string | undefined>>): true | string;
  /**
   * A quick check, at start-up, that what it calls can be reached: `true`, or why not — for the start-up log
   * (`providerStatus`), never for a lookup. For the keyless upstreams (`baseUrlReach`) and the resolvers
   * (`resolversReach`); none for a licensed upstream (a vendor that counts or bills calls is not called
   * unasked), nor for a provider with nothing to reach (offline, the database) or whose upstream is each
   * input's own (the username sites).
   */
  checkReach?(settings: Readonly<Record<string, string | undefined>>, signal: AbortSignal): Promise<true | string>;
  /** Whether it has anything to do for this input (default: yes). A provider that does not apply is not listed. */
  appliesTo?(input: LookupInputByKind[K]): boolean;
  lookup(kind: K, input: LookupInputByKind[K], ctx: ProviderContext): Promise<ProviderAnswer<K>>;
}

/** A provider's environment key: its id upper-cased, `-` as `_` (`companies-house`, `BASE_URL` → `COMPANIES_HOUSE_BASE_URL`). */
function settingKey(id: string, name: string): string {
  return `${id.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_${name}`;
}

/** The environment key of a provider's shared rate limit: `companies-house` → `COMPANIES_HOUSE_RATE_LIMIT`. */
export function rateLimitKey(id: string): string {
  return settingKey(id, 'RATE_LIMIT');
}

/** The environment key of a provider's base URL: `companies-house` → `COMPANIES_HOUSE_BASE_URL`. */
export function baseUrlKey(id: string): string {
  return settingKey(id, 'BASE_URL');
}

/** `600/300s`, `10/1s`, `100/1h` → a RateLimit; undefined for an unset value; throws on a malformed one. */
export function parseRateLimit(value: string | undefined, key: string): RateLimit | undefined {
  if (value === undefined) return undefined;
  const limit = parseRate(value);
  if (!limit) throw new Error(`${key}: expected ${RATE_FORMAT}, got "${value}"`);
  return limit;
}

/** A provider's shared limit: the operator's `<ID>_RATE_LIMIT` when set, else the vendor's published one. */
export function rateLimitOf(
  provider: Pick<Provider, 'id' | 'rateLimit'>,
  settings: Readonly<Record<string, string | undefined>>,
): RateLimit | null {
  const key = rateLimitKey(provider.id);
  return parseRateLimit(settings[key], key) ?? provider.rateLimit ?? null;
}

/** Every setting a provider reads: its own keys and its rate-limit override. */
export function settingKeysOf(provider: Pick<Provider, 'id' | 'configKeys'>): string[] {
  return [...provider.configKeys, rateLimitKey(provider.id)];
}

/** A call the guards did not make (its upstream's circuit is open): reported as `skipped` with this detail. */
export class SkippedCall extends Error {
  override readonly name = 'SkippedCall';
}

/** `detail` is for people: a short reason, never a stack or a URL. */
const MAX_DETAIL = 200;

export function shortDetail(text: string): string {
  return text.length <= MAX_DETAIL ? text : `${text.slice(0, MAX_DETAIL - 1)}…`;
}

/** A failed call as a source report: its outcome and a short reason. */
export function reportOfFailure(provider: string, error: unknown, tookMs: number): SourceReport {
  if (error instanceof SkippedCall)
    return { provider, outcome: 'skipped', took_ms: 0, detail: shortDetail(error.message) };
  if (error instanceof ProviderError) {
    return { provider, outcome: outcomeOfError(error.code), took_ms: tookMs, detail: shortDetail(error.message) };
  }
  // AbortSignal.timeout() rejects with a DOMException: look at the name, not the class.
  const name = typeof error === 'object' && error !== null ? (error as { name?: unknown }).name : undefined;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return { provider, outcome: 'timeout', took_ms: tookMs, detail: 'no answer before the deadline' };
  }
  return { provider, outcome: 'error', took_ms: tookMs, detail: 'the provider failed unexpectedly' };
}

/** The error of a provider whose call's deadline passed before it was done. */
export function deadlinePassed(providerId: string, signal: AbortSignal): ProviderError {
  return new ProviderError('timeout', `${providerId}: the lookup deadline passed`, undefined, { cause: signal.reason });
}

/** A context whose upstream calls run directly, without guards: for a provider's own tests and tools. */
export function unguardedContext(
  signal: AbortSignal,
  settings: Readonly<Record<string, string | undefined>> = {},
  localIndex?: LocalIndex,
): ProviderContext {
  return { signal, settings, upstream: (_upstream, call) => call(signal), ...(localIndex ? { localIndex } : {}) };
}
