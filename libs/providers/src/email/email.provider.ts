import { parseEmail } from '@dossier/domain';
import type { EmailInput } from '@dossier/contracts';
import { addressFacts, checkedEmailItem } from '../email-checks';
import { DNS_SERVERS_KEY, MailDns, dnsServersOf, resolversReach } from '../mail-host';
import { ProviderError, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';

const ID = 'email';

/**
 * What can be said about an address without asking its mailbox: syntax as mail systems read it
 * (RFC 5321/5322, IDN domains in punycode), the lists (disposable, free provider, role, a likely typo),
 * and where DNS sends its mail (MX through `DNS_SERVERS`, the A/AAAA fallback, a null MX). Always on.
 *
 * `found` once it could judge — a malformed address and a domain without mail host included (both are
 * `undeliverable`); `unknown` when DNS could not answer (SERVFAIL, timeout, refused), or answered NXDOMAIN
 * and cannot be believed (a known mail provider's domain, or resolvers that NXDOMAIN a name that must
 * exist: `MailDns.route`): the item still carries the list facts, and says `unknown` rather than guess
 * `undeliverable`.
 */
export const emailProvider: Provider<'email'> = {
  id: ID,
  kinds: ['email'],
  configKeys: [DNS_SERVERS_KEY],
  defaultTimeoutMs: 8000,
  transport: 'dns',
  // Its upstream is each address's own domain: one that does not answer says nothing about the next.
  breaker: false,
  // It makes the one item every e-mail lookup answers (API.md): not cut at the caller's wait, which left
  // `results: []` behind a slow name server; DNS that does not answer is its own `unknown` in time
  // (MailDns's timeouts), and a slow one makes the answer a 202.
  deadline: 'own',
  // First-hand checks; only the mailbox probe (`smtp`) is more direct. A vendor's opinion ranks below both.
  precedence: 10,
  // At boot: a DNS_SERVERS that is not a list of addresses stops the worker, naming it.
  validateSettings(settings) {
    dnsServersOf(settings);
  },
  isConfigured: () => true,
  checkReach: resolversReach,

  async lookup(_kind, input: EmailInput, ctx: ProviderContext): Promise<ProviderAnswer<'email'>> {
    if (ctx.signal.aborted) throw new ProviderError('timeout', `${ID}: the lookup deadline passed`);
    const parsed = parseEmail(input.email);
    const facts = addressFacts(parsed);
    if (!parsed.syntaxValid || parsed.domain === null) {
      return { outcome: 'found', items: [checkedEmailItem(input.email, ID, { parsed, facts })] };
    }
    const dns = new MailDns(ctx.signal, { servers: dnsServersOf(ctx.settings) });
    const route = await dns.route(parsed.domain, { knownMailProvider: facts.free_provider });
    const item = checkedEmailItem(input.email, ID, { parsed, facts, route });
    if (route.kind === 'dns-failure') return { outcome: 'unknown', items: [item], detail: route.detail };
    return { outcome: 'found', items: [item] };
  },
};
