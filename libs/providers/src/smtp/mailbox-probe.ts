import { randomBytes } from 'node:crypto';
import { isRefusedAddress } from '@dossier/contracts';
import type { ParsedEmail } from '@dossier/domain';
import type { MailboxProbe } from '../email-checks';
import type { MailDns, MailHost } from '../mail-host';
import { ProviderError } from '../provider';
import { ConnectFailure, SessionFailure, SmtpSession, describeReply, type SmtpReply } from './smtp-session';

export interface ProbeOptions {
  port: number;
  heloName: string;
  mailFrom: string;
  /** Budget of one connection, from connecting to the last reply. */
  timeoutMs: number;
  /**
   * `SMTP_PROBE_ALLOW_PRIVATE`: connect to loopback, private, link-local and metadata addresses too. Off, such
   * an address is never connected to: anyone can point their own domain's MX at one (SSRF).
   */
  allowPrivate: boolean;
}

/** A TCP handshake with a live server takes well under a second: one not answered by then is not coming. */
const CONNECT_TIMEOUT_MS = 3000;
/**
 * The bounds of one probe, after Postfix's (`smtp_mx_address_limit` 5, `smtp_mx_session_limit` 2), with a
 * cap per host so that one host's dead addresses cannot use up the attempts its backups are there for:
 *
 * - at most `MAX_ADDRESSES_PER_HOST` addresses of each mail host (the others are usually the same cluster);
 * - at most `MAX_CONNECTIONS` connection attempts in all;
 * - at most `MAX_SESSIONS` servers that took the connection but held no session (a 4xx/5xx greeting or
 *   answer to EHLO/HELO, a connection closed or left silent before them; or, where the server requires TLS,
 *   a refused STARTTLS, a failed handshake or a refused EHLO after it) — each may cost a whole
 *   `SMTP_TIMEOUT_MS`.
 *
 * At the defaults the worst case, two silent servers (2 × 10 s) and three connections never answered
 * (3 × 3 s), is 29 s: within the provider's 30 s. The lookup's deadline ends the probe in any case.
 */
const MAX_ADDRESSES_PER_HOST = 2;
const MAX_CONNECTIONS = 5;
const MAX_SESSIONS = 2;

/**
 * Why one mail host (or address) could not be asked: `connect`, it could not be connected to (or has no
 * address the probe may connect to); `session`, it took the connection but refused or dropped the session
 * before greeting, or required TLS and could not turn the session to TLS; `skipped`, the probe's bounds left
 * it out. `timedOut`: it did not answer in time (the connection, or the session within `SMTP_TIMEOUT_MS`).
 */
interface HostFailure {
  kind: 'connect' | 'session' | 'skipped';
  text: string;
  timedOut?: boolean;
}

/**
 * Asks the mail hosts of `recipient`'s domain, best preference first, whether they take mail for it —
 * without sending any: greeting, `EHLO` (`HELO` where EHLO is not understood), `MAIL FROM`, `RCPT TO` the
 * address, `RCPT TO` a made-up address at the same domain (does the domain accept anything?), `QUIT`.
 * Never `DATA`. A host that takes mail only over TLS (`530 5.7.0 Must issue a STARTTLS command first` to
 * `MAIL FROM` or `RCPT TO`) and offers STARTTLS is asked again over TLS on the same connection (see
 * `turnToTls`); one that accepts plain text is asked in plain text, as before. As an MTA does (RFC 5321
 * §5.1), the next address, then the next host, is tried when one cannot be connected to or does not hold a
 * session (a 4xx/5xx greeting, a 4xx/5xx to EHLO and HELO, a connection closed or silent before them; a
 * demand for TLS that STARTTLS could not meet: see `turnToTls`), within the bounds above; the first that
 * holds a session decides. An address the webhooks would refuse
 * (`isRefusedAddress`: loopback, private, link-local, metadata…) is skipped unless `options.allowPrivate`;
 * a host with no other address counts as one that cannot be connected to. Throws only a `timeout`
 * ProviderError when `signal` (the lookup's deadline) ends it, saying how far it got.
 */
