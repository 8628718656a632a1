import type { LookupFunction, Socket } from 'node:net';
import { TextDecoder } from 'node:util';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { resolverAt, type ResolveHost } from '@dossier/contracts';
import { untilAborted } from '@dossier/domain';
import { ProviderError, baseUrlKey, type Provider } from './provider';
import { resolverSanity } from './resolver-sanity';

/** UPSTREAM_CONNECT_TIMEOUT_MS's default (libs/config), for a process that sets none (a provider's tests, tools). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 3000;

/** How the process reaches HTTP upstreams: what the worker sets at boot from its configuration. */
export interface UpstreamNetwork {
  /**
   * Longest the connection may take — resolving the host, the TCP handshake, the TLS one — apart from the
   * answer's own deadline (UPSTREAM_CONNECT_TIMEOUT_MS): an upstream that cannot be reached costs this.
   */
  connectTimeoutMs: number;
  /** Resolvers of upstream host names, `host:port`; null: the system's (getaddrinfo). Tests only. */
  dnsServers: readonly string[] | null;
}

let network: UpstreamNetwork = { connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS, dnsServers: null };
let upstreamAgent = agentFor(network);

/** Sets how HTTP upstreams are reached from now on (the worker, at boot); the previous connections close. */
export function useUpstreamNetwork(next: UpstreamNetwork): void {
  const previous = upstreamAgent;
  network = { ...next };
  upstreamAgent = agentFor(network);
  void previous.close();
}

/** How HTTP upstreams are reached now. */
export function upstreamNetwork(): Readonly<UpstreamNetwork> {
  return network;
}

/** The connection pool of upstream calls: undici's Agent (what fetch runs on), with the connect timeout. */
function agentFor({ dnsServers }: UpstreamNetwork): Agent {
  return new Agent({
    connect: upstreamConnector(dnsServers ? connectLookup(asGetaddrinfo(resolverAt(dnsServers))) : undefined),
  });
}

/**
 * How upstream connections are made (an Agent's `connect`): undici's connector — resolving the host through
 * `lookup` (the system's when absent), TCP, TLS — failed with undici's ConnectTimeoutError when not done within
 * the connect timeout. The timer is a plain one: undici's own connect timeout runs on its coarse timers (1 s
 * resolution: a 300 ms one ended connections after 1.1 s).
 */
export function upstreamConnector(lookup?: LookupFunction): buildConnector.connector {
  const timeoutMs = network.connectTimeoutMs;
  const connect = buildConnector({ timeout: 0, ...(lookup ? { lookup } : {}) }) as unknown as (
    options: buildConnector.Options,
    callback: buildConnector.Callback,
  ) => Socket;
  return (options, callback) => {
    const timer = setTimeout(() => socket.destroy(connectTimeout(timeoutMs)), timeoutMs);
    const socket = connect(options, (...args) => {
      clearTimeout(timer);
      callback(...args);
    });
  };
}

/**
 * The error of a connection not made in time, with the code of undici's own (`UND_ERR_CONNECT_TIMEOUT`). A
 * plain Error: fetch keeps an error of another class only when it is its own realm's, and turns one of a test
 * VM's into bare text.
 */
function connectTimeout(timeoutMs: number): Error {
  return Object.assign(new Error(`no connection within ${timeoutMs} ms`), { code: 'UND_ERR_CONNECT_TIMEOUT' });
}

/**
 * A connection's host lookup (net.connect's `lookup`) answered by `resolve`: the addresses of the family
 * asked, all of them when asked for all. `vet` may refuse what it found (its Error fails the connection).
 */
