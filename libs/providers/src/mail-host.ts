import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { untilAborted } from '@dossier/domain';
import { ProviderError } from './provider';
import { RESOLVER_CANARY, dnsFailure, resolverSanity, type ResolverSanityCache } from './resolver-sanity';

/** One host that takes mail for a domain, with its MX preference (lower is tried first). */
export interface MailHost {
  host: string;
  preference: number;
}

/**
 * Where DNS says a domain's mail goes (RFC 5321 §5.1, RFC 7505):
 *
 * - `mx`: its MX hosts, by preference;
 * - `implicit`: no MX records, but the domain has an A or AAAA record: it is its own mail host;
 * - `null-mx`: a null MX (`0 .`): the domain says it accepts no mail;
 * - `no-domain`: NXDOMAIN from a resolver that can be believed (see `MailDns.route`): the domain does not exist;
 * - `no-mail-host`: neither MX nor A/AAAA records;
 * - `dns-failure`: the resolver could not tell (SERVFAIL, timeout, refused), or it said NXDOMAIN and cannot be
 *   believed: nothing is known.
 */
export type MailRoute =
  | { kind: 'mx' | 'implicit'; hosts: MailHost[] }
  | { kind: 'null-mx' | 'no-domain' | 'no-mail-host' }
  | { kind: 'dns-failure'; detail: string };

/** The addresses of a mail host, or why they are not known. */
export type HostAddresses = { addresses: string[] } | { failure: string };

export interface MailDnsOptions {
  /** `host:port` resolvers (`DNS_SERVERS`); null: the system's. */
  servers: readonly string[] | null;
  /**
   * Per query: the first try's timeout and the tries per resolver (c-ares waits longer on each retry).
   * Default 1000 ms and 2 tries: a resolver that never answers is given up on after ~4 s, as `dns-failure`.
   */
  timeoutMs?: number;
  tries?: number;
  /** Where the resolvers' sanity verdicts are kept (default: the process's). */
  sanity?: ResolverSanityCache;
}

/** The setting both e-mail network providers read their resolvers from. */
export const DNS_SERVERS_KEY = 'DNS_SERVERS';

/**
 * `DNS_SERVERS` (`host:port,…`; a bare address means port 53; IPv6 with a port as `[::1]:53`) as a resolver
 * list, or null when unset (the system's resolvers). Throws naming the setting when an entry is not one.
 */
export function dnsServersOf(settings: Readonly<Record<string, string | undefined>>): string[] | null {
  const value = settings[DNS_SERVERS_KEY]?.trim();
  if (!value) return null;
  return value.split(',').map((entry) => {
    const server = entry.trim();
    if (isIP(server)) return server;
    const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(server) ?? /^([^:]+):(\d{1,5})$/.exec(server);
    const port = Number(m?.[2]);
    if (!m || !isIP(m[1]!) || port < 1 || port > 65535) {
      throw new Error(`${DNS_SERVERS_KEY}: expected IP addresses as host:port,…, got "${server}"`);
    }
    return server;
  });
}

/**
 * The `checkReach` of the providers that resolve through `DNS_SERVERS`: whether those resolvers answer as
 * sane ones do (the canary, `resolverSanity`).
 */
export async function resolversReach(
  settings: Readonly<Record<string, string | undefined>>,
  signal: AbortSignal,
): Promise<true | string> {
  const servers = dnsServersOf(settings);
  const sanity = await untilAborted(resolverSanity.of(servers), signal);
  return sanity.trusted || `DNS (${servers?.join(', ') ?? "the system's resolvers"}): ${sanity.detail}`;
}

/** `ENOTFOUND`: NXDOMAIN. `ENODATA`: the name exists, with no records of that type. */
type Lookup<T> = { ok: T } | { code: 'ENOTFOUND' | 'ENODATA' } | { failure: string };

/**
 * DNS for mail, shared by the `email` and `smtp` providers: a domain's mail hosts and a host's addresses,
 * through the configured resolvers (`DNS_SERVERS`), never the system's `getaddrinfo`. One instance per
 * lookup: the signal cancels its queries (`ProviderError` `timeout`).
 */
export class MailDns {
  private readonly resolver: Resolver;

  constructor(
    private readonly signal: AbortSignal,
    private readonly options: MailDnsOptions,
  ) {
    this.resolver = new Resolver({ timeout: options.timeoutMs ?? 1000, tries: options.tries ?? 2 });
    if (options.servers) this.resolver.setServers(options.servers);
  }

