import { Resolver } from 'node:dns/promises';

/**
 * The canary: a name that exists as long as DNS does — `com.`, the largest top-level domain, delegated from
 * the root since 1985 — asked for its NS records. Written absolute (the trailing dot), so that no search
 * domain of resolv.conf is tried first. A resolver that answers it NXDOMAIN makes names up; any answer but
 * NXDOMAIN (its records, or none of the type) shows it knows the public tree. Not the root (`.`): a split
 * horizon with an internal root answers the root and NXDOMAINs every public name.
 */
export const RESOLVER_CANARY = 'com.';

/** Whether a resolver's NXDOMAIN can be believed; when not, why (for a source's `detail`). */
export type ResolverSanity = { trusted: true } | { trusted: false; detail: string };

/** How long a resolver set's verdict is kept: a captive portal left behind is believed again within a minute. */
export const SANITY_TTL_MS = 60_000;

/** What the canary query needs: its timeouts as MailDns's (1 s, 2 tries: given up on after ~3 s). */
const CANARY_TIMEOUT_MS = 1000;
const CANARY_TRIES = 2;

/** `host:port` resolvers, or null for the system's (those of /etc/resolv.conf, as getaddrinfo asks them). */
export type ResolverSet = readonly string[] | null;

/**
 * The sanity verdict of each resolver set, kept SANITY_TTL_MS: asked only after an NXDOMAIN, so a lookup
 * costs at most one extra query, and only the first of a minute's lookups pays it; those asking while it
 * runs share it.
 */
export class ResolverSanityCache {
  private readonly verdicts = new Map<string, { until: number; verdict: Promise<ResolverSanity> }>();

  constructor(
    private readonly ttlMs = SANITY_TTL_MS,
    private readonly ask: (servers: ResolverSet) => Promise<ResolverSanity> = askCanary,
    private readonly now: () => number = Date.now,
  ) {}

  /** The verdict on `servers`; never rejects (a canary that cannot be asked is a verdict too). */
  of(servers: ResolverSet): Promise<ResolverSanity> {
    const key = servers?.join(',') ?? 'system';
    const kept = this.verdicts.get(key);
    if (kept && kept.until > this.now()) return kept.verdict;
    const verdict = this.ask(servers);
    this.verdicts.set(key, { until: this.now() + this.ttlMs, verdict });
    return verdict;
  }
}

/** The process's verdicts, shared by every provider that resolves names. */
export const resolverSanity = new ResolverSanityCache();

/** Asks `servers` for the canary once: NXDOMAIN (or no answer at all) is a resolver whose NXDOMAIN is not believed. */
async function askCanary(servers: ResolverSet): Promise<ResolverSanity> {
  const resolver = new Resolver({ timeout: CANARY_TIMEOUT_MS, tries: CANARY_TRIES });
  if (servers) resolver.setServers(servers);
  try {
    await resolver.resolveNs(RESOLVER_CANARY);
    return { trusted: true };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code === 'ENODATA') return { trusted: true };
    if (code === 'ENOTFOUND') {
      return {
        trusted: false,
        detail: `it answers NXDOMAIN for com, a top-level domain that always exists: this resolver cannot be trusted`,
      };
    }
    return {
      trusted: false,
      detail: `asked for com, a top-level domain that always exists, ${dnsFailure(code)}: this resolver cannot be trusted`,
    };
  }
}

const DNS_ERRORS: Record<string, string> = {
  ESERVFAIL: 'the DNS server failed (SERVFAIL)',
  ETIMEOUT: 'no answer from the DNS server (timeout)',
  EREFUSED: 'the DNS server refused the query (REFUSED)',
  ECONNREFUSED: 'no DNS server answers at the configured address (connection refused)',
  EFORMERR: 'the DNS server did not understand the query (FORMERR)',
  EBADRESP: 'the DNS server sent a malformed answer',
  ENOTIMP: 'the DNS server does not implement the query (NOTIMP)',
};

/** A failed query's error code (c-ares's, from `node:dns`) in words. */
export function dnsFailure(code: string): string {
  return DNS_ERRORS[code] ?? `the DNS query failed (${code || 'unknown error'})`;
}