export async function probeMailbox(
  hosts: readonly MailHost[],
  dns: MailDns,
  recipient: ParsedEmail,
  options: ProbeOptions,
  signal: AbortSignal,
): Promise<MailboxProbe> {
  const progress: Progress = { failures: [], asking: null };
  try {
    return await probeHosts(hosts, dns, recipient, options, signal, progress);
  } catch (error) {
    if (signal.aborted) throw deadlinePassed(progress, error);
    throw error;
  }
}

/** How far a probe got: what each host tried so far did, and the one being asked. */
interface Progress {
  failures: HostFailure[];
  asking: string | null;
}

async function probeHosts(
  hosts: readonly MailHost[],
  dns: MailDns,
  recipient: ParsedEmail,
  options: ProbeOptions,
  signal: AbortSignal,
  progress: Progress,
): Promise<MailboxProbe> {
  const failures = progress.failures;
  let connections = 0;
  let sessions = 0;
  for (const [i, { host }] of hosts.entries()) {
    if (connections === MAX_CONNECTIONS || sessions === MAX_SESSIONS) {
      const limit =
        sessions === MAX_SESSIONS
          ? `${MAX_SESSIONS} servers that did not hold a session`
          : `${MAX_CONNECTIONS} connections`;
      const rest = hosts.slice(i).map((h) => h.host);
      failures.push({ kind: 'skipped', text: `${rest.join(', ')}: not tried (at most ${limit} per probe)` });
      break;
    }
    progress.asking = host;
    const found = await dns.addresses(host);
    if ('failure' in found || found.addresses.length === 0) {
      failures.push({ kind: 'connect', text: `${host}: ${'failure' in found ? found.failure : 'it has no address'}` });
      continue;
    }
    const allowed = options.allowPrivate ? found.addresses : found.addresses.filter((a) => !isRefusedAddress(a));
    if (allowed.length === 0) {
      failures.push({
        kind: 'connect',
        text: `${host}: it resolves only to a loopback, private, link-local or metadata address (${found.addresses.join(', ')}), which the probe does not connect to`,
      });
      continue;
    }
    for (const address of allowed.slice(0, MAX_ADDRESSES_PER_HOST)) {
      if (connections === MAX_CONNECTIONS || sessions === MAX_SESSIONS) break;
      connections++;
      progress.asking = `${host} (${address})`;
      const budget = AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs)]);
      let session: SmtpSession;
      try {
        session = await SmtpSession.open(address, options.port, budget, CONNECT_TIMEOUT_MS);
      } catch (error) {
        if (signal.aborted || !(error instanceof ConnectFailure)) throw error;
        failures.push({ kind: 'connect', text: `${host} (${address}): ${error.message}`, timedOut: error.timedOut });
        continue;
      }
      let stage: 'greeting' | 'hello' | 'probe' | 'tls' = 'greeting';
      try {
        const greeting = await session.read();
        if (greeting.code !== 220) {
          sessions++;
          failures.push({
            kind: 'session',
            text: `${host} (${address}) refused the session: ${describeReply(greeting)}`,
          });
          continue;
        }
        stage = 'hello';
        const hello = await sayHello(session, options.heloName);
        if (hello.reply.code !== 250) {
          sessions++;
          failures.push({
            kind: 'session',
            text: `${host} (${address}) refused ${hello.command}: ${describeReply(hello.reply)}`,
          });
          continue;
        }
        stage = 'probe';
        const plain = await dialogue(session, host, hello, recipient, options, offersStartTls(hello));
        if (!('demand' in plain)) return plain;
        stage = 'tls';
        const secure = await turnToTls(session, host, address, plain.demand, options.heloName);
        if ('refused' in secure) {
          sessions++;
          failures.push({ kind: 'session', text: secure.refused });
          continue;
        }
        stage = 'probe';
        const answer = await dialogue(session, host, secure, recipient, options, 'on');
        // Over TLS, a demand for TLS is an answer (dialogue's `tlsOnly`), never asked for again.
        return 'demand' in answer ? inconclusive(tlsOnly(host, answer.demand, 'on')) : answer;
      } catch (error) {
        if (signal.aborted || !(error instanceof SessionFailure)) throw error;
        if (stage === 'probe') return inconclusive(`${host}: ${error.message} during the probe`, error.timedOut);
        sessions++;
        const when = { greeting: 'before its greeting', hello: 'at EHLO', tls: 'after STARTTLS' }[stage];
        failures.push({
          kind: 'session',
          text: `${host} (${address}): ${error.message} ${when}`,
          timedOut: error.timedOut,
        });
      } finally {
        session.close();
      }
    }
  }
  progress.asking = null;
  return noHostAsked(failures, options.port, connections > 0);
}

