import { isIP } from 'node:net';
import { isRefusedAddress, systemResolve, type ResolveHost } from '@dossier/contracts';
import { Agent } from 'undici';
import {
  CHALLENGE_HEAD_BYTES,
  connectLookup,
  looksLikeChallenge,
  MAX_BODY_BYTES,
  rateLimited,
  redirected,
  retryAfterMs,
  redirectOf,
  request,
  upstreamConnector,
  type BodyAllowance,
  type UpstreamRequest,
  without,
} from '../http';
import { ProviderError } from '../provider';
import type { Site } from './site-list';

/**
 * One site's check for one username: the request its definition asks for, the exchange (redirects
 * followed by hand, so that each hop can be judged), and the decision. The decision is stricter than
 * Sherlock's: a profile is `found` only when the site answered 2xx on the profile's own page with none
 * of the site's not-found signs, and no challenge, captcha or login page — false positives from WAF
 * and rate-limit pages are what users of such tools complain about most.
 */

/** The report id of a site: `site:<Name>`. */
export const siteId = (site: Pick<Site, 'name'>): string => `site:${site.name}`;

/** Sent unless the site's definition says otherwise: a browser's (as Sherlock does), since many sites wall bots. */
const DEFAULT_HEADERS: Record<string, string> = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:129.0) Gecko/20100101 Firefox/129.0',
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'accept-language': 'en-US,en;q=0.9',
};
const MAX_REDIRECTS = 5;

/**
 * How much of a site's page is read: a site whose rule is a message or a sign of a profile, up to MAX_BODY_BYTES
 * (either may stand anywhere); any other, only the beginning the challenge and sign-in checks read (CHALLENGE_HEAD_BYTES):
 * its status or its redirect is its answer, and nothing further in the page is looked at.
 */
export function pageBytesOf(site: Pick<Site, 'errorTypes' | 'presenceStrs'>): number {
  return site.errorTypes.includes('message') || site.presenceStrs.length > 0 ? MAX_BODY_BYTES : CHALLENGE_HEAD_BYTES;
}

/** The page bytes the process's username checks may hold at once, every lookup's together (PageBudget). */
export const PAGE_BUDGET_BYTES = 64 * 1024 * 1024;

/** One check's share of a PageBudget: what it reads counts until it is released. */
export interface PageClaim extends BodyAllowance {
  /** The budget granted less than was asked: a page was cut short by it, not by its own size. */
  readonly short: boolean;
  release(): void;
}

/**
 * The page bytes the username checks in flight hold, every lookup's together: up to USERNAME_MAX_CONNECTIONS
 * checks at once, each page up to MAX_BODY_BYTES (plus its decoded copy), would otherwise be gigabytes in
 * one worker under a burst of large or hostile pages. A check reads a page only as far as the budget
 * grants; the rest is not read (and the check says so, never `found` on a page it could not read).
 */
export class PageBudget {
  private inUse = 0;
  /** The most held at once: what tests measure. */
  peak = 0;

  constructor(readonly size: number) {}

  /** The bytes held now. */
  get held(): number {
    return this.inUse;
  }

  claim(): PageClaim {
    let mine = 0;
    let short = false;
    let released = false;
    return {
      take: (bytes) => {
        if (released) return 0;
        const granted = Math.max(0, Math.min(bytes, this.size - this.inUse));
        if (granted < bytes) short = true;
        mine += granted;
        this.inUse += granted;
        this.peak = Math.max(this.peak, this.inUse);
        return granted;
      },
      get short() {
        return short;
      },
      release: () => {
        if (released) return;
        released = true;
        this.inUse -= mine;
      },
    };
  }
}

/** Where a username goes into an address: encoded, so that it cannot change the path or the host. */
function interpolateUrl(template: string, username: string): string {
  return template.replaceAll('{}', encodeURIComponent(username));
}

/** Where it goes into a request body: as is (the body is JSON). */
function interpolateValue(value: unknown, username: string): unknown {
  if (typeof value === 'string') return value.replaceAll('{}', username);
  if (Array.isArray(value)) return value.map((v) => interpolateValue(v, username));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateValue(v, username)]));
  return value;
}

