import { join } from 'node:path';
import type { EmailInput } from '@dossier/contracts';
import {
  FakeDns,
  FakeSmtp,
  LOOPBACK_PROVIDER_ENV,
  REPO_ROOT,
  readFixtures,
  waitFor,
  type DnsName,
  type SmtpScript,
} from '@dossier/testing';
import { unguardedContext, type ProviderAnswer } from '../provider';
import { probeOptionsOf, smtpProvider } from './smtp.provider';

/**
 * One case: what the fake SMTP server plays (and, where the case needs it, DNS and settings), the input, and
 * exactly the answer the provider must give. `{port}` in a text stands for the fake's port.
 */
interface Fixture {
  name: string;
  dns?: Record<string, DnsName>;
  settings?: Record<string, string>;
  smtp: SmtpScript;
  input: EmailInput;
  answer: ProviderAnswer<'email'>;
}

const FIXTURES = join(REPO_ROOT, 'libs/providers/src/smtp/fixtures');
const load = (folder: 'ok' | 'not-ok'): Fixture[] => readFixtures<Fixture>(join(FIXTURES, folder));

const HELO = 'probe.dossier.test';
/** A server that will not hold a session now. */
const BUSY: SmtpScript = { greeting: { code: 421, message: '4.3.2 too busy, try later' } };
const FROM = 'verify@dossier.test';