interface Hello {
  command: 'EHLO' | 'HELO';
  reply: SmtpReply;
}

/**
 * `EHLO`, and `HELO` where EHLO is refused with a 5xx (not understood: RFC 5321 §3.2 asks the client to
 * fall back), as Postfix does. A 4xx is the server's "not now" (421: it closes): HELO would fare no better.
 * Any reply but 250 to the last command sent means this server holds no session with us.
 */
async function sayHello(session: SmtpSession, heloName: string): Promise<Hello> {
  const ehlo = await session.command(`EHLO ${heloName}`);
  if (ehlo.code === 250 || ehlo.code < 500) return { command: 'EHLO', reply: ehlo };
  return { command: 'HELO', reply: await session.command(`HELO ${heloName}`) };
}

/**
 * Where the session stands with TLS: `offered`, plain text and the EHLO reply lists STARTTLS; `not offered`,
 * plain text without it (or a HELO session: no extensions); `on`, over TLS since STARTTLS.
 */
type Tls = 'offered' | 'not offered' | 'on';

/** A host's demand for TLS (`530 5.7.0 Must issue a STARTTLS command first`), where STARTTLS is `offered`. */
interface TlsDemand {
  demand: SmtpReply;
}

function offersStartTls(hello: Hello): Tls {
  return hello.command === 'EHLO' && hello.reply.lines.some((line) => /^STARTTLS\b/i.test(line))
    ? 'offered'
    : 'not offered';
}

/**
 * `MAIL FROM`, `RCPT TO` and the catch-all check, and what they say. A demand for TLS at `MAIL FROM` or
 * `RCPT TO` is handed back (`TlsDemand`) when STARTTLS is `offered`; otherwise it is the answer.
 */
async function dialogue(
  session: SmtpSession,
  host: string,
  hello: Hello,
  recipient: ParsedEmail,
  options: ProbeOptions,
  tls: Tls,
): Promise<MailboxProbe | TlsDemand> {
  const extended = hello.command === 'EHLO';
  // A UTF-8 address needs the SMTPUTF8 extension (RFC 6531); without it the server cannot be asked.
  const utf8 = /[^\x00-\x7f]/.test(recipient.normalized);
  if (utf8 && !(extended && hello.reply.lines.some((line) => /^SMTPUTF8\b/i.test(line)))) {
    return inconclusive(`${host} does not take UTF-8 addresses (no SMTPUTF8), so it cannot be asked`);
  }
  const mail = await session.command(`MAIL FROM:<${options.mailFrom}>${utf8 ? ' SMTPUTF8' : ''}`);
  if (asksForTls(mail)) return tls === 'offered' ? { demand: mail } : inconclusive(tlsOnly(host, mail, tls));
  if (mail.code !== 250) return inconclusive(senderRefused(host, mail, options.mailFrom));
  const rcpt = await session.command(`RCPT TO:<${recipient.normalized}>`);
  const said = describeReply(rcpt);
  // Some servers ask for TLS only at RCPT TO: that says nothing about the mailbox, nor of a block.
  if (asksForTls(rcpt)) return tls === 'offered' ? { demand: rcpt } : inconclusive(tlsOnly(host, rcpt, tls));
  switch (classify(rcpt)) {
    case 'accepted':
      return catchAllCheck(session, host, recipient, said);
    case 'rejected':
      return { result: 'rejected', reason: `${host} refused the mailbox: ${said}` };
    case 'disabled':
      return { result: 'disabled', reason: `the mailbox is disabled: ${said}` };
    case 'full':
      return { result: 'full', reason: `the mailbox is full: ${said}` };
    case 'deferred':
      return inconclusive(
        `${host} deferred the answer: ${said} (greylisting or a temporary failure: a later probe may tell)`,
      );
    case 'policy':
      return inconclusive(
        `${host} refused the probe for policy reasons: ${said} (this host or its sender may be blocked)`,
      );
    case 'other':
      return inconclusive(`${host} answered ${said}, which says nothing about the mailbox`);
  }
}