export function connectLookup(
  resolve: ResolveHost,
  vet: (hostname: string, found: { address: string; family: number }[]) => Error | null = () => null,
): LookupFunction {
  return (hostname, options, callback) => {
    const done = callback as (error: Error | null, address?: unknown, family?: number) => void;
    resolve(hostname).then(
      (found) => {
        const refused = vet(hostname, found);
        if (refused) return done(refused);
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = found.filter((a) => family === 0 || a.family === family);
        const first = usable[0];
        if (!first) return done(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
        if (options.all) return done(null, usable);
        return done(null, first.address, first.family);
      },
      (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
    );
  };
}

/**
 * DNS servers' answers failing as getaddrinfo's do: a name that does not exist (NXDOMAIN, or no address
 * records) `ENOTFOUND`, resolvers that cannot answer (SERVFAIL, REFUSED, silent) `EAI_AGAIN`.
 */
function asGetaddrinfo(resolve: ResolveHost): ResolveHost {
  return (host, signal) =>
    resolve(host, signal).catch((error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      const as = code === 'ENOTFOUND' || code === 'ENODATA' ? 'ENOTFOUND' : 'EAI_AGAIN';
      throw Object.assign(new Error(`getaddrinfo ${as} ${host}`), { code: as, hostname: host });
    });
}

/**
 * Bodies larger than this are cut off (`truncated`): no API answer Dossier reads comes close; a web page
 * (a username site's) may, and is then judged on its beginning only.
 */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** How much of an answer's beginning the challenge checks read (`looksLikeChallenge`). */
export const CHALLENGE_HEAD_BYTES = 64 * 1024;

/** Signs that a page is a bot filter, a WAF or captcha challenge, or a login wall — never a real answer. */
const CHALLENGE_MARKERS = [
  /<title>\s*Just a moment/i,
  // Only a challenge page's own signs: Cloudflare injects its bot-detection script
  // (/cdn-cgi/challenge-platform/scripts/jsd/…) and its __cf_bm cookie into ordinary pages too.
  /cf-chl-|cf_chl_opt/i,
  /Attention Required! \| Cloudflare/i,
  /<title>[^<]*(captcha|are you a (human|robot)|verify you are (a )?human|security check)/i,
  /Access Denied|Request blocked|Pardon Our Interruption|px-captcha|distil_r_captcha/i,
  // The WAF pages Sherlock recognises (Cloudflare's error page, AWS WAF, PerimeterX); DataDome; Yandex.
  /id="challenge-error-text"|AwsWafIntegration\.|perimeterxIdentifiers|captcha-delivery\.com|CheckboxCaptcha/,
  // Block pages served with 200: Imperva (Incapsula) — not its /_Incapsula_Resource script, which it puts
  // into the pages it lets through — and F5 BIG-IP ASM's default; PerimeterX's by its title.
  /Incapsula incident ID|The requested URL was rejected\. Please consult with your administrator/,
  /<title>\s*Access to this page has been denied/i,
];
/** In place of an API's data, any mention of a captcha is a challenge; a web page may merely embed one. */
const CAPTCHA = /captcha/i;

/**
 * Whether an answer is a challenge rather than the answer. `page`: it is a web page, which may embed a
 * captcha widget (a sign-in box) and still be the page asked for — only the signs of a challenge page count.
 */
export function looksLikeChallenge(text: string, headers: Headers, opts: { page?: boolean } = {}): boolean {
  if (headers.get('cf-mitigated') === 'challenge') return true;
  const head = text.slice(0, CHALLENGE_HEAD_BYTES);
  return CHALLENGE_MARKERS.some((re) => re.test(head)) || (!opts.page && CAPTCHA.test(head));
}

/**
 * A 429 as a ProviderError: `rate_limited`, with the wait the upstream asked for (its `Retry-After`,
 * or `after` where the vendor says it otherwise) in ms and in its message.
 */
export function rateLimited(id: string, headers: Headers, after = retryAfterMs(headers)): ProviderError {
  return new ProviderError(
    'rate_limited',
    `${id}: rate limited (429${after !== undefined ? `, retry after ${Math.ceil(after / 1000)}s` : ''})`,
    after,
  );
}

/** `Retry-After` in ms: seconds, or an HTTP date. */
export function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

/**
 * The ms until a rate-limit window ends, from a vendor's reset header (`X-Ratelimit-Reset`): Unix seconds
 * (Companies House) or a date (People Data Labs' UTC time, `2022-02-23T20:19:55Z`); undefined when absent
 * or unreadable.
 */
export function untilResetMs(value: string | null): number | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  const at = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed);
  return Number.isFinite(at) && at > 0 ? Math.max(0, at - Date.now()) : undefined;
}