describe('smtpProvider against a fake SMTP server on loopback', () => {
  let dns: FakeDns;
  let smtp: FakeSmtp;
  let settings: Record<string, string>;

  beforeAll(async () => {
    [dns, smtp] = await Promise.all([
      FakeDns.start({ 'probe.example': { mx: [[10, 'mx.probe.example']] }, 'mx.probe.example': { a: ['127.0.0.1'] } }),
      FakeSmtp.start(),
    ]);
    settings = {
      SMTP_PROBE: 'true',
      SMTP_PROBE_PORT: String(smtp.port),
      SMTP_HELO_NAME: HELO,
      SMTP_MAIL_FROM: FROM,
      DNS_SERVERS: dns.server,
      // The fake listens on loopback, which the probe refuses to connect to by default.
      SMTP_PROBE_ALLOW_PRIVATE: 'true',
    };
  });
  afterAll(async () => {
    await Promise.all([dns?.close(), smtp?.close()]);
  });

  const lookup = (input: EmailInput, extra: Record<string, string> = {}, signal = AbortSignal.timeout(10_000)) =>
    smtpProvider.lookup('email', input, unguardedContext(signal, { ...settings, ...extra }));

  /** The commands of the last session, once it has ended with its QUIT. */
  const lastSession = () =>
    waitFor(
      async () => smtp.sessions.at(-1) ?? [],
      (commands) => commands.at(-1) === 'QUIT',
      { timeoutMs: 5000, what: 'the probe to QUIT' },
    );

  /**
   * Runs `body` with `domain`'s primary MX (mx1, 127.0.0.10) a second fake SMTP server that plays `script`,
   * and its backup (mx2) the usual fake, then stops the primary.
   */
  const behindPrimary = async (
    domain: string,
    script: SmtpScript,
    body: (primary: FakeSmtp) => Promise<void>,
  ): Promise<void> => {
    const primary = await FakeSmtp.start(script, { host: '127.0.0.10', port: smtp.port });
    try {
      dns.set(domain, {
        mx: [
          [10, `mx1.${domain}`],
          [20, `mx2.${domain}`],
        ],
      });
      dns.set(`mx1.${domain}`, { a: ['127.0.0.10'] });
      dns.set(`mx2.${domain}`, { a: ['127.0.0.1'] });
      await body(primary);
    } finally {
      await primary.close();
    }
  };

  describe.each([
    ['ok', load('ok')],
    ['not ok', load('not-ok')],
  ])('%s', (_folder, fixtures) => {
    it.each(fixtures.map((f) => [f.name, f] as const))('%s', async (_name, fixture) => {
      for (const [name, answer] of Object.entries(fixture.dns ?? {})) dns.set(name, answer);
      smtp.script = fixture.smtp;
      const expected = JSON.parse(JSON.stringify(fixture.answer).replaceAll('{port}', String(smtp.port))) as unknown;
      await expect(lookup(fixture.input, fixture.settings)).resolves.toEqual(expected);
    });
  });

  it('says unknown behind a resolver that answers NXDOMAIN for everything, never not_found', async () => {
    const lying = await FakeDns.lying();
    try {
      const answer = await lookup({ email: 'grace@gone.example' }, { DNS_SERVERS: lying.server });
      expect(answer).toMatchObject({
        outcome: 'unknown',
        detail: expect.stringMatching(/^the resolver answers NXDOMAIN for gone\.example, and .*cannot be trusted$/),
      });
      expect(answer.items).toEqual([expect.objectContaining({ deliverability: 'unknown' })]);
    } finally {
      await lying.close();
    }
  });

  it('probes with EHLO, MAIL FROM, RCPT TO the address and a made-up one, then QUIT — never DATA', async () => {
    smtp.script = { rcpt: { 'grace@probe.example': 'accept' } };
    await lookup({ email: 'grace@probe.example' });
    expect(await lastSession()).toEqual([
      `EHLO ${HELO}`,
      `MAIL FROM:<${FROM}>`,
      'RCPT TO:<grace@probe.example>',
      expect.stringMatching(/^RCPT TO:<dossier-[0-9a-f]{16}@probe\.example>$/),
      'QUIT',
    ]);
  });

  it('falls back to HELO where EHLO is not understood', async () => {
    smtp.script = { ehlo: false, rcpt: { 'grace@probe.example': 'accept' } };
    await lookup({ email: 'grace@probe.example' });
    expect((await lastSession()).slice(0, 3)).toEqual([`EHLO ${HELO}`, `HELO ${HELO}`, `MAIL FROM:<${FROM}>`]);
  });

  it('does not probe for a catch-all when the address itself is refused', async () => {
    smtp.script = {};
    await lookup({ email: 'nobody@probe.example' });
    expect(await lastSession()).toEqual([
      `EHLO ${HELO}`,
      `MAIL FROM:<${FROM}>`,
      'RCPT TO:<nobody@probe.example>',
      'QUIT',
    ]);
  });

  it('asks for a UTF-8 address with SMTPUTF8, which the server offers', async () => {
    smtp.script = { rcpt: { 'josé@probe.example': 'accept' } };
    const answer = await lookup({ email: 'José@probe.example' });
    expect(answer.items[0]).toMatchObject({ deliverability: 'deliverable' });
    expect((await lastSession()).slice(1, 3)).toEqual([`MAIL FROM:<${FROM}> SMTPUTF8`, 'RCPT TO:<José@probe.example>']);
  });

  // Loopback only: a probe that did connect (the defect) must still not leave this machine.
  it.each<[string, string, Record<string, DnsName>, string]>([
    [
      'an MX host with an A record on loopback',
      'mx.loopback.example',
      { 'loopback.example': { mx: [[10, 'mx.loopback.example']] }, 'mx.loopback.example': { a: ['127.0.0.1'] } },
      '127.0.0.1',
    ],
    [
      'an MX host with only an AAAA record on loopback',
      'mx.loopback6.example',
      { 'loopback6.example': { mx: [[10, 'mx.loopback6.example']] }, 'mx.loopback6.example': { aaaa: ['::1'] } },
      '::1',
    ],
    ['an MX written as an address', '127.0.0.1', { 'literal.example': { mx: [[10, '127.0.0.1']] } }, '127.0.0.1'],
    [
      'no MX: the domain itself, on loopback',
      'implicit.example',
      { 'implicit.example': { a: ['127.0.0.2'] } },
      '127.0.0.2',
    ],
  ])(
    'connects to no loopback, private, link-local or metadata address by default: %s',
    async (_name, host, names, address) => {
      for (const [name, answer] of Object.entries(names)) dns.set(name, answer);
      const email = `grace@${Object.keys(names)[0]}`;
      smtp.script = { rcpt: { [email]: 'accept' } };
      const { SMTP_PROBE_ALLOW_PRIVATE: _allowed, ...defaults } = settings;
      const before = smtp.sessions.length;
      const answer = await smtpProvider.lookup(
        'email',
        { email },
        unguardedContext(AbortSignal.timeout(10_000), defaults),
      );
      const detail =
        `could not connect to port ${smtp.port} of ${host}: it resolves only to a loopback, private, ` +
        `link-local or metadata address (${address}), which the probe does not connect to`;
      expect(answer).toEqual({
        outcome: 'unknown',
        items: [expect.objectContaining({ deliverability: 'unknown', reason: detail, sources: ['smtp'] })],
        detail,
      });
      expect(smtp.sessions.length).toBe(before);
    },
  );

  it('probes a loopback mail host as before with SMTP_PROBE_ALLOW_PRIVATE=true (tests, closed networks)', async () => {
    dns.set('loopback.example', { mx: [[10, 'mx.loopback.example']] });
    dns.set('mx.loopback.example', { a: ['127.0.0.1'] });
    smtp.script = { rcpt: { 'grace@loopback.example': 'accept' } };
    const before = smtp.sessions.length;
    const answer = await lookup({ email: 'grace@loopback.example' }, { SMTP_PROBE_ALLOW_PRIVATE: 'true' });
    expect(answer).toMatchObject({ outcome: 'found', items: [{ deliverability: 'deliverable' }] });
    expect(smtp.sessions.length).toBe(before + 1);
  });

  // RFC 5321 §5.1 and Postfix: a primary that will not hold a session — a 4xx/5xx greeting, a connection
  // closed before or at the greeting — is skipped for the next MX, as one that refuses the connection is.
  it.each<[string, SmtpScript['greeting'], string]>([
    ['a 421 greeting', { code: 421, message: '4.3.2 too busy, try later' }, ' refused the session: 421 4.3.2 too busy'],
    ['a 554 greeting', { code: 554, message: '5.7.1 no SMTP service for you' }, ' refused the session: 554 5.7.1'],
    ['a connection closed before the greeting', 'drop', ': the server closed the connection before its greeting'],
  ])('asks the backup MX when the primary answers with %s', async (_name, greeting, said) => {
    await behindPrimary('busy-primary.example', { greeting }, async (primary) => {
      smtp.script = { rcpt: { 'grace@busy-primary.example': 'accept' } };
      const answer = await lookup({ email: 'grace@busy-primary.example' });
      expect(primary.sessions.length).toBe(1);
      expect(answer).toMatchObject({
        outcome: 'found',
        items: [
          { deliverability: 'deliverable', reason: 'mx2.busy-primary.example accepted the mailbox (250 Accepted)' },
        ],
      });
      // With no backup that answers, the reason says what each host did.
      dns.set('mx2.busy-primary.example', { a: ['127.0.0.3'] });
      const alone = await lookup({ email: 'grace@busy-primary.example' });
      expect(alone).toMatchObject({ outcome: 'unknown', items: [{ deliverability: 'unknown' }] });
      expect(alone.items[0]?.reason).toContain(`mx1.busy-primary.example (127.0.0.10)${said}`);
      expect(alone.items[0]?.reason).toContain(
        `could not connect to port ${smtp.port} of mx2.busy-primary.example (127.0.0.3): connection refused`,
      );
    });
  });

  // The same for a primary that greets, then refuses EHLO (and HELO) with a 4xx or 5xx: it holds no session either.
  it.each<[string, SmtpScript['ehlo'], string[], string]>([
    [
      'a 421 to EHLO',
      { code: 421, message: '4.7.0 try again later, closing connection' },
      [`EHLO ${HELO}`],
      ' refused EHLO: 421 4.7.0 try again later',
    ],
    [
      'a 554 to EHLO and to HELO',
      { code: 554, message: '5.7.1 no SMTP service for you' },
      [`EHLO ${HELO}`, `HELO ${HELO}`],
      ' refused HELO: 554 5.7.1 no SMTP service for you',
    ],
  ])('asks the backup MX when the primary answers %s', async (_name, ehlo, commands, said) => {
    await behindPrimary('picky-primary.example', { ehlo }, async (primary) => {
      smtp.script = { rcpt: { 'grace@picky-primary.example': 'accept' } };
      const answer = await lookup({ email: 'grace@picky-primary.example' });
      expect(primary.sessions.map((session) => session.filter((c) => c !== 'QUIT'))).toEqual([commands]);
      expect(answer).toMatchObject({
        outcome: 'found',
        items: [
          { deliverability: 'deliverable', reason: 'mx2.picky-primary.example accepted the mailbox (250 Accepted)' },
        ],
      });
      dns.set('mx2.picky-primary.example', { a: ['127.0.0.3'] });
      const alone = await lookup({ email: 'grace@picky-primary.example' });
      expect(alone).toMatchObject({ outcome: 'unknown', items: [{ deliverability: 'unknown' }] });
      expect(alone.items[0]?.reason).toContain(`mx1.picky-primary.example (127.0.0.10)${said}`);
    });
  });

  // A primary that requires TLS and cannot give it — its TLS handshake fails, it refuses STARTTLS (454), or it
  // refuses EHLO (and HELO) over TLS — says nothing about the mailbox: the backup MX is asked, within the same
  // bounds (a server that took the connection without holding a session; ADR 0041).
  it.each<[string, SmtpScript, RegExp]>([
    ['its TLS handshake fails', { starttls: 'broken' }, /: the TLS handshake failed \(.+\) after STARTTLS/],
    [
      'it refuses STARTTLS',
      { starttls: 'refused' },
      / takes mail only over TLS: 530 5\.7\.0 Must issue a STARTTLS command first, but refused STARTTLS: 454 4\.7\.0/,
    ],
    [
      'it refuses EHLO after STARTTLS (421)',
      { starttls: 'required', ehloOverTls: { code: 421, message: '4.7.0 try again later' } },
      / refused EHLO after STARTTLS: 421 4\.7\.0 try again later/,
    ],
    [
      'it refuses EHLO and HELO after STARTTLS (554)',
      { starttls: 'required', ehloOverTls: { code: 554, message: '5.7.1 go away' } },
      / refused HELO after STARTTLS: 554 5\.7\.1 go away/,
    ],
  ])('asks the backup MX when the primary requires TLS and %s', async (_name, script, said) => {
    await behindPrimary('tls-primary.example', script, async (primary) => {
      smtp.script = { starttls: 'required', rcpt: { 'grace@tls-primary.example': 'accept' } };
      const answer = await lookup({ email: 'grace@tls-primary.example' });
      expect(primary.sessions.map((session) => session.slice(0, 3))).toEqual([
        [`EHLO ${HELO}`, `MAIL FROM:<${FROM}>`, 'STARTTLS'],
      ]);
      expect(answer).toMatchObject({
        outcome: 'found',
        items: [
          { deliverability: 'deliverable', reason: 'mx2.tls-primary.example accepted the mailbox (250 Accepted)' },
        ],
      });
      // With no backup that answers, the reason says what each host did.
      dns.set('mx2.tls-primary.example', { a: ['127.0.0.3'] });
      const alone = await lookup({ email: 'grace@tls-primary.example' });
      expect(alone).toMatchObject({ outcome: 'unknown', items: [{ deliverability: 'unknown' }] });
      const reason = alone.items[0]?.reason ?? '';
      expect(reason).toMatch(/^no mail host could be asked: mx1\.tls-primary\.example \(127\.0\.0\.10\)/);
      expect(reason).toMatch(said);
      expect(reason).toContain(
        `could not connect to port ${smtp.port} of mx2.tls-primary.example (127.0.0.3): connection refused`,
      );
    });
  });

  it('asks the backup MX when every address of the primary refuses the connection', async () => {
    dns.set('many-addresses.example', {
      mx: [
        [10, 'mx1.many-addresses.example'],
        [20, 'mx2.many-addresses.example'],
      ],
    });
    // Nothing listens on 127.0.0.2-4.
    dns.set('mx1.many-addresses.example', { a: ['127.0.0.2', '127.0.0.3', '127.0.0.4'] });
    dns.set('mx2.many-addresses.example', { a: ['127.0.0.1'] });
    smtp.script = { rcpt: { 'grace@many-addresses.example': 'accept' } };
    await expect(lookup({ email: 'grace@many-addresses.example' })).resolves.toMatchObject({
      outcome: 'found',
      items: [
        { deliverability: 'deliverable', reason: 'mx2.many-addresses.example accepted the mailbox (250 Accepted)' },
      ],
    });
  });

  it('still gives up after a bounded number of connections, saying so', async () => {
    const hosts = ['mx1', 'mx2', 'mx3', 'mx4'].map((h) => `${h}.many-hosts.example`);
    dns.set('many-hosts.example', { mx: hosts.map((h, i) => [10 * (i + 1), h] as [number, string]) });
    for (const [i, host] of hosts.entries()) dns.set(host, { a: [`127.0.1.${2 * i + 1}`, `127.0.1.${2 * i + 2}`] });
    const answer = await lookup({ email: 'grace@many-hosts.example' });
    const reason = answer.items[0]?.reason ?? '';
    // Two addresses per host at most, five connections in all: mx3's second address and mx4 are not tried.
    expect(reason.match(/connection refused/g)).toHaveLength(5);
    expect(reason).toContain('mx3.many-hosts.example (127.0.1.5)');
    expect(reason).not.toContain('127.0.1.6');
    expect(reason).toContain('mx4.many-hosts.example: not tried (at most 5 connections per probe)');
  });

  it('asks no third server once two took the connection and did not greet', async () => {
    const others = await Promise.all(
      ['127.0.0.10', '127.0.0.11'].map((host) => FakeSmtp.start(BUSY, { host, port: smtp.port })),
    );
    try {
      dns.set('all-busy.example', {
        mx: [
          [10, 'mx1.all-busy.example'],
          [20, 'mx2.all-busy.example'],
          [30, 'mx3.all-busy.example'],
        ],
      });
      dns.set('mx1.all-busy.example', { a: ['127.0.0.10'] });
      dns.set('mx2.all-busy.example', { a: ['127.0.0.11'] });
      dns.set('mx3.all-busy.example', { a: ['127.0.0.1'] });
      smtp.script = { rcpt: { 'grace@all-busy.example': 'accept' } };
      const before = smtp.sessions.length;
      const answer = await lookup({ email: 'grace@all-busy.example' });
      expect(others.map((o) => o.sessions.length)).toEqual([1, 1]);
      expect(smtp.sessions.length).toBe(before);
      expect(answer).toMatchObject({ outcome: 'unknown', items: [{ deliverability: 'unknown' }] });
      expect(answer.items[0]?.reason).toContain(
        'mx3.all-busy.example: not tried (at most 2 servers that did not hold a session per probe)',
      );
    } finally {
      await Promise.all(others.map((o) => o.close()));
    }
  });

  // A deadline is `timeout` (API.md): the server took the connection and then said nothing in time. What is
  // known without its answer stays: the item, deliverability `unknown`, says which host and when.
  it('reports a timeout when the server stops answering at RCPT TO, the address unknown', async () => {
    smtp.script = { rcpt: { 'grace@probe.example': 'hang' } };
    const reason = 'mx.probe.example: the server stopped answering (timed out) during the probe';
    await expect(lookup({ email: 'grace@probe.example' }, { SMTP_TIMEOUT_MS: '300' })).resolves.toMatchObject({
      outcome: 'timeout',
      items: [{ deliverability: 'unknown', reason }],
      detail: reason,
    });
  });

  it('reports a timeout when a busy primary sends it to a backup that never greets, saying what each did', async () => {
    await behindPrimary('silent-backup.example', BUSY, async () => {
      smtp.script = { greeting: 'hang' };
      const reason =
        'no mail host could be asked: mx1.silent-backup.example (127.0.0.10) refused the session: 421 4.3.2 too busy, try later; ' +
        'mx2.silent-backup.example (127.0.0.1): the server stopped answering (timed out) before its greeting';
      await expect(lookup({ email: 'grace@silent-backup.example' }, { SMTP_TIMEOUT_MS: '300' })).resolves.toMatchObject(
        {
          outcome: 'timeout',
          items: [{ deliverability: 'unknown', reason }],
          detail: reason,
        },
      );
    });
  });

  it.each<[string, SmtpScript['mailFrom'], string]>([
    [
      'a 451 at MAIL FROM (greylisting the sender)',
      { code: 451, message: '4.7.1 greylisted, please try again later' },
      "mx.probe.example deferred the probe's sender <verify@dossier.test>: 451 4.7.1 greylisted, please try again later (greylisting or a temporary failure: a later probe may tell)",
    ],
    [
      'a 530 asking for authentication',
      { code: 530, message: '5.7.0 Authentication required' },
      `mx.probe.example asks for authentication: 530 5.7.0 Authentication required (a submission port, not a mail exchanger: check SMTP_PROBE_PORT)`,
    ],
  ])('says what %s means, not that the sender is blocked', async (_name, mailFrom, reason) => {
    smtp.script = { mailFrom, rcpt: { 'grace@probe.example': 'accept' } };
    await expect(lookup({ email: 'grace@probe.example' })).resolves.toMatchObject({
      outcome: 'unknown',
      items: [{ deliverability: 'unknown', reason }],
      detail: reason,
    });
  });

  // RFC 3207: a host that takes mail only over TLS is asked over TLS, on the same connection, when its EHLO
  // offers STARTTLS; a host that accepts plain text is asked in plain text, though it offers STARTTLS too.
  describe('a host that takes mail only over TLS (STARTTLS)', () => {
    const overTls = (...rcpts: (string | RegExp)[]) => [
      `EHLO ${HELO}`,
      `MAIL FROM:<${FROM}>`,
      'STARTTLS',
      `EHLO ${HELO}`,
      `MAIL FROM:<${FROM}>`,
      ...rcpts.map((r) => (typeof r === 'string' ? `RCPT TO:<${r}>` : expect.stringMatching(r))),
      'QUIT',
    ];
    const MADE_UP = /^RCPT TO:<dossier-[0-9a-f]{16}@probe\.example>$/;

    it('is asked over TLS after its 530 at MAIL FROM: a mailbox it accepts is deliverable', async () => {
      smtp.script = { starttls: 'required', rcpt: { 'grace@probe.example': 'accept' } };
      const answer = await lookup({ email: 'grace@probe.example' });
      expect(answer).toEqual({
        outcome: 'found',
        items: [
          expect.objectContaining({
            deliverability: 'deliverable',
            reason: 'mx.probe.example accepted the mailbox (250 Accepted)',
          }),
        ],
      });
      expect(await lastSession()).toEqual(overTls('grace@probe.example', MADE_UP));
    });

    it('is asked over TLS: a mailbox it refuses there (550 5.1.1) is undeliverable', async () => {
      smtp.script = { starttls: 'required' };
      const answer = await lookup({ email: 'ghost@probe.example' });
      expect(answer).toEqual({
        outcome: 'found',
        items: [
          expect.objectContaining({
            deliverability: 'undeliverable',
            reason: 'mx.probe.example refused the mailbox: 550 5.1.1 no such user here',
          }),
        ],
      });
      expect(await lastSession()).toEqual(overTls('ghost@probe.example'));
    });

    it('is asked over TLS after a 530 at RCPT TO, and says so when it still asks for TLS there', async () => {
      smtp.script = {
        rcpt: { 'grace@probe.example': { code: 530, message: '5.7.0 Must issue a STARTTLS command first' } },
      };
      const reason =
        'mx.probe.example takes mail only over TLS: 530 5.7.0 Must issue a STARTTLS command first, and asked for it again after STARTTLS, so it cannot be asked';
      await expect(lookup({ email: 'grace@probe.example' })).resolves.toMatchObject({
        outcome: 'unknown',
        items: [{ deliverability: 'unknown', reason }],
        detail: reason,
      });
      expect(await lastSession()).toEqual([
        `EHLO ${HELO}`,
        `MAIL FROM:<${FROM}>`,
        'RCPT TO:<grace@probe.example>',
        'STARTTLS',
        `EHLO ${HELO}`,
        `MAIL FROM:<${FROM}>`,
        'RCPT TO:<grace@probe.example>',
        'QUIT',
      ]);
    });

    it('is asked in plain text where plain text is accepted, though STARTTLS is offered', async () => {
      smtp.script = { starttls: 'offered', rcpt: { 'grace@probe.example': 'accept' } };
      await expect(lookup({ email: 'grace@probe.example' })).resolves.toMatchObject({
        outcome: 'found',
        items: [{ deliverability: 'deliverable' }],
      });
      expect(await lastSession()).toEqual([
        `EHLO ${HELO}`,
        `MAIL FROM:<${FROM}>`,
        'RCPT TO:<grace@probe.example>',
        expect.stringMatching(MADE_UP),
        'QUIT',
      ]);
    });

    it.each<[string, SmtpScript]>([
      [
        'MAIL FROM',
        { starttls: 'none', mailFrom: { code: 530, message: '5.7.0 Must issue a STARTTLS command first' } },
      ],
      [
        'RCPT TO',
        {
          starttls: 'none',
          rcpt: { 'grace@probe.example': { code: 530, message: '5.7.0 Must issue a STARTTLS command first' } },
        },
      ],
    ])('cannot be asked when it asks for TLS at %s but does not offer STARTTLS', async (_name, script) => {
      smtp.script = script;
      const reason =
        'mx.probe.example takes mail only over TLS: 530 5.7.0 Must issue a STARTTLS command first, but its EHLO reply offers no STARTTLS, so it cannot be asked';
      await expect(lookup({ email: 'grace@probe.example' })).resolves.toMatchObject({
        outcome: 'unknown',
        items: [{ deliverability: 'unknown', reason }],
        detail: reason,
      });
      expect((await lastSession()).filter((c) => c === 'STARTTLS')).toEqual([]);
    });

    // Opportunistic TLS (RFC 7435), as MTAs speak it to each other: an old TLS version beats not asking at all.
    it.each<['TLSv1' | 'TLSv1.1']>([['TLSv1'], ['TLSv1.1']])(
      'is asked over TLS when the host speaks only %s',
      async (tlsVersion) => {
        const old = await FakeSmtp.start(
          { starttls: 'required', rcpt: { 'grace@old-tls.example': 'accept' } },
          { host: '127.0.0.12', port: smtp.port, tlsVersion },
        );
        try {
          dns.set('old-tls.example', { mx: [[10, 'mx.old-tls.example']] });
          dns.set('mx.old-tls.example', { a: ['127.0.0.12'] });
          const answer = await lookup({ email: 'grace@old-tls.example' });
          expect(answer).toMatchObject({
            outcome: 'found',
            items: [
              { deliverability: 'deliverable', reason: 'mx.old-tls.example accepted the mailbox (250 Accepted)' },
            ],
          });
          expect(old.sessions[0]?.slice(0, 6)).toEqual([
            `EHLO ${HELO}`,
            `MAIL FROM:<${FROM}>`,
            'STARTTLS',
            `EHLO ${HELO}`,
            `MAIL FROM:<${FROM}>`,
            'RCPT TO:<grace@old-tls.example>',
          ]);
        } finally {
          await old.close();
        }
      },
    );

    it('cannot be asked when the TLS handshake fails, and says so', async () => {
      smtp.script = { starttls: 'broken', rcpt: { 'grace@probe.example': 'accept' } };
      const answer = await lookup({ email: 'grace@probe.example' });
      expect(answer).toMatchObject({ outcome: 'unknown', items: [{ deliverability: 'unknown' }] });
      expect(answer.items[0]?.reason).toMatch(
        /^mx\.probe\.example \(127\.0\.0\.1\): the TLS handshake failed \(.+\) after STARTTLS$/,
      );
      expect(answer).toMatchObject({ detail: answer.items[0]?.reason });
      expect(smtp.sessions.at(-1)).toEqual([`EHLO ${HELO}`, `MAIL FROM:<${FROM}>`, 'STARTTLS']);
    });
  });

  it('sends nothing but the envelope in any case', () => {
    expect(smtp.sessions.length).toBeGreaterThan(0);
    for (const commands of smtp.sessions) expect(commands.filter((c) => /^(DATA|BDAT)\b/i.test(c))).toEqual([]);
  });

  it('rejects with a timeout when the deadline passes during the probe', async () => {
    smtp.script = { greeting: 'hang' };
    const deadline = new AbortController();
    const pending = lookup({ email: 'grace@probe.example' }, {}, deadline.signal);
    await waitFor(
      async () => smtp.sessions.length,
      (n) => n > 0,
      { timeoutMs: 5000, what: 'the probe to connect' },
    );
    deadline.abort();
    await expect(pending).rejects.toMatchObject({ name: 'ProviderError', code: 'timeout' });
  });

  it('keeps what each host did when the deadline passes while a backup is being asked', async () => {
    await behindPrimary('slow-backup.example', BUSY, async () => {
      smtp.script = { greeting: 'hang' };
      const before = smtp.sessions.length;
      const deadline = new AbortController();
      const pending = lookup({ email: 'grace@slow-backup.example' }, {}, deadline.signal);
      await waitFor(
        async () => smtp.sessions.length,
        (n) => n > before,
        { timeoutMs: 5000, what: 'the probe to connect to the backup' },
      );
      deadline.abort();
      const error = await pending.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ name: 'ProviderError', code: 'timeout' });
      expect((error as Error).message).toBe(
        'smtp: the probe did not finish before the deadline, while asking mx2.slow-backup.example (127.0.0.1); ' +
          'before that: mx1.slow-backup.example (127.0.0.10) refused the session: 421 4.3.2 too busy, try later',
      );
    });
  });

  it('rejects with a timeout when the deadline has already passed', async () => {
    const passed = new AbortController();
    passed.abort();
    await expect(lookup({ email: 'grace@probe.example' }, {}, passed.signal)).rejects.toMatchObject({
      name: 'ProviderError',
      code: 'timeout',
    });
  });
});