/**
 * Why `MAIL FROM` was not accepted, as the reply says (a demand for TLS is `dialogue`'s): authentication
 * required (530, RFC 4954: a submission port, not a mail exchanger's); a 4xx, deferred (greylisting at the
 * sender, a busy server); any other refusal is about the sender or this host.
 */
function senderRefused(host: string, reply: SmtpReply, mailFrom: string): string {
  const said = describeReply(reply);
  if (reply.code === 530) {
    return `${host} asks for authentication: ${said} (a submission port, not a mail exchanger: check SMTP_PROBE_PORT)`;
  }
  if (reply.code >= 400 && reply.code < 500) {
    return `${host} deferred the probe's sender <${mailFrom}>: ${said} (greylisting or a temporary failure: a later probe may tell)`;
  }
  return (
    `${host} refused the probe's sender <${mailFrom}>: ${said} ` +
    '(the sender address or this host is blocked: check SMTP_MAIL_FROM, SMTP_HELO_NAME and the IP reputation)'
  );
}

/** A refusal that asks for TLS first (`530 5.7.0 Must issue a STARTTLS command first`, RFC 3207). */
function asksForTls(reply: SmtpReply): boolean {
  return reply.code >= 400 && /\bSTARTTLS\b|\b(?:TLS|encryption) (?:is )?required\b/i.test(reply.lines.join(' '));
}

/** A demand for TLS that STARTTLS cannot meet: the host does not offer it, or asked again over TLS. */
function tlsOnly(host: string, reply: SmtpReply, tls: Exclude<Tls, 'offered'>): string {
  const why = tls === 'on' ? 'and asked for it again after STARTTLS' : 'but its EHLO reply offers no STARTTLS';
  return `${host} takes mail only over TLS: ${describeReply(reply)}, ${why}, so it cannot be asked`;
}

/**
 * After a demand for TLS from a host whose EHLO offered STARTTLS: `STARTTLS`, the TLS handshake on the same
 * connection (`SmtpSession.startTls`: opportunistic, the certificate not checked), and `EHLO` again — RFC
 * 3207 §4.2: what the server said before is forgotten, the transaction too, so `dialogue` starts over at
 * `MAIL FROM`. Within the connection's budget (no new connection is made). A host that asked for TLS and
 * cannot give it — a refused STARTTLS (`454 4.7.0 TLS not available due to temporary reason`), a refused
 * EHLO after it (`refused`), a failed handshake (a SessionFailure, which the caller words) — holds no
 * session, says nothing about the mailbox, and leaves the next host its turn (ADR 0041).
 */