/**
 * An upstream's base URL from its `<ID>_BASE_URL` setting (or the vendor's own), without a trailing
 * slash, so paths can be appended.
 */
export function baseUrlOf(
  settings: Readonly<Record<string, string | undefined>>,
  key: string,
  fallback: string,
): string {
  return (settings[key] ?? fallback).replace(/\/+$/, '');
}

/**
 * A whole-number setting written in digits, from `min` to `max` (`fallback` when unset); throws naming it
 * otherwise. Not `Number()` of any text, which reads `0x10` as 16 and `1e3` as 1000.
 */
export function integerSetting(
  settings: Readonly<Record<string, string | undefined>>,
  key: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const value = settings[key];
  if (value === undefined) return fallback;
  const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${key}: expected a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

/**
 * For `validateSettings`: an on/off setting (`<ID>_ENABLED`), when set, is `true` or `false` — `0` or `FALSE`
 * stops the worker at boot instead of counting as "not false", so on.
 */
export function checkSwitch(settings: Readonly<Record<string, string | undefined>>, key: string): void {
  const value = settings[key];
  if (value !== undefined && value !== 'true' && value !== 'false')
    throw new Error(`${key}: expected true or false, got "${value}"`);
}

/**
 * For `validateSettings`: the `<ID>_BASE_URL` setting, when set, is an absolute http(s) URL without
 * credentials, query or fragment — a typo stops the worker at boot, naming the variable, instead of
 * failing every call as `unavailable` (fetch refuses a URL with `user:pass@` on every call). The message
 * shows the value without what may be a secret: its `user:pass@` and its query.
 */
export function checkBaseUrl(settings: Readonly<Record<string, string | undefined>>, key: string): void {
  const value = settings[key];
  if (value === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const plain =
    url &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.username === '' &&
    url.password === '' &&
    url.search === '' &&
    url.hash === '';
  if (!plain) {
    const shown = value.replace(/^([^:/?#]*:\/\/)[^/?#]*@/, '$1…@').replace(/[?#].*$/s, '?…');
    throw new Error(
      `${key}: expected an http(s) URL such as https://api.example.com, with no user:password@, query or fragment (a key has its own setting), got "${shown}"`,
    );
  }
}

export interface UpstreamResponse {
  status: number;
  headers: Headers;
  /** The final URL after redirects (when followed). */
  url: string;
  text: string;
  /**
   * The body went on past what was read (MAX_BODY_BYTES, the request's `maxBodyBytes`, or what its
   * `allowance` granted): `text` is its beginning only, the rest was not read.
   */
  truncated: boolean;
}

export interface UpstreamRequest {
  url: string;
  method?: 'GET' | 'POST' | 'HEAD' | 'PUT';
  headers?: Record<string, string>;
  body?: string;
  /**
   * `follow` (default): a redirect on the request's own origin (scheme, host and port) is followed, up to
   * MAX_REDIRECTS; one to another origin is not (`malformed`). `manual` keeps a redirect as the answer
   * (status 3xx with a Location), for checks that read it.
   */
  redirect?: 'follow' | 'manual';
  /** Connects through this in place of the process's default (a lookup that refuses some addresses). */
  dispatcher?: Dispatcher;
  /** Reads at most this much of the body (at most MAX_BODY_BYTES): a caller that reads only a page's beginning. */
  maxBodyBytes?: number;
  /** A budget shared by several requests: each chunk of the body is read only as far as it grants. */
  allowance?: BodyAllowance;
}

/** Grants up to `bytes` of body to read (fewer, down to 0, when its budget is short); the rest is not read. */
export interface BodyAllowance {
  take(bytes: number): number;
}

/** Redirects `request` follows on the upstream's own origin. */
const MAX_REDIRECTS = 5;

/**
 * One HTTP exchange with an upstream, through the process's upstream connections (`useUpstreamNetwork`) or
 * the request's own dispatcher, with network failures mapped onto ProviderErrors at the edge (`networkError`):
 * the deadline passing, or no connection within the connect timeout, is `timeout`; a host the resolver could
 * not resolve, or says does not exist while it cannot be trusted, `unresolved`; a refused or reset connection,
 * or a host that does not exist, `unavailable`. The status is the caller's to judge (see `expectJson` for the
 * usual API mapping). `id` names the upstream in messages; messages never carry the URL (it may hold a key).
 *
 * Redirects are followed by hand, on the configured origin only: fetch would follow one anywhere, sending
 * a key in a vendor's own header (`X-Api-Key`; it drops only Authorization across origins) to that host and
 * taking its answer for the vendor's. A redirect elsewhere, or a sixth, is `malformed`; one without a Location
 * is the answer (redirectOf).
 */
export async function request(id: string, req: UpstreamRequest, signal: AbortSignal): Promise<UpstreamResponse> {
  let current = req;
  try {
    for (let redirects = 0; ; redirects++) {
      const res = await fetch(current.url, {
        method: current.method ?? 'GET',
        headers: current.headers,
        body: current.body,
        redirect: 'manual',
        signal,
        dispatcher: current.dispatcher ?? upstreamAgent,
      });
      const next = req.redirect === 'manual' ? null : redirectOf(id, res, current.url);
      if (next === null) {
        const { bytes, truncated } = await readCapped(res, current);
        return {
          status: res.status,
          headers: res.headers,
          url: current.url,
          text: decodeBody(bytes, res.headers),
          truncated,
        };
      }
      await res.body?.cancel();
      if (next.origin !== new URL(current.url).origin)
        throw new ProviderError('malformed', `${id}: redirected to another host (${res.status}), not followed`);
      if (redirects === MAX_REDIRECTS)
        throw new ProviderError('malformed', `${id}: more than ${MAX_REDIRECTS} redirects`);
      current = redirected(current, res.status, next);
    }
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    if (signal.aborted)
      throw new ProviderError('timeout', `${id}: no answer before the deadline`, undefined, { cause: error });
    throw await networkError(id, error, new URL(current.url).hostname, signal);
  }
}

/**
 * For `checkReach`: whether `url`'s host answers HTTP at all — a HEAD of it, no key sent, any status will do —
 * `true`, or why not, as `request` words it.
 */
export async function reachable(id: string, url: string, signal: AbortSignal): Promise<true | string> {
  try {
    await request(id, { url, method: 'HEAD', redirect: 'manual', maxBodyBytes: 0 }, signal);
    return true;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return message.startsWith(`${id}: `) ? message.slice(id.length + 2) : message;
  }
}

/** The `checkReach` of a keyless provider whose one API is at `<ID>_BASE_URL` (the vendor's own, `fallback`, when unset). */
export function baseUrlReach(id: string, fallback: string): NonNullable<Provider['checkReach']> {
  return (settings, signal) => reachable(id, baseUrlOf(settings, baseUrlKey(id), fallback), signal);
}

/**
 * A request's network failure (`error`, fetch's, for `host`) as a ProviderError. A host not found is
 * `unavailable` only from resolvers whose NXDOMAIN is believed (`resolverSanity`: asked once a minute, on
 * such an answer only); behind resolvers that answer NXDOMAIN for every name — a captive portal, broken
 * corporate DNS — nothing was asked of the upstream, and the answer is `unresolved`.
 */
async function networkError(id: string, error: unknown, host: string, signal: AbortSignal): Promise<ProviderError> {
  const code = causeCode(error);
  const cause = { cause: error };
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new ProviderError(
      'timeout',
      `${id}: no connection to ${host} within ${network.connectTimeoutMs} ms (UPSTREAM_CONNECT_TIMEOUT_MS)`,
      undefined,
      cause,
    );
  }
  if (code === 'EAI_AGAIN')
    return new ProviderError(
      'unresolved',
      `${id}: the DNS resolver could not resolve ${host} (EAI_AGAIN)`,
      undefined,
      cause,
    );
  if (code === 'ENOTFOUND') {
    const sanity = await untilAborted(
      resolverSanity.of(network.dnsServers),
      signal,
      () => new ProviderError('timeout', `${id}: no answer before the deadline`, undefined, cause),
    );
    if (!sanity.trusted) {
      return new ProviderError(
        'unresolved',
        `${id}: the resolver answers NXDOMAIN for ${host}, and ${sanity.detail}`,
        undefined,
        cause,
      );
    }
  }
  return new ProviderError('unavailable', `${id}: ${networkReason(error)}`, undefined, cause);
}

/** The headers that describe a request's body (Fetch's request-body-header names): dropped with it. */
const BODY_HEADERS: ReadonlySet<string> = new Set([
  'content-encoding',
  'content-language',
  'content-location',
  'content-type',
]);

/**
 * The request a redirect (`status`, to `to`) leads to, as fetch makes it (Fetch, HTTP-redirect fetch): a 301
 * or 302 turns a POST, and a 303 any method but GET and HEAD, into a GET without the body and the headers
 * that describe it; otherwise — 307 and 308 always, a HEAD always — the method and body go on.
 */
export function redirected<R extends UpstreamRequest>(req: R, status: number, to: URL): R {
  const method = req.method ?? 'GET';
  const asGet =
    ((status === 301 || status === 302) && method === 'POST') ||
    (status === 303 && method !== 'GET' && method !== 'HEAD');
  return asGet
    ? { ...req, url: to.toString(), method: 'GET', headers: without(req.headers, BODY_HEADERS), body: undefined }
    : { ...req, url: to.toString() };
}

/** `headers` without those named (lower-case) in `names`. */
export function without(
  headers: Record<string, string> | undefined,
  names: ReadonlySet<string>,
): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).filter(([name]) => !names.has(name.toLowerCase())));
}

/**
 * A vendor's clean miss as it documents it: one of `status` (usually 404) carrying its own body — `body`,
 * the schema of its error envelope (`{"errors":[…]}`, `{"status":404,"error":{…}}`). The same status
 * without that body did not come from the vendor's API (a proxy's page, a base URL that reaches no such
 * API): nothing was looked up.
 */
export interface NotFoundAnswer {
  status: readonly number[];
  body: z.ZodType;
}

/**
 * The usual mapping of an API's answer: 2xx → its JSON checked against `schema` (anything else is
 * `malformed`); a `notFound` answer → `null` (a clean miss); 429 → `rate_limited` with Retry-After, else
 * the end of the window the vendor names in its `reset` header (`X-RateLimit-Reset`: see untilResetMs); 401 →
 * `unrecoverable` (credentials refused); 403 → `blocked`; a 404 that is not the vendor's documented miss
 * (or a `notFound` status without its body) → `malformed`, naming `<ID>_BASE_URL`: never "nothing
 * found" for a lookup that reached no vendor; other 4xx → `rejected` (this request, not the upstream);
 * 5xx → `unavailable`, with its Retry-After.
 * A challenge page in place of JSON is `blocked`.
 */
export function expectJson<S extends z.ZodType>(
  id: string,
  res: UpstreamResponse,
  schema: S,
  opts: { notFound?: NotFoundAnswer; reset?: string } = {},
): z.output<S> | null {
  if (opts.notFound?.status.includes(res.status)) {
    if (parsesAs(res.text, opts.notFound.body)) return null;
    throw notTheVendors(id, res.status);
  }
  if (res.status === 429)
    throw rateLimited(
      id,
      res.headers,
      retryAfterMs(res.headers) ?? (opts.reset ? untilResetMs(res.headers.get(opts.reset)) : undefined),
    );
  if (res.status === 401) throw new ProviderError('unrecoverable', `${id}: credentials refused (401)`);
  if (res.status === 403) {
    const why = looksLikeChallenge(res.text, res.headers) ? 'a bot challenge' : 'forbidden';
    throw new ProviderError('blocked', `${id}: ${why} (403)`);
  }
  if (res.status >= 500)
    throw new ProviderError('unavailable', `${id}: upstream error (${res.status})`, retryAfterMs(res.headers));
  // The endpoint is not there: the configured address reaches something other than the vendor's API.
  if (res.status === 404) throw notTheVendors(id, res.status);
  if (res.status < 200 || res.status >= 300)
    throw new ProviderError('rejected', `${id}: request refused (${res.status})`);
  let body: unknown;
  try {
    body = JSON.parse(res.text) as unknown;
  } catch {
    if (looksLikeChallenge(res.text, res.headers))
      throw new ProviderError('blocked', `${id}: a bot challenge instead of an answer`);
    throw new ProviderError('malformed', `${id}: the answer is not JSON`);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new ProviderError(
      'malformed',
      `${id}: unexpected answer${first ? ` (${first.path.join('.') || 'body'}: ${first.message})` : ''}`,
    );
  }
  return parsed.data;
}

/** A miss status whose answer is not the vendor's: `malformed`, sending the operator to the base URL setting. */
function notTheVendors(id: string, status: number): ProviderError {
  return new ProviderError(
    'malformed',
    `${id}: a ${status} that is not the vendor's answer (is ${baseUrlKey(id)} right?)`,
  );
}

/**
 * The statuses followed as redirects, as fetch follows them (Fetch's redirect statuses): not a 300, 305 or
 * 306, nor a 304; such an answer is the answer.
 */
export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * Where a redirect (one of REDIRECT_STATUSES) points, for `request` and the username checks alike; null for
 * any other answer, and for a redirect without a Location: it names nowhere to go, so it is the answer as it
 * is, read by the caller's rules (as fetch keeps it). A Location that is no http(s) address is `malformed`.
 */
export function redirectOf(id: string, res: { status: number; headers: Headers }, from: string): URL | null {
  if (!REDIRECT_STATUSES.has(res.status)) return null;
  const location = locationOf(res.headers);
  if (location === null) return null;
  let url: URL | null = null;
  try {
    url = new URL(location, from);
  } catch {
    // not an address: malformed, below
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new ProviderError('malformed', `${id}: a redirect (${res.status}) without a valid Location`);
  return url;
}

/**
 * An answer's Location, as fetch reads it: a header's bytes come as one character each, and a site that
 * writes an address unescaped (`/u/José`) sends it as UTF-8 — read byte by byte, it named another address
 * (`/u/JosÃ©`). Browsers and fetch's own redirects read such a value as UTF-8.
 */
export function locationOf(headers: Headers): string | null {
  const location = headers.get('location');
  return location !== null && /[^\x00-\x7f]/.test(location)
    ? Buffer.from(location, 'latin1').toString('utf8')
    : location;
}

/** Whether a body is JSON of the given shape: to tell a vendor's own error envelope from a proxy's page. */
export function parsesAs(text: string, schema: z.ZodType): boolean {
  try {
    return schema.safeParse(JSON.parse(text)).success;
  } catch {
    return false;
  }
}

/**
 * The body's first MAX_BODY_BYTES (or the request's `maxBodyBytes`), as far as its `allowance` grants, and
 * whether there was more (left unread). A chunk is copied down to its granted part: the stream's own
 * buffer may be larger than what is kept.
 */
async function readCapped(
  res: Response,
  { maxBodyBytes = MAX_BODY_BYTES, allowance }: UpstreamRequest,
): Promise<{ bytes: Buffer; truncated: boolean }> {
  if (!res.body) return { bytes: Buffer.alloc(0), truncated: false };
  const cap = Math.min(maxBodyBytes, MAX_BODY_BYTES);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const wanted = Math.min(value.byteLength, cap - size);
    const granted = allowance ? allowance.take(wanted) : wanted;
    if (granted < value.byteLength) {
      if (granted > 0) chunks.push(Buffer.from(value.subarray(0, granted)));
      truncated = true;
      await reader.cancel();
      break;
    }
    size += value.byteLength;
    chunks.push(value);
  }
  return { bytes: Buffer.concat(chunks), truncated };
}

const HEADER_CHARSET = /;\s*charset\s*=\s*["']?([^"';\s]+)/i;
const META_CHARSET = /<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([\w.:-]+)/i;

/** The byte-order marks the Encoding standard's BOM sniff knows, and the encoding each names. */
const BYTE_ORDER_MARKS = [
  { mark: Buffer.from([0xef, 0xbb, 0xbf]), encoding: 'utf-8' },
  { mark: Buffer.from([0xfe, 0xff]), encoding: 'utf-16be' },
  { mark: Buffer.from([0xff, 0xfe]), encoding: 'utf-16le' },
] as const;

/**
 * A body as text, as the WHATWG Encoding standard's decode reads it: a byte-order mark (UTF-8, UTF-16LE or
 * UTF-16BE) names the encoding whatever the page declares, and is not part of the text — a UTF-8 page with
 * a BOM served as `charset=ISO-8859-1` (an old Apache default) is UTF-8 to a browser. Without one, the
 * charset it declares: its Content-Type's, else — for a web page — its own `<meta charset>` within its first
 * 1024 bytes (as browsers read it); UTF-8 otherwise, or for a charset the Encoding standard does not know.
 * Read as UTF-8 whatever it says, a page in windows-1251 or ISO-8859-1 never carries a site's non-ASCII
 * not-found message.
 */
function decodeBody(bytes: Buffer, headers: Headers): string {
  // The decoder of the mark's encoding takes the mark off (its ignoreBOM is false).
  const marked = BYTE_ORDER_MARKS.find(({ mark }) => bytes.subarray(0, mark.length).equals(mark));
  if (marked) return new TextDecoder(marked.encoding).decode(bytes);
  const type = headers.get('content-type');
  let decoder = decoderFor(type?.match(HEADER_CHARSET)?.[1]);
  if (!decoder && (type === null || /html/i.test(type))) {
    decoder = decoderFor(bytes.subarray(0, 1024).toString('latin1').match(META_CHARSET)?.[1]);
    // A page cannot be UTF-16 by its own say: it was read as ASCII to find the tag (HTML's rule).
    if (decoder?.encoding.startsWith('utf-16')) decoder = null;
  }
  return (decoder ?? new TextDecoder('utf-8')).decode(bytes);
}

function decoderFor(label: string | undefined): TextDecoder | null {
  if (label === undefined) return null;
  try {
    return new TextDecoder(label);
  } catch {
    return null; // a label the Encoding standard does not know
  }
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  UND_ERR_SOCKET: 'connection reset',
  ENOTFOUND: 'host not found',
  UND_ERR_HEADERS_TIMEOUT: 'the upstream stopped answering',
  UND_ERR_BODY_TIMEOUT: 'the upstream stopped answering',
};

function networkReason(error: unknown): string {
  const code = causeCode(error);
  if (code === undefined) return 'network error';
  return NETWORK_REASONS[code] ?? `network error (${code})`;
}

/** The code of what made fetch fail (its `cause`: a connection's error, undici's own). */
function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}