/** `text` as an http(s) address (relative to `base` when given), or null. */
function httpUrl(text: string, base?: string): URL | null {
  try {
    const url = new URL(text, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

/** An address that puts the username into its host name (`https://{}.tumblr.com/`). */
const NAME_IN_HOST = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*\{\}/i;
/** One label of a host name (RFC 1123): letters, digits and inner hyphens, 63 at most. */
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/**
 * Host names a site keeps for its own services (`www`, `mail`, `api`, `help`, …), never a member's: at
 * `help.tumblr.com` the site's help centre answers 200, and a status or message rule would read it as a
 * profile. Sites reserve such names at sign-up; this is the common core of those lists (mail and name
 * servers, APIs and CDNs, the site's blog, help, status and admin pages, its mobile and app front ends).
 */
const RESERVED_HOST_LABELS: ReadonlySet<string> = new Set([
  ...['www', 'www1', 'www2', 'web', 'm', 'mobile', 'app', 'apps'],
  ...['mail', 'email', 'webmail', 'smtp', 'imap', 'pop', 'pop3', 'mx', 'ns', 'ns1', 'ns2', 'dns', 'ftp', 'vpn'],
  ...['api', 'cdn', 'static', 'assets', 'img', 'images', 'media', 'files', 'upload', 'uploads', 'download'],
  ...['admin', 'login', 'auth', 'sso', 'account', 'accounts', 'secure', 'dashboard', 'billing'],
  ...['blog', 'help', 'support', 'status', 'docs', 'developer', 'developers', 'news', 'forum', 'shop', 'store'],
  ...['dev', 'test', 'staging', 'beta', 'demo', 'localhost'],
]);

/**
 * Whether `username` can stand in a site's host name: as one label — with a dot it would ask another
 * host level (`a.b.tumblr.com`) — and not one the site keeps for itself (RESERVED_HOST_LABELS).
 */
function fitsHostName(username: string): boolean {
  return HOST_LABEL.test(username) && !RESERVED_HOST_LABELS.has(username.toLowerCase());
}

/**
 * The request that checks `username` on `site`, or null where the site cannot have it: its `regexCheck`
 * refuses it, it is `.` or `..`, the site puts it into its host name and it is not one label there (or
 * is one the site keeps for its own services: `www`, `mail`, `api`, …), or it does not make a valid address there.
 */
export function probeRequest(site: Site, username: string): UpstreamRequest | null {
  if (site.regexCheck && !site.regexCheck.test(username)) return null;
  // `.` and `..` stay as they are when encoded and are then path steps: /u/.. would ask for the site's home page.
  if (username === '.' || username === '..') return null;
  const inHost = [site.url, site.urlProbe].some((template) => template !== null && NAME_IN_HOST.test(template));
  if (inHost && !fitsHostName(username)) return null;
  const url = httpUrl(interpolateUrl(site.urlProbe ?? site.url, username));
  if (!url || !httpUrl(interpolateUrl(site.url, username))) return null;
  const headers = new Headers(DEFAULT_HEADERS);
  for (const [name, value] of Object.entries(site.headers)) headers.set(name, value);
  // Each site is asked once per lookup: a connection kept open after its answer would only stand idle
  // outside USERNAME_MAX_CONNECTIONS (hundreds of sites, each its own host, a few seconds each).
  headers.set('connection', 'close');
  let body: string | undefined;
  if (site.payload) {
    body = JSON.stringify(interpolateValue(site.payload, username));
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  }
  return {
    url: url.toString(),
    method: site.method,
    headers: Object.fromEntries(headers),
    body,
    maxBodyBytes: pageBytesOf(site),
  };
}

/** The profile's address as reported in `accounts[].url`. */
export function profileUrl(site: Site, username: string): string {
  return interpolateUrl(site.url, username);
}

/** What the site answered: the last response, and every address it redirected to on the way. */
export interface SiteExchange {
  /** The address asked. */
  requested: string;
  /** Redirect targets followed (absolute), in order; the last one is `url`. */
  redirects: string[];
  /** The address of the final answer. */
  url: string;
  status: number;
  headers: Headers;
  text: string;
  /** The page went on past what is read (pageBytesOf the site, or what the PageBudget granted): `text` is its beginning. */
  truncated: boolean;
  /** The process's PageBudget granted less than the page: it was cut short by the budget, not by its own size. */
  cutShort?: boolean;
  /** The last redirect was not followed: it left the site's host for a private address (`url`). */
  privateRedirect?: boolean;
}

/**
 * Asks the site, following up to five redirects (REDIRECT_STATUSES with a Location, as fetch: redirectOf) by hand. It stops at a redirect to the site's error page
 * or to a login page (the answer is known from the address alone: nothing more is fetched), and at one to
 * another host at a loopback, private, link-local or metadata address (`privateRedirect`): refused by the
 * connection's own lookup (`resolve`, the system's by default), so the address judged is the one connected to.
 */
export async function exchange(
  site: Site,
  username: string,
  req: UpstreamRequest,
  signal: AbortSignal,
  resolve: ResolveHost = systemResolve,
): Promise<SiteExchange> {
  const id = siteId(site);
  const redirects: string[] = [];
  let current = req;
  /** The redirect being followed, when it leaves the site's host by name: its answer, and its guarded connection. */
  let hop: { from: SiteExchange; guard: GuardedDispatcher } | null = null;
  for (;;) {
    let res;
    try {
      res = await request(id, { ...current, redirect: 'manual', dispatcher: hop?.guard.dispatcher }, signal);
    } catch (error) {
      if (hop?.guard.refused()) return { ...hop.from, url: current.url, privateRedirect: true };
      throw error;
    } finally {
      void hop?.guard.dispatcher.destroy();
    }
    const answer = { ...res, requested: req.url, redirects, url: current.url };
    const next = redirectOf(id, res, current.url);
    if (next === null) return answer;
    redirects.push(next.toString());
    if (isErrorPage(site, username, next.toString()) || isLoginRedirect(next.toString(), req.url))
      return { ...answer, url: next.toString() };
    const way = redirectWay(next, new URL(req.url));
    if (way === 'refused') return { ...answer, url: next.toString(), privateRedirect: true };
    if (redirects.length > MAX_REDIRECTS)
      throw new ProviderError('malformed', `${id}: more than ${MAX_REDIRECTS} redirects`);
    // The site's credentials are for its own origin: a browser sends neither its Authorization nor its cookies elsewhere.
    const headers =
      next.origin === new URL(current.url).origin ? current.headers : without(current.headers, CREDENTIAL_HEADERS);
    hop = way === 'guarded' ? { from: answer, guard: guardedDispatcher(resolve) } : null;
    // As a browser: a POST's 301 or 302, and a 303 of anything but GET or HEAD, go on as a GET without the body.
    current = redirected({ ...current, headers }, res.status, next);
  }
}

const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'cookie', 'proxy-authorization']);

/**
 * How a redirect target may be connected to. Followed to a loopback, private, link-local or metadata
 * address (`isRefusedAddress`, as for webhooks), a site — or a profile on it that sends visitors elsewhere
 * — would point the worker's requests into its own network (SSRF) and read the answer's status back as the
 * verdict. The site's own host is the operator's choice, and where it redirects on that host with it
 * (`open`). Another host given as an address is judged now (`refused`); one given as a name is asked through
 * a dispatcher whose connections refuse such an address when they resolve it: judged apart, before the
 * request, a name could answer a public address to the check and 127.0.0.1 to the connection (DNS rebinding).
 */
function redirectWay(target: URL, site: URL): 'open' | 'refused' | 'guarded' {
  if (target.hostname === site.hostname) return 'open';
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host)) return isRefusedAddress(host) ? 'refused' : 'open';
  return 'guarded';
}

