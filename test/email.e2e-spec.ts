import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  API_RESULT_FIELDS,
  Api,
  AppProcess,
  DIST,
  FakeDns,
  FakeSmtp,
  FakeUpstream,
  REPO_ROOT,
  Stack,
  ledgerState,
  type FakeAnswer,
} from '@dossier/testing';

type Source = { provider: string; outcome: string; took_ms: number; detail?: string };
type Envelope = {
  status: string;
  search_id: string;
  results: Record<string, unknown>[];
  credits_remaining: number;
  sources: Source[];
};

const EMAIL_FIELDS = [...API_RESULT_FIELDS.EmailResult].sort();

/** The address whose Gravatar profile the fake serves (the profile in the gravatar provider's fixtures). */
const WITH_PROFILE = 'Grace.Hopper@acme.example';
const gravatarFixture = (file: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'libs/providers/src/gravatar/fixtures', file), 'utf8')) as FakeAnswer;
const gravatarProfile = gravatarFixture('ok/found.json');
/** Gravatar's own 404 (its error body): no profile for that address. */
const gravatarNoProfile = gravatarFixture('ok/not-found.json');

describe('e-mail verification over HTTP (fake DNS, fake SMTP server, fake Gravatar on loopback)', () => {
  let dns: FakeDns;
  let smtp: FakeSmtp;
  /** A mail host that takes mail only over TLS (STARTTLS required), on another loopback address, same port. */
  let tlsOnly: FakeSmtp;
  let gravatar: FakeUpstream;
  let stack: Stack;
  let api: Api;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    [dns, smtp, gravatar] = await Promise.all([
      FakeDns.start({
        'acme.example': { mx: [[10, 'mx.acme.example']] },
        'mx.acme.example': { a: ['127.0.0.1'] },
        'catchall.example': { mx: [[10, 'mx.catchall.example']] },
        'mx.catchall.example': { a: ['127.0.0.1'] },
        'mailinator.com': { mx: [[10, 'mx.acme.example']] },
        'null-mx.example': { mx: [[0, '.']] },
        'broken.example': 'servfail',
        // Nothing listens on 127.0.0.3: a refused (or blocked) port 25.
        'blocked.example': { mx: [[10, 'mx.blocked.example']] },
        'mx.blocked.example': { a: ['127.0.0.3'] },
        'tls-only.example': { mx: [[10, 'mx.tls-only.example']] },
        'mx.tls-only.example': { a: ['127.0.0.10'] },
      }),
      FakeSmtp.start({
        rcpt: {
          'grace.hopper@acme.example': 'accept',
          'info@acme.example': 'accept',
          'temp@mailinator.com': 'accept',
          'full@acme.example': { code: 552, message: '5.2.2 mailbox full' },
          'later@acme.example': { code: 451, message: '4.7.1 greylisted, try again later' },
          'off@acme.example': { code: 550, message: '5.2.1 The email account that you tried to reach is disabled' },
          '@catchall.example': 'accept',
        },
      }),
      FakeUpstream.start(),
    ]);
    tlsOnly = await FakeSmtp.start(
      { starttls: 'required', rcpt: { 'grace@tls-only.example': 'accept' } },
      { host: '127.0.0.10', port: smtp.port },
    );
    const profileHash = createHash('sha256').update(WITH_PROFILE.toLowerCase()).digest('hex');
    gravatar.reply((req) => (req.url === `/v3/profiles/${profileHash}` ? gravatarProfile : gravatarNoProfile));
    stack = await Stack.start({
      label: 'email',
      env: {
        SIGNUP_CREDITS: '1000',
        DNS_SERVERS: dns.server,
        SMTP_PROBE: 'true',
        SMTP_PROBE_PORT: String(smtp.port),
        SMTP_HELO_NAME: 'probe.dossier.test',
        SMTP_MAIL_FROM: 'verify@dossier.test',
        // The fake SMTP server is on loopback, which the probe refuses by default.
        SMTP_PROBE_ALLOW_PRIVATE: 'true',
        GRAVATAR_ENABLED: 'true',
        GRAVATAR_BASE_URL: gravatar.url,
      },
    });
    api = new Api(stack.baseUrl);
    ({ key, accountId } = await api.register());
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([dns?.close(), smtp?.close(), tlsOnly?.close(), gravatar?.close()]);
  });

  const verify = (email: string) => api.post<Envelope>('/v1/verify/email', { email }, { key });
  const outcomes = (res: { body: Envelope }) =>
    Object.fromEntries(res.body.sources.map((s) => [s.provider, s.outcome]));

  it('answers a deliverable address with exactly one item carrying every field of the contract, and charges 1', async () => {
    const before = await ledgerState(accountId);
    const res = await verify(WITH_PROFILE);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    expect(res.body.results).toHaveLength(1);
    const item = res.body.results[0]!;
    expect(Object.keys(item).sort()).toEqual(EMAIL_FIELDS);
    expect(item).toEqual({
      email: WITH_PROFILE,
      normalized: WITH_PROFILE,
      syntax_valid: true,
      domain: 'acme.example',
      mx_records: ['mx.acme.example'],
      deliverability: 'deliverable',
      reason: 'mx.acme.example accepted the mailbox (250 Accepted)',
      disposable: false,
      free_provider: false,
      role_account: false,
      did_you_mean: null,
      accounts: [
        { service: 'gravatar', username: 'gracehopper', url: 'https://gravatar.com/gracehopper' },
        { service: 'github', username: 'ghopper', url: 'https://github.com/ghopper' },
        { service: 'tumblr', username: 'amazinggrace', url: 'https://amazinggrace.tumblr.com' },
      ],
      sources: expect.arrayContaining(['email', 'smtp', 'gravatar']),
      // ADR 0057: the probe's facts (a made-up address refused: no catch-all), the sub-status and its score.
      is_catch_all: false,
      has_full_inbox: false,
      is_disabled: false,
      can_connect_smtp: true,
      score: 95,
      sub_status: 'accepted',
    });
    expect((item['sources'] as string[]).length).toBe(3);
    // Hunter (licensed) is listed as skipped until its key is set.
    expect(res.body.sources.map((s) => s.provider)).toEqual(['email', 'smtp', 'gravatar', 'hunter']);
    expect(outcomes(res)).toEqual({ email: 'found', smtp: 'found', gravatar: 'found', hunter: 'skipped' });
    expect(res.headers.get('x-credits-spent')).toBe('1');
    expect(res.body.credits_remaining).toBe(before.balance - 1);
    const after = await ledgerState(accountId);
    expect(after).toMatchObject({ balance: before.balance - 1, captures: before.captures + 1, pending: 0 });
    expect(after.ledger_sum).toBe(after.balance);
  });

  it('answers POST /v1/search with type email the same way', async () => {
    const res = await api.post<Envelope>('/v1/search', { query: 'grace.hopper@ACME.example', type: 'email' }, { key });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
    expect(Object.keys(res.body.results[0]!).sort()).toEqual(EMAIL_FIELDS);
    expect(res.body.results[0]).toMatchObject({
      normalized: 'grace.hopper@acme.example',
      deliverability: 'deliverable',
      mx_records: ['mx.acme.example'],
    });
    // The same mailbox in other case: Gravatar hashes the lower-cased address, so the profile is found too.
    expect(outcomes(res)).toEqual({ email: 'found', smtp: 'found', gravatar: 'found', hunter: 'skipped' });
    expect(res.body.results[0]!['accounts']).toHaveLength(3);
  });

  it.each([
    // address, deliverability, part of the reason, outcome per source (a provider that does not apply — every
    // one but `email` for a malformed address — is not listed; Hunter is skipped: no key)
    ['grace hopper@acme.example', 'undeliverable', 'the address has a character', { email: 'found' }],
    [
      'grace@no-mx.example',
      'undeliverable',
      'no-mx.example does not exist (NXDOMAIN)',
      { email: 'found', smtp: 'not_found', gravatar: 'not_found', hunter: 'skipped' },
    ],
    [
      'grace@null-mx.example',
      'undeliverable',
      'accepts no mail (null MX, RFC 7505)',
      { email: 'found', smtp: 'not_found', gravatar: 'not_found', hunter: 'skipped' },
    ],
    [
      'nobody@acme.example',
      'undeliverable',
      'mx.acme.example refused the mailbox: 550 5.1.1',
      { email: 'found', smtp: 'found', gravatar: 'not_found', hunter: 'skipped' },
    ],
    [
      'temp@mailinator.com',
      'risky',
      'mailinator.com hands out disposable addresses',
      { email: 'found', smtp: 'found', gravatar: 'not_found', hunter: 'skipped' },
    ],
    [
      'info@acme.example',
      'risky',
      '"info" is a role address',
      { email: 'found', smtp: 'found', gravatar: 'not_found', hunter: 'skipped' },
    ],
    [
      'anyone@catchall.example',
      'risky',
      'accepts mail for any address at catchall.example (catch-all',
      { email: 'found', smtp: 'found', gravatar: 'not_found', hunter: 'skipped' },
    ],
    [
      'full@acme.example',
      'risky',
      'the mailbox is full: 552 5.2.2 mailbox full',
      { email: 'found', smtp: 'found', gravatar: 'not_found', hunter: 'skipped' },
    ],
    [
      'grace@tls-only.example',
      'deliverable',
      'mx.tls-only.example accepted the mailbox (250 Accepted)',
      { email: 'found', smtp: 'found', gravatar: 'not_found', hunter: 'skipped' },
    ],
    [
      'ghost@tls-only.example',
      'undeliverable',
      'mx.tls-only.example refused the mailbox: 550 5.1.1',
      { email: 'found', smtp: 'found', gravatar: 'not_found', hunter: 'skipped' },
    ],
    [
      'grace@broken.example',
      'unknown',
      'DNS could not tell: MX of broken.example: the DNS server failed (SERVFAIL)',
      { email: 'unknown', smtp: 'unknown', gravatar: 'not_found', hunter: 'skipped' },
    ],
    [
      'later@acme.example',
      'unknown',
      'mx.acme.example deferred the answer: 451 4.7.1 greylisted',
      { email: 'found', smtp: 'unknown', gravatar: 'not_found', hunter: 'skipped' },
    ],
    [
      'grace@blocked.example',
      'unknown',
      `could not connect to port`,
      { email: 'found', smtp: 'unknown', gravatar: 'not_found', hunter: 'skipped' },
    ],
  ])('%s is %s: %s', async (address, deliverability, reason, sources) => {
    const res = await verify(address);
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
    const item = res.body.results[0]!;
    expect(Object.keys(item).sort()).toEqual(EMAIL_FIELDS);
    expect(item['deliverability']).toBe(deliverability);
    expect(item['reason']).toContain(reason);
    expect(outcomes(res)).toEqual(sources);
    // Every source that could not tell says why.
    for (const s of res.body.sources) if (s.outcome === 'unknown') expect(s.detail).toEqual(expect.any(String));
  });

  it.each([
    // address, sub_status, score, is_catch_all, has_full_inbox, is_disabled, can_connect_smtp (ADR 0057)
    ['grace hopper@acme.example', 'invalid_syntax', 0, null, null, null, null],
    ['grace@null-mx.example', 'no_mail_host', 0, null, null, null, null],
    ['nobody@acme.example', 'mailbox_not_found', 0, null, false, false, true],
    ['off@acme.example', 'mailbox_disabled', 0, null, false, true, true],
    ['temp@mailinator.com', 'disposable', 20, false, false, false, true],
    ['full@acme.example', 'mailbox_full', 30, null, true, false, true],
    ['anyone@catchall.example', 'catch_all', 50, true, false, false, true],
    ['info@acme.example', 'role_account', 70, false, false, false, true],
    ['grace@broken.example', 'dns_failure', 10, null, null, null, null],
    ['later@acme.example', 'inconclusive', 40, null, null, null, true],
    ['grace@blocked.example', 'smtp_unreachable', 30, null, null, null, false],
  ])('%s: sub_status %s, score %i, and the probe facts', async (address, sub_status, score, ...facts) => {
    const item = (await verify(address)).body.results[0]!;
    const [is_catch_all, has_full_inbox, is_disabled, can_connect_smtp] = facts;
    expect(item).toMatchObject({ sub_status, score, is_catch_all, has_full_inbox, is_disabled, can_connect_smtp });
  });

  it('says honestly that port 25 may be blocked when the mail host cannot be connected to', async () => {
    const res = await verify('grace@blocked.example');
    const reason = `could not connect to port ${smtp.port} of mx.blocked.example (127.0.0.3): connection refused. Outbound port ${smtp.port} is blocked on many networks (most cloud providers and home ISPs); the probe needs it open`;
    expect(res.body.results[0]!['reason']).toBe(reason);
    expect(res.body.sources.find((s) => s.provider === 'smtp')).toMatchObject({ outcome: 'unknown', detail: reason });
  });

  it('charges nothing when no source found anything (DNS failing: email and smtp unknown)', async () => {
    const before = await ledgerState(accountId);
    const res = await verify('grace@broken.example');
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
    expect(res.body.sources.filter((s) => s.outcome === 'found')).toEqual([]);
    expect(res.headers.get('x-credits-spent')).toBe('0');
    expect(res.body.credits_remaining).toBe(before.balance);
    const after = await ledgerState(accountId);
    expect(after).toMatchObject({
      balance: before.balance,
      reserves: before.reserves + 1,
      releases: before.releases + 1,
      captures: before.captures,
      pending: 0,
    });
    expect(after.ledger_sum).toBe(after.balance);
  });

  it('charges 1 when one source found something though the mailbox is unknown (greylisted)', async () => {
    const before = await ledgerState(accountId);
    const res = await verify('later@acme.example');
    expect(res.headers.get('x-credits-spent')).toBe('1');
    expect((await ledgerState(accountId)).balance).toBe(before.balance - 1);
  });

  it.each([
    [{}, 'email'],
    [{ email: 42 }, 'email'],
    [{ email: '   ' }, 'email'],
    [{ email: 'a@b.example', extra: true }, 'extra'],
  ])('refuses %j with 400 naming the field, and charges nothing', async (body, field) => {
    const before = await ledgerState(accountId);
    const res = await api.post<{ error: { code: string; details: { field: string }[] } }>('/v1/verify/email', body, {
      key,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details.map((d) => d.field)).toContain(field);
    expect(await ledgerState(accountId)).toEqual(before);
  });

  it.each([
    [{ SMTP_PROBE_PORT: 'smtp' }, 'SMTP_PROBE_PORT must be a port number, got "smtp"'],
    [{ SMTP_PROBE_ALLOW_PRIVATE: 'yes' }, 'SMTP_PROBE_ALLOW_PRIVATE must be true or false, got "yes"'],
    [{ DNS_SERVERS: 'resolver.example' }, 'DNS_SERVERS: expected IP addresses as host:port,…, got "resolver.example"'],
  ])('refuses to start a worker with %j, naming the variable', async (env, message) => {
    const worker = AppProcess.start('worker-bad-settings', DIST.worker, { ...stack.env, ...env });
    expect(await worker.exited).toBe(1);
    expect(worker.logs).toContain(message);
  });

  it('asked the host that takes mail only over TLS over TLS, on one connection per lookup', () => {
    expect(tlsOnly.sessions).toHaveLength(2);
    for (const commands of tlsOnly.sessions) {
      expect(commands.slice(0, 5)).toEqual([
        'EHLO probe.dossier.test',
        'MAIL FROM:<verify@dossier.test>',
        'STARTTLS',
        'EHLO probe.dossier.test',
        'MAIL FROM:<verify@dossier.test>',
      ]);
    }
  });

  it('never sent a message: every SMTP session stopped at the envelope', () => {
    expect(smtp.sessions.length).toBeGreaterThan(0);
    for (const commands of [...smtp.sessions, ...tlsOnly.sessions]) {
      expect(commands.filter((c) => /^(DATA|BDAT)\b/i.test(c))).toEqual([]);
    }
  });
});
