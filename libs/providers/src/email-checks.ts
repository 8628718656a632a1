import { createRequire } from 'node:module';
import * as path from 'node:path';
import { POPULAR_DOMAINS, run as suggestDomain } from '@zootools/email-spell-checker';
import { distance } from 'fastest-levenshtein';
import type { Deliverability, ParsedEmail } from '@dossier/domain';
import type { EmailResultItem, EmailSubStatus } from '@dossier/contracts';
import { emailItem } from './email-item';
import type { MailRoute } from './mail-host';

// ---- what the published lists say about an address ---------------------------------------------------

/** The facts about an address that come from lists, not from the network. */
export interface AddressFacts {
  disposable: boolean;
  free_provider: boolean;
  role_account: boolean;
  did_you_mean: string | null;
}

interface Lists {
  disposable: ReadonlySet<string>;
  /** Domains any subdomain of which is disposable too. */
  disposableWildcards: ReadonlySet<string>;
  free: ReadonlySet<string>;
  /** The providers a typo is corrected to: `email-providers`' common list and the spell checker's own. */
  common: ReadonlySet<string>;
}

// The compiled worker (CommonJS) resolves from this file; Jest runs the sources as ES modules, where there is
// no __filename, from the repository root. The lists are JSON files inside their packages.
const requireData = createRequire(
  typeof __filename === 'string' ? __filename : path.join(process.cwd(), 'package.json'),
);
let lists: Lists | undefined;

/**
 * Entries of `role-based-email-addresses` that are people's names — given names (`per`, `alexa`) and a surname
 * (`gardner`) — and so a person's mailbox more often than a function's: not roles here. The rest of the list
 * stands, as the established verifiers (Reacher, AfterShip's email-verifier) keep it: `hello`, `team`, `it`,
 * `user` are shared inboxes, departments and placeholders, not people.
 */
const PEOPLES_NAMES: ReadonlySet<string> = new Set(['per', 'alexa', 'gardner']);

/** The lists, read on first use (~120,000 disposable domains: a worker that serves no e-mail never loads them). */
function loadLists(): Lists {
  lists ??= {
    disposable: new Set(requireData('disposable-email-domains') as string[]),
    disposableWildcards: new Set(requireData('disposable-email-domains/wildcard.json') as string[]),
    free: new Set(requireData('email-providers/all.json') as string[]),
    common: new Set([...(requireData('email-providers/common.json') as string[]), ...POPULAR_DOMAINS]),
  };
  return lists;
}

let roles: ReadonlySet<string> | undefined;

/** The role list alone, read on first use: the merge of person records asks it without the domain lists. */
function roleNames(): ReadonlySet<string> {
  roles ??= new Set((requireData('role-based-email-addresses') as string[]).filter((r) => !PEOPLES_NAMES.has(r)));
  return roles;
}

/** Whether an address's local part (without its `+tag`, any case) names a role rather than a person: `info`, `sales`. */
export function isRoleLocalPart(local: string): boolean {
  return roleNames().has(local.toLowerCase().replace(/\+.*$/, ''));
}

/** `a.b.example.com` → `a.b.example.com`, `b.example.com`, `example.com`, `com`. */
function domainAndParents(domain: string): string[] {
  const labels = domain.split('.');
  return labels.map((_, i) => labels.slice(i).join('.'));
}

/**
 * What the lists say about a well-formed address: a disposable-address service (`disposable-email-domains`,
 * its wildcard list covering subdomains), a free mailbox provider (`email-providers`' full list), a role
 * rather than a person (`role-based-email-addresses`: the local part without its `+tag`, case-insensitively),
 * and a likely typo of a common provider's domain.
 */
export function addressFacts(parsed: ParsedEmail): AddressFacts {
  const domain = parsed.domain;
  if (!parsed.syntaxValid || domain === null) {
    return { disposable: false, free_provider: false, role_account: false, did_you_mean: null };
  }
  const { disposable, disposableWildcards, free } = loadLists();
  const typoOf = commonProviderTypo(domain);
  return {
    disposable: disposable.has(domain) || domainAndParents(domain).some((d) => disposableWildcards.has(d)),
    free_provider: free.has(domain),
    role_account: isRoleLocalPart(parsed.local),
    did_you_mean: typoOf === null ? null : `${parsed.local}@${typoOf}`,
  };
}