interface GuardedDispatcher {
  dispatcher: Agent;
  /** Whether a connection's lookup refused the address the name resolved to. */
  refused(): boolean;
}

/**
 * A dispatcher for one request to a redirected host, whose connections resolve the name once, through
 * `resolve`, and fail when any address it resolves to is refused (`isRefusedAddress`); else connect to
 * those of the family asked. The request's error may reach the caller as another realm's, or as text
 * only (fetch wraps what it does not know as an Error), so the refusal is told apart by `refused()`. Its
 * connections have the upstream connect timeout (`upstreamConnector`), as every upstream call's.
 */
function guardedDispatcher(resolve: ResolveHost): GuardedDispatcher {
  let refused = false;
  const lookup = connectLookup(resolve, (hostname, found) => {
    if (!found.some((a) => isRefusedAddress(a.address))) return null;
    refused = true;
    return new Error(`${hostname} resolves to a loopback, private, link-local or metadata address`);
  });
  return { dispatcher: new Agent({ connect: upstreamConnector(lookup) }), refused: () => refused };
}

/**
 * An address without what does not tell pages apart: scheme, `www.`, case, a trailing slash, escapes.
 * An address written without a scheme (as a few errorUrls are) is read as https.
 */
function pageKey(address: string): string {
  const u = httpUrl(/^[a-z][a-z0-9+.-]*:/i.test(address) ? address : `https://${address}`);
  if (!u) return address.toLowerCase();
  return `${u.hostname.replace(/^www\./, '')}${unescape(u.pathname.replace(/\/+$/, ''))}${unescape(u.search)}`.toLowerCase();
}