describe('smtpProvider settings', () => {
  const FQDN = { SMTP_HELO_NAME: 'mail.example.org' };

  it('is off unless SMTP_PROBE=true, and off in the test harness', () => {
    expect(smtpProvider.isConfigured({})).toBe('off: the mailbox probe is opt-in (SMTP_PROBE=true)');
    expect(smtpProvider.isConfigured(LOOPBACK_PROVIDER_ENV)).toBe('off: the mailbox probe is opt-in (SMTP_PROBE=true)');
    expect(smtpProvider.isConfigured({ SMTP_PROBE: 'true' })).toBe(true);
  });

  it('defaults to port 25, a 10 s budget, the host name, verify@<host name> and public addresses only', () => {
    expect(probeOptionsOf({}, 'mail.example.org')).toEqual({
      port: 25,
      timeoutMs: 10_000,
      heloName: 'mail.example.org',
      mailFrom: 'verify@mail.example.org',
      allowPrivate: false,
    });
    expect(probeOptionsOf({ SMTP_PROBE_ALLOW_PRIVATE: 'true' }, 'mail.example.org')).toMatchObject({
      allowPrivate: true,
    });
  });

  it("needs SMTP_HELO_NAME where this host's name is not fully qualified", () => {
    expect(() => probeOptionsOf({}, 'vm')).toThrow(
      `SMTP_HELO_NAME must be set: this host's name "vm" is not a fully qualified domain name`,
    );
    expect(probeOptionsOf(FQDN, 'vm')).toMatchObject({ heloName: 'mail.example.org' });
  });

  it('checks nothing but SMTP_PROBE itself while the probe is off', () => {
    expect(() => smtpProvider.validateSettings?.({ SMTP_PROBE_PORT: 'x', DNS_SERVERS: 'dns.example' })).not.toThrow();
    expect(() => smtpProvider.validateSettings?.({ SMTP_PROBE: 'true', ...FQDN })).not.toThrow();
  });

  it.each([
    [{ SMTP_PROBE: 'yes' }, 'SMTP_PROBE must be true or false, got "yes"'],
    [{ SMTP_PROBE: 'true', ...FQDN, SMTP_PROBE_PORT: '0' }, 'SMTP_PROBE_PORT must be a port number, got "0"'],
    [{ SMTP_PROBE: 'true', ...FQDN, SMTP_PROBE_PORT: '25x' }, 'SMTP_PROBE_PORT must be a port number, got "25x"'],
    [{ SMTP_PROBE: 'true', ...FQDN, SMTP_TIMEOUT_MS: '10' }, 'SMTP_TIMEOUT_MS must be 100 to 120000 (ms), got "10"'],
    [{ SMTP_PROBE: 'true', SMTP_HELO_NAME: 'bad name' }, 'SMTP_HELO_NAME must be a host name, got "bad name"'],
    [
      { SMTP_PROBE: 'true', ...FQDN, SMTP_PROBE_ALLOW_PRIVATE: 'yes' },
      'SMTP_PROBE_ALLOW_PRIVATE must be true or false, got "yes"',
    ],
    [
      { SMTP_PROBE: 'true', ...FQDN, SMTP_MAIL_FROM: 'nobody' },
      'SMTP_MAIL_FROM must be a plain ASCII e-mail address, got "nobody"',
    ],
    [
      { SMTP_PROBE: 'true', ...FQDN, DNS_SERVERS: 'dns.example' },
      'DNS_SERVERS: expected IP addresses as host:port,…, got "dns.example"',
    ],
  ])('refuses, at boot, %j', (input, message) => {
    expect(() => smtpProvider.validateSettings?.(input)).toThrow(message);
  });

  it('does not apply to an address whose syntax is invalid', () => {
    expect(smtpProvider.appliesTo?.({ email: 'not an address' })).toBe(false);
    expect(smtpProvider.appliesTo?.({ email: 'grace@probe.example' })).toBe(true);
  });
});