/**
 * The common provider `domain` is likely a typo of (`gmial.com` → `gmail.com`, `yahooo.com` → `yahoo.com`),
 * from `@zootools/email-spell-checker`, but only where that names a common provider: its top-level-domain
 * corrections are off (they turn real country domains into others: `.pt` → `.it`, `.ac.uk` → `.co.uk`), and a
 * domain that is itself a common provider gets no suggestion (`gmx.net` is not a typo of `cox.net`); and only
 * one slip away (`oneSlipApart`): its own threshold takes short company domains for providers (`ibm.com` →
 * `aim.com`, `hp.com` → `qq.com`, `meta.com` → `me.com`).
 */
function commonProviderTypo(domain: string): string | null {
  const { common } = loadLists();
  if (common.has(domain)) return null;
  const suggestion = suggestDomain({ email: `x@${domain}`, topLevelDomains: [] })?.domain;
  return suggestion !== undefined && common.has(suggestion) && oneSlipApart(domain, suggestion) ? suggestion : null;
}

/**
 * One character added, dropped or mistyped, or two neighbours swapped — in a name of at least four characters
 * where the name itself differs (`ge.com` is General Electric, not a slip for `me.com`; `gmail.con` is one).
 */
function oneSlipApart(typed: string, meant: string): boolean {
  const name = typed.split('.')[0]!;
  if (name !== meant.split('.')[0] && name.length < 4) return false;
  if (distance(typed, meant) === 1) return true;
  const at = [...typed].findIndex((c, k) => c !== meant[k]);
  const swapped = `${typed.slice(0, at)}${typed[at + 1] ?? ''}${typed[at] ?? ''}${typed.slice(at + 2)}`;
  return at >= 0 && swapped === meant;
}

// ---- the verdict ----------------------------------------------------------------------------------------

/** What an SMTP probe of the mailbox concluded, with a reason for people. */
export interface MailboxProbe {
  /**
   * `accepted` 250; `rejected` 550/551/553 (no such mailbox); `disabled` X.2.1 (the mailbox exists but takes no
   * mail); `full` 552; `catch-all` a random address accepted too.
   */
  result: 'accepted' | 'rejected' | 'disabled' | 'full' | 'catch-all' | 'inconclusive';
  reason: string;
  /** `accepted`: whether a made-up address at the domain was refused (false) — absent when that could not tell. */
  catchAll?: false;
  /** `inconclusive` because no mail host held an SMTP session (none could be connected to, or each refused it). */
  noSession?: true;
  /**
   * `inconclusive` because a mail server did not answer in time (a connection or a session past its
   * deadline): the probe's source reports `timeout`, not `unknown`. The address's deliverability is `unknown`
   * either way.
   */
  timedOut?: true;
}

export interface Verdict {
  deliverability: Deliverability;
  reason: string;
  /** Why, as a code (EMAIL_SUB_STATUSES; its score is EMAIL_SCORES's). */
  sub_status: EmailSubStatus;
}

/** Everything a verdict is drawn from; `route` is absent only when the syntax is invalid (nothing to ask DNS). */
export interface EmailChecks {
  parsed: ParsedEmail;
  facts: AddressFacts;
  route?: MailRoute;
  probe?: MailboxProbe;
}

type Rule = (checks: EmailChecks) => Verdict | null;

/**
 * The deliverability rules, the first that applies wins (Reacher's, with DNS and list facts first):
 * an address that cannot receive mail is `undeliverable`; one that can but is disposable, a full mailbox,
 * on a catch-all domain or a role is `risky`; only a mailbox probe's 250 is `deliverable`; everything else —
 * DNS that could not answer, a probe that could not tell, no probe at all — is `unknown`, with the reason.
 * Each rule names its `sub_status` (the table in docs/providers.md, ADR 0057).
 */