function unescape(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // a malformed escape: compared as it is
  }
}

/**
 * Whether a redirect goes to the site's own not-found page (`errorUrl`, the username put in): the same
 * page, or — for an errorUrl with a query, or written without a scheme — any address that starts with it.
 * An errorUrl that is the profile's own address (a few of Sherlock's entries) means "any redirect away
 * from the profile", as Sherlock reads every `response_url` site. A Maigret `response_url` site
 * (`redirectIsAbsence`) follows no redirect: any is its answer that there is no such profile.
 */
function isErrorPage(site: Site, username: string, target: string): boolean {
  if (site.redirectIsAbsence) return true;
  if (!site.errorTypes.includes('response_url') || site.errorUrl === null) return false;
  const key = pageKey(target);
  if (site.errorUrl === site.url) return key !== pageKey(profileUrl(site, username));
  const errorPage = pageKey(interpolateUrl(site.errorUrl, username));
  const byPrefix = site.errorUrl.includes('?') || !/^https?:/i.test(site.errorUrl);
  return key === errorPage || (byPrefix && key.startsWith(errorPage));
}

const LOGIN_PATH = /\/(log-?in|sign-?in|sign_in|auth|sso|sessions?|accounts?\/login)(\/|\.|$)/i;
const LOGIN_TITLE = /<title[^>]*>[^<]*\b(log ?in|sign ?in)\b[^<]*<\/title>/i;

/** A redirect to a sign-in page (not merely to the profile itself at another address). */
function isLoginRedirect(target: string, requested: string): boolean {
  const url = httpUrl(target);
  return url !== null && LOGIN_PATH.test(url.pathname) && pageKey(target) !== pageKey(requested);
}

export type SiteVerdict = { outcome: 'found' | 'not_found' } | { outcome: 'unknown'; detail: string };

/**
 * What the site's answer says about the username, in this order (the first that holds decides):
 *
 * 1. 429 → `rate_limited` (with Retry-After); a WAF, bot challenge or captcha page, whatever its status
 *    → `blocked`; a page with one of the site's own failure signs (Maigret's `errors`) → what the sign
 *    means (failureOf); 5xx → `error` (retried by the guards).
 * 2. The site's own not-found rule: a redirect to its `errorUrl` (`response_url`; any redirect for a
 *    Maigret one), a status in its `errorCode`, or a body carrying one of its `errorMsg` (`message`)
 *    → `not_found`. A redirect to another host at a private address, not followed → `unknown`.
 * 3. A login wall → `blocked`: a redirect to a login page, 401/407, or a page titled "Log in"/"Sign in";
 *    any other 403 → `blocked`, but on a site whose 403 is an answer (Maigret's ignore403): judged as a 2xx
 *    by a message rule, else `not_found`.
 * 4. 404 or 410 → `not_found` (whatever the site's rule).
 * 5. 2xx on the profile's own page (or the same page with another case, scheme or trailing slash)
 *    → `found`, if the site names signs of a profile (Maigret's presenseStrs) only with one of them
 *    (else `not_found`); a redirect elsewhere that the site's rule does not name → `unknown`, never
 *    `found`; so is a page cut off at MAX_BODY_BYTES on a site whose rule is a message or a sign (it may
 *    come later), and one cut short by the process's PageBudget (any check it skipped could have told otherwise).
 * 6. Anything else → `unknown` with the status.
 *
 * Throws a ProviderError for the failures (the guards count, retry and report them).
 */
