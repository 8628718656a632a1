import { hostname } from 'node:os';
import { parseEmail } from '@dossier/domain';
import type { EmailInput } from '@dossier/contracts';
import { addressFacts, checkedEmailItem } from '../email-checks';
import { hasValidSyntax } from '../email-item';
import { DNS_SERVERS_KEY, MailDns, dnsServersOf, resolversReach } from '../mail-host';
import { ProviderError, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';
import { probeMailbox, type ProbeOptions } from './mailbox-probe';

const ID = 'smtp';

/**
 * `SMTP_PROBE`'s companions as the probe's options; throws naming the variable when one is wrong. The
 * identity defaults to this host's name (`host`).
 */
export function probeOptionsOf(
  settings: Readonly<Record<string, string | undefined>>,
  host: string = hostname(),
): ProbeOptions {
  const port = integer(settings['SMTP_PROBE_PORT'], 25);
  if (!(port >= 1 && port <= 65535))
    throw new Error(`SMTP_PROBE_PORT must be a port number, got "${settings['SMTP_PROBE_PORT']}"`);
  const timeoutMs = integer(settings['SMTP_TIMEOUT_MS'], 10_000);
  if (!(timeoutMs >= 100 && timeoutMs <= 120_000))
    throw new Error(`SMTP_TIMEOUT_MS must be 100 to 120000 (ms), got "${settings['SMTP_TIMEOUT_MS']}"`);
  const heloName = settings['SMTP_HELO_NAME'] ?? host;
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(heloName))
    throw new Error(`SMTP_HELO_NAME must be a host name, got "${heloName}"`);
  // Mail servers want a fully qualified name in EHLO and a sender address at a real domain.
  if (settings['SMTP_HELO_NAME'] === undefined && !heloName.includes('.'))
    throw new Error(`SMTP_HELO_NAME must be set: this host's name "${heloName}" is not a fully qualified domain name`);
  const mailFrom = settings['SMTP_MAIL_FROM'] ?? `verify@${heloName}`;
  const from = parseEmail(mailFrom);
  if (!from.syntaxValid || /[^\x00-\x7f]/.test(from.normalized))
    throw new Error(`SMTP_MAIL_FROM must be a plain ASCII e-mail address, got "${mailFrom}"`);
  const allowPrivate = settings['SMTP_PROBE_ALLOW_PRIVATE'];
  if (allowPrivate !== undefined && allowPrivate !== 'true' && allowPrivate !== 'false')
    throw new Error(`SMTP_PROBE_ALLOW_PRIVATE must be true or false, got "${allowPrivate}"`);
  return { port, timeoutMs, heloName, mailFrom: from.normalized, allowPrivate: allowPrivate === 'true' };
}

function integer(value: string | undefined, fallback: number): number {
  return value === undefined ? fallback : /^\d+$/.test(value.trim()) ? Number(value) : NaN;
}

/**
 * The mailbox probe: asks the address's own mail server, over SMTP, whether it would take mail for it
 * (see `probeMailbox`: never `DATA`, so no mail is sent), and whether it takes mail for any address
 * (catch-all). Opt-in (`SMTP_PROBE=true`): it needs outbound port 25, which most clouds and home ISPs block,
 * and a sender identity with a good reputation (`SMTP_HELO_NAME`, `SMTP_MAIL_FROM`).
 *
 * `found` when the server said yes (deliverable, or risky: catch-all, full mailbox) or no (undeliverable);
 * `unknown`, with the reason, when it could not tell (greylisting, a policy refusal, a refused port, a mail
 * host with only loopback, private, link-local or metadata addresses unless `SMTP_PROBE_ALLOW_PRIVATE=true`,
 * DNS that could not answer); `timeout`, with the reason and the item (deliverability `unknown`), when a
 * mail server left it without an answer past its deadline (a server that takes the connection and never
 * answers, a connection never answered: a port blocked by dropping); `not_found` when the domain has no
 * mail host to ask (the `email` provider says why). The lookup's own deadline is a `timeout` ProviderError.
 */
export const smtpProvider: Provider<'email'> = {
  id: ID,
  kinds: ['email'],
  configKeys: [
    'SMTP_PROBE',
    'SMTP_PROBE_PORT',
    'SMTP_HELO_NAME',
    'SMTP_MAIL_FROM',
    'SMTP_TIMEOUT_MS',
    'SMTP_PROBE_ALLOW_PRIVATE',
    DNS_SERVERS_KEY,
  ],
  // Five connections at most, two of them whole sessions of SMTP_TIMEOUT_MS (probeMailbox's bounds: 29 s at the
  // defaults); never past the caller's wait either.
  defaultTimeoutMs: 30_000,
  transport: 'smtp',
  // Its upstream is each address's own domain: one that does not answer says nothing about the next.
  breaker: false,
  // The most direct check there is: the mailbox's own server. Its verdict takes the list facts into account.
  precedence: 20,
  // At boot: SMTP_PROBE itself, and — when the probe is on — its identity, port, budget, address rule and resolvers.
  validateSettings(settings) {
    const probe = settings['SMTP_PROBE'];
    if (probe !== undefined && probe !== 'true' && probe !== 'false')
      throw new Error(`SMTP_PROBE must be true or false, got "${probe}"`);
    if (probe !== 'true') return;
    probeOptionsOf(settings);
    dnsServersOf(settings);
  },
  isConfigured: (settings) => settings['SMTP_PROBE'] === 'true' || 'off: the mailbox probe is opt-in (SMTP_PROBE=true)',
  checkReach: resolversReach,
  appliesTo: hasValidSyntax,

  async lookup(_kind, input: EmailInput, ctx: ProviderContext): Promise<ProviderAnswer<'email'>> {
    if (ctx.signal.aborted) throw new ProviderError('timeout', `${ID}: the lookup deadline passed`);
    const options = probeOptionsOf(ctx.settings); // checked at boot (validateSettings)
    const parsed = parseEmail(input.email);
    if (!parsed.syntaxValid || parsed.domain === null) return { outcome: 'not_found', items: [] };
    const dns = new MailDns(ctx.signal, { servers: dnsServersOf(ctx.settings) });
    const facts = addressFacts(parsed);
    const route = await dns.route(parsed.domain, { knownMailProvider: facts.free_provider });
    if (route.kind === 'dns-failure') {
      return {
        outcome: 'unknown',
        items: [checkedEmailItem(input.email, ID, { parsed, facts, route })],
        detail: route.detail,
      };
    }
    if (!('hosts' in route)) return { outcome: 'not_found', items: [] };
    const probe = await probeMailbox(route.hosts, dns, parsed, options, ctx.signal);
    const item = checkedEmailItem(input.email, ID, { parsed, facts, route, probe });
    if (probe.result === 'inconclusive')
      return { outcome: probe.timedOut ? 'timeout' : 'unknown', items: [item], detail: probe.reason };
    return { outcome: 'found', items: [item] };
  },
};