async function turnToTls(
  session: SmtpSession,
  host: string,
  address: string,
  demand: SmtpReply,
  heloName: string,
): Promise<Hello | { refused: string }> {
  const server = `${host} (${address})`;
  const reply = await session.command('STARTTLS');
  if (reply.code !== 220) {
    return {
      refused: `${server} takes mail only over TLS: ${describeReply(demand)}, but refused STARTTLS: ${describeReply(reply)}`,
    };
  }
  await session.startTls(host);
  const hello = await sayHello(session, heloName);
  if (hello.reply.code !== 250) {
    return { refused: `${server} refused ${hello.command} after STARTTLS: ${describeReply(hello.reply)}` };
  }
  return hello;
}

/**
 * The address was accepted: does the domain accept any address? A made-up one at the same domain, in the
 * same transaction. Accepted too: catch-all, the acceptance says nothing. Refused: a real yes.
 */
async function catchAllCheck(
  session: SmtpSession,
  host: string,
  recipient: ParsedEmail,
  said: string,
): Promise<MailboxProbe> {
  const madeUp = `dossier-${randomBytes(8).toString('hex')}@${recipient.domain}`;
  let other: SmtpReply;
  try {
    other = await session.command(`RCPT TO:<${madeUp}>`);
  } catch (error) {
    if (!(error instanceof SessionFailure)) throw error;
    return {
      result: 'accepted',
      reason: `${host} accepted the mailbox (${said}); the catch-all check failed: ${error.message}`,
    };
  }
  const verdict = classify(other);
  if (verdict === 'accepted') {
    return {
      result: 'catch-all',
      reason: `${host} accepts mail for any address at ${recipient.domain} (catch-all: a made-up address was accepted too), so this mailbox may not exist`,
    };
  }
  if (verdict === 'rejected')
    return { result: 'accepted', reason: `${host} accepted the mailbox (${said})`, catchAll: false };
  return {
    result: 'accepted',
    reason: `${host} accepted the mailbox (${said}); whether it accepts any address is not known (${describeReply(other)})`,
  };
}

type RcptAnswer = 'accepted' | 'rejected' | 'disabled' | 'full' | 'deferred' | 'policy' | 'other';

/** A permanent refusal that says the mailbox exists but is turned off ("550 5.2.1 The account is disabled"). */
const DISABLED_TEXT = /\b(?:disabled|deactivated|suspended|inactive)\b/i;

/**
 * What a refusal without an enhanced code says when it is about the client, not the mailbox: a block list,
 * the sender's reputation, a policy, a relay or access rule, a rate limit ("550 Client host [203.0.113.9]
 * blocked using Spamhaus", "550 Rejected: listed at bl.spamcop.net", "550 Relaying denied").
 */
const POLICY_TEXT =
  /\b(?:block(?:ed|list(?:ed)?|ing)?|black-?list(?:ed)?|spamhaus|spamcop|barracuda|sorbs|(?:dns)?rbl|listed (?:at|on|in|by)|reputation|policy|banned|spam|junk|abuse|access denied|denied|relay(?:ing)?|not (?:allowed|permitted|authori[sz]ed)|too many|rate limit(?:ed)?|client host|your ip|sender ip)\b/i;

/**
 * A `RCPT TO` reply: 250/251 accepted; 552 or X.2.2 (RFC 3463 "mailbox full", 4.2.2 too) full; 5.7.x a
 * policy refusal (a blocked client, not a word on the mailbox); 5.2.1 (RFC 3463 "mailbox disabled, not
 * accepting messages") disabled; 5.1.x no such mailbox, and so Exchange Online's 5.4.1 "Recipient address
 * rejected" (its directory-based edge blocking refuses every address not in the directory so, "Access denied"
 * though it says); a 5xx without either whose text names a block list, a policy or the client is a policy
 * refusal (a blocked probe must not read as an undeliverable address), one whose text says disabled,
 * deactivated, suspended or inactive a disabled mailbox (ADR 0057), a 550/551/553 otherwise no such mailbox;
 * any other 4xx deferred (greylisting, a full queue); the rest says nothing about the mailbox.
 */