export function decide(site: Site, username: string, ex: SiteExchange): SiteVerdict {
  const id = siteId(site);
  const status = ex.status;
  if (status === 429) throw rateLimited(id, ex.headers);
  if (looksLikeChallenge(ex.text, ex.headers, { page: true }))
    throw new ProviderError('blocked', `${id}: a bot challenge or captcha page (${status})`);
  const failure = site.failureSigns.find((sign) => ex.text.includes(sign.text));
  if (failure) throw failureOf(id, failure.meaning, ex.headers);
  if (status >= 500) throw new ProviderError('unavailable', `${id}: site error (${status})`);

  const target = ex.redirects.at(-1);
  if (target !== undefined && isErrorPage(site, username, target)) return { outcome: 'not_found' };
  if (site.errorTypes.includes('status_code') && site.errorCodes.includes(status)) return { outcome: 'not_found' };
  if (site.errorTypes.includes('message') && site.errorMsgs.some((msg) => ex.text.includes(msg)))
    return { outcome: 'not_found' };
  if (ex.privateRedirect)
    return {
      outcome: 'unknown',
      detail: `${id}: redirected to another host at a loopback, private, link-local or metadata address (not followed)`,
    };

  if (target !== undefined && isLoginRedirect(target, ex.requested))
    throw new ProviderError('blocked', `${id}: a login wall (redirected to a sign-in page)`);
  if (status === 401 || status === 407) throw new ProviderError('blocked', `${id}: a login wall (${status})`);
  if (status === 403 && !site.ignore403) throw new ProviderError('blocked', `${id}: forbidden (403)`);
  // Maigret's ignore403: a 403 is the site's answer — a page judged by its message rule, else a status that is not 2xx.
  if (status === 403 && !site.errorTypes.includes('message')) return { outcome: 'not_found' };
  if (status === 404 || status === 410) return { outcome: 'not_found' };

  if ((status >= 200 && status <= 299) || status === 403) {
    if (pageKey(ex.url) !== pageKey(ex.requested))
      return {
        outcome: 'unknown',
        detail: `${id}: redirected to another page, not the profile nor the site's not-found page`,
      };
    if (LOGIN_TITLE.test(ex.text.slice(0, CHALLENGE_HEAD_BYTES)))
      throw new ProviderError('blocked', `${id}: a login wall (a sign-in page in place of the profile)`);
    if (ex.cutShort)
      return {
        outcome: 'unknown',
        detail: `${id}: only part of the page read, the process's page budget being held by other checks`,
      };
    const signed = site.presenceStrs.length === 0 || site.presenceStrs.some((sign) => ex.text.includes(sign));
    if (ex.truncated && (site.errorTypes.includes('message') || !signed))
      return {
        outcome: 'unknown',
        detail: `${id}: a page over ${MAX_BODY_BYTES / 1024 / 1024} MiB, without the site's ${site.errorTypes.includes('message') ? 'not-found sign' : 'sign of a profile'} in the part read`,
      };
    return { outcome: signed ? 'found' : 'not_found' };
  }
  return { outcome: 'unknown', detail: `${id}: an answer the site's rules do not cover (${status})` };
}

/**
 * A failure sign's meaning (Maigret's words: "Rate limited", "Captcha detected", "Site error", …) as the
 * failure it is: a rate limit `rate_limited`, a site error or maintenance `unavailable` (retried), anything
 * else — captchas, bans, login walls, censorship — `blocked`.
 */
function failureOf(id: string, meaning: string, headers: Headers): ProviderError {
  const detail = `${id}: the site's own sign of a failure (${meaning})`;
  if (/rate.?limit|too many/i.test(meaning)) return new ProviderError('rate_limited', detail, retryAfterMs(headers));
  if (/error|maintenance|overload/i.test(meaning)) return new ProviderError('unavailable', detail);
  return new ProviderError('blocked', detail);
}