  /**
   * Where mail for `domain` (ASCII, lower-case) goes. `knownMailProvider`: the domain is on the lists of mail
   * providers (`addressFacts`' `free_provider`), so it exists.
   */
  async route(domain: string, { knownMailProvider = false }: { knownMailProvider?: boolean } = {}): Promise<MailRoute> {
    const mx = await this.query(domain, 'MX', (name) => this.resolver.resolveMx(name));
    if ('failure' in mx) return { kind: 'dns-failure', detail: `MX of ${domain}: ${mx.failure}` };
    if ('code' in mx && mx.code === 'ENOTFOUND') return this.nxdomain(domain, knownMailProvider);
    const records = 'ok' in mx ? mx.ok : [];
    if (records.length > 0) {
      // RFC 7505: a null MX is one record whose exchange is the root; mixed with real ones it is a slip, ignored.
      const real = records.filter((r) => hostName(r.exchange) !== '');
      if (real.length === 0) return { kind: 'null-mx' };
      return {
        kind: 'mx',
        hosts: byPreference(real.map((r) => ({ host: hostName(r.exchange), preference: r.priority }))),
      };
    }
    // No MX records: RFC 5321 §5.1 treats the domain itself as the mail host, if it has an address.
    const own = await this.addresses(domain);
    if ('failure' in own) return { kind: 'dns-failure', detail: own.failure };
    return own.addresses.length > 0
      ? { kind: 'implicit', hosts: [{ host: domain, preference: 0 }] }
      : { kind: 'no-mail-host' };
  }

  /** The IPv4, then IPv6 addresses of a host (an address literal is its own). */
  async addresses(host: string): Promise<HostAddresses> {
    if (isIP(host)) return { addresses: [host] };
    const [v4, v6] = await Promise.all([
      this.query(host, 'A', (name) => this.resolver.resolve4(name)),
      this.query(host, 'AAAA', (name) => this.resolver.resolve6(name)),
    ]);
    const addresses = [v4, v6].flatMap((r) => ('ok' in r ? r.ok : []));
    if (addresses.length > 0) return { addresses };
    const failed = [v4, v6].find((r) => 'failure' in r);
    return failed && 'failure' in failed ? { failure: `addresses of ${host}: ${failed.failure}` } : { addresses: [] };
  }

  /**
   * An NXDOMAIN for `domain`, believed only from a sane resolver: resolvers behind captive portals, broken
   * corporate DNS and sandboxes answer NXDOMAIN for every name. Not for a known mail provider's domain, nor
   * from resolvers that answer NXDOMAIN for the canary (`resolverSanity`): then nothing is known.
   */
  private async nxdomain(domain: string, knownMailProvider: boolean): Promise<MailRoute> {
    const says = `the resolver answers NXDOMAIN for ${domain}`;
    if (knownMailProvider) {
      return {
        kind: 'dns-failure',
        detail: `${says}, a known mail provider's domain: this resolver cannot be trusted`,
      };
    }
    const sanity = await untilAborted(
      (this.options.sanity ?? resolverSanity).of(this.options.servers),
      this.signal,
      () => this.deadlinePassed('NS', RESOLVER_CANARY),
    );
    return sanity.trusted ? { kind: 'no-domain' } : { kind: 'dns-failure', detail: `${says}, and ${sanity.detail}` };
  }

  private async query<T>(name: string, type: string, run: (name: string) => Promise<T>): Promise<Lookup<T>> {
    if (this.signal.aborted) throw this.deadlinePassed(type, name);
    const cancel = (): void => this.resolver.cancel();
    this.signal.addEventListener('abort', cancel, { once: true });
    try {
      return { ok: await run(name) };
    } catch (error) {
      if (this.signal.aborted) throw this.deadlinePassed(type, name, error);
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (code === 'ENOTFOUND' || code === 'ENODATA') return { code };
      return { failure: dnsFailure(code) };
    } finally {
      this.signal.removeEventListener('abort', cancel);
    }
  }

  private deadlinePassed(type: string, name: string, cause?: unknown): ProviderError {
    return new ProviderError('timeout', `DNS ${type} of ${name}: no answer before the deadline`, undefined, { cause });
  }
}

/** `MX.Example.com.` → `mx.example.com`; the root (`.` or empty) → ``. */
function hostName(exchange: string): string {
  return exchange.replace(/\.$/, '').toLowerCase();
}

/** Lowest preference first; equal preferences in name order (RFC 5321 asks for a random order: a stable one tests better). */
function byPreference(hosts: MailHost[]): MailHost[] {
  const unique = new Map<string, MailHost>();
  for (const h of hosts) {
    const seen = unique.get(h.host);
    if (!seen || h.preference < seen.preference) unique.set(h.host, h);
  }
  return [...unique.values()].sort((a, b) => a.preference - b.preference || a.host.localeCompare(b.host));
}