const RULES: readonly Rule[] = [
  ({ parsed }) =>
    parsed.syntaxValid ? null : undeliverable('invalid_syntax', `the address ${parsed.reason ?? 'is not valid'}`),
  ({ parsed, route }) => {
    switch (route?.kind) {
      case 'no-domain':
        return undeliverable('no_domain', `the domain ${parsed.domain} does not exist (NXDOMAIN)`);
      case 'null-mx':
        return undeliverable('no_mail_host', `the domain ${parsed.domain} accepts no mail (null MX, RFC 7505)`);
      case 'no-mail-host':
        return undeliverable('no_mail_host', `the domain ${parsed.domain} has no mail host (no MX, A or AAAA record)`);
      case 'mx':
      case 'implicit':
      case 'dns-failure':
      case undefined:
        return null;
    }
  },
  ({ probe }) => (probe?.result === 'rejected' ? undeliverable('mailbox_not_found', probe.reason) : null),
  ({ probe }) => (probe?.result === 'disabled' ? undeliverable('mailbox_disabled', probe.reason) : null),
  ({ parsed, facts }) =>
    facts.disposable ? risky('disposable', `${parsed.domain} hands out disposable addresses`) : null,
  ({ probe }) => (probe?.result === 'full' ? risky('mailbox_full', probe.reason) : null),
  ({ probe }) => (probe?.result === 'catch-all' ? risky('catch_all', probe.reason) : null),
  ({ parsed, facts }) =>
    facts.role_account
      ? risky('role_account', `"${parsed.local}" is a role address (a group or a function, not a person)`)
      : null,
  ({ probe }) =>
    probe?.result === 'accepted'
      ? { deliverability: 'deliverable', reason: probe.reason, sub_status: 'accepted' }
      : null,
  ({ route }) => (route?.kind === 'dns-failure' ? unknown('dns_failure', `DNS could not tell: ${route.detail}`) : null),
  ({ probe }) =>
    probe?.result === 'inconclusive'
      ? unknown(probe.noSession ? 'smtp_unreachable' : 'inconclusive', probe.reason)
      : null,
];

export function verdictOf(checks: EmailChecks): Verdict {
  for (const rule of RULES) {
    const verdict = rule(checks);
    if (verdict) return verdict;
  }
  const host = checks.route && 'hosts' in checks.route ? checks.route.hosts[0]?.host : undefined;
  return unknown(
    'not_probed',
    `${checks.parsed.domain} has a mail host${host ? ` (${host})` : ''}; ` +
      'whether the mailbox exists takes a mailbox probe',
  );
}

const undeliverable = (sub_status: EmailSubStatus, reason: string): Verdict => ({
  deliverability: 'undeliverable',
  reason,
  sub_status,
});
const risky = (sub_status: EmailSubStatus, reason: string): Verdict => ({
  deliverability: 'risky',
  reason,
  sub_status,
});
const unknown = (sub_status: EmailSubStatus, reason: string): Verdict => ({
  deliverability: 'unknown',
  reason,
  sub_status,
});

/** The probe's facts that Reacher reports (ADR 0057): null where the probe did not run or could not tell. */
type ProbeFacts = Pick<EmailResultItem, 'is_catch_all' | 'has_full_inbox' | 'is_disabled' | 'can_connect_smtp'>;

/**
 * What a probe found about the mailbox: a host held a session (`can_connect_smtp`) unless none did; the
 * domain takes any address (`is_catch_all`: true when a made-up address was accepted too, false when it was
 * refused); the mailbox is full or disabled. Whatever a RCPT TO answer settles (accepted, catch-all,
 * refused, full, disabled) is true or false; what a probe that could not tell leaves open is null.
 */
export function probeFacts(probe: MailboxProbe | undefined): ProbeFacts {
  if (probe === undefined)
    return { is_catch_all: null, has_full_inbox: null, is_disabled: null, can_connect_smtp: null };
  const answered = probe.result !== 'inconclusive';
  return {
    is_catch_all: probe.result === 'catch-all' ? true : probe.result === 'accepted' ? (probe.catchAll ?? null) : null,
    has_full_inbox: answered ? probe.result === 'full' : null,
    is_disabled: answered ? probe.result === 'disabled' : null,
    can_connect_smtp: probe.noSession !== true,
  };
}

/** The e-mail item of a provider that ran these checks: the list facts, the MX hosts and the verdict. */
export function checkedEmailItem(email: string, source: string, checks: EmailChecks): EmailResultItem {
  const route = checks.route;
  return emailItem(email, source, {
    ...checks.facts,
    mx_records: route?.kind === 'mx' ? route.hosts.map((h) => h.host) : [],
    ...verdictOf(checks),
    ...probeFacts(checks.probe),
  });
}