function classify(reply: SmtpReply): RcptAnswer {
  const [, subject, detail] = reply.enhanced?.split('.') ?? [];
  if (reply.code === 250 || reply.code === 251) return 'accepted';
  // Before the 4xx rule: 452 4.2.2 (Gmail's "over quota") is a full mailbox, not greylisting.
  if (reply.code >= 400 && (reply.code === 552 || (subject === '2' && detail === '2'))) return 'full';
  if (reply.code >= 400 && reply.code < 500) return 'deferred';
  if (reply.code < 500 || reply.code >= 600) return 'other';
  if (subject === '7') return 'policy';
  // RFC 3463 X.2.1 "mailbox disabled, not accepting messages" (ADR 0057).
  if (subject === '2' && detail === '1') return 'disabled';
  if (subject === '1') return 'rejected';
  // Before the policy words: its "Access denied" is about the recipient, not the client.
  if (subject === '4' && detail === '1' && /\bRecipient address rejected\b/i.test(reply.lines.join(' '))) {
    return 'rejected';
  }
  if (POLICY_TEXT.test(reply.lines.join(' '))) return 'policy';
  // After the policy words: a blocked probe must not read as a disabled mailbox either.
  if (DISABLED_TEXT.test(reply.lines.join(' '))) return 'disabled';
  if ([550, 551, 553].includes(reply.code)) return 'rejected';
  return 'other';
}

/** A probe that could not tell; `timedOut`, because a server did not answer in time (see MailboxProbe). */
function inconclusive(reason: string, timedOut = false): MailboxProbe {
  return timedOut ? { result: 'inconclusive', reason, timedOut } : { result: 'inconclusive', reason };
}

/** An `inconclusive` probe in which no mail host held an SMTP session (`can_connect_smtp` false). */
function noSession(reason: string, timedOut: boolean): MailboxProbe {
  return { ...inconclusive(reason, timedOut), noSession: true };
}

/**
 * No host could be asked. When none took a connection, where connections were tried, say that the port
 * may be blocked on our side; when one did, the port is open: say what each host did. Timed out when any
 * host was left for not answering in time: the probe ran out of time there, not of hosts that answered.
 */
function noHostAsked(failures: HostFailure[], port: number, triedConnecting: boolean): MailboxProbe {
  const texts = failures.map((f) => f.text);
  const timedOut = failures.some((f) => f.timedOut === true);
  if (!failures.some((f) => f.kind === 'session')) return cannotConnect(texts, port, triedConnecting, timedOut);
  if (failures.length === 1) return noSession(texts[0]!, timedOut);
  const said = failures.map((f) => (f.kind === 'connect' ? `could not connect to port ${port} of ${f.text}` : f.text));
  return noSession(`no mail host could be asked: ${said.join('; ')}`, timedOut);
}

function cannotConnect(unreachable: string[], port: number, triedConnecting: boolean, timedOut: boolean): MailboxProbe {
  const hint = triedConnecting
    ? `. Outbound port ${port} is blocked on many networks (most cloud providers and home ISPs); the probe needs it open`
    : '';
  return noSession(
    `could not connect to port ${port} of ${unreachable.join('; ') || 'any mail host'}${hint}`,
    timedOut,
  );
}

/**
 * The lookup's deadline ended the probe: a `timeout` (its answer is missing, API.md), whose message keeps how
 * far it got — the host being asked, and what each host before it did — for the source's `detail`.
 */
function deadlinePassed({ failures, asking }: Progress, cause: unknown): ProviderError {
  const during = asking === null ? '' : `, while asking ${asking}`;
  const before = failures.length === 0 ? '' : `; before that: ${failures.map((f) => f.text).join('; ')}`;
  return new ProviderError(
    'timeout',
    `smtp: the probe did not finish before the deadline${during}${before}`,
    undefined,
    {
      cause,
    },
  );
}
