import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import type { EmailResultItem, PersonResultItem } from '@dossier/contracts';
import {
  PROVIDERS,
  ProviderError,
  createUsernameProvider,
  type Provider,
  type ProviderAnswer,
} from '@dossier/providers';
import { FakeDns, FakeSmtp, FakeUpstream, personItem, waitFor } from '@dossier/testing';
import { FanOut, narrowed } from './fan-out';
import { ProviderMetrics } from './provider-metrics';
import { UpstreamGuards } from './upstream-guards';

function person(id: string, score: number): PersonResultItem {
  return personItem({
    id,
    full_name: 'Jane Doe',
    first_name: 'Jane',
    last_name: 'Doe',
    match_score: score,
    sources: [id],
  });
}

function provider<K extends 'person' | 'email' = 'person'>(
  id: string,
  lookup: Provider<K>['lookup'],
  opts: Partial<Pick<Provider<K>, 'deadline' | 'precedence' | 'appliesTo' | 'kinds'>> & {
    configured?: true | string;
    timeoutMs?: number;
  } = {},
): Provider<K> {
  return {
    id,
    kinds: opts.kinds ?? (['person'] as unknown as K[]),
    configKeys: [],
    defaultTimeoutMs: opts.timeoutMs ?? 1000,
    transport: 'none',
    isConfigured: () => opts.configured ?? true,
    lookup,
    ...(opts.deadline ? { deadline: opts.deadline } : {}),
    ...(opts.precedence !== undefined ? { precedence: opts.precedence } : {}),
    ...(opts.appliesTo ? { appliesTo: opts.appliesTo } : {}),
  };
}

const found = (...items: PersonResultItem[]): Promise<ProviderAnswer<'person'>> =>
  Promise.resolve({ outcome: 'found', items });

/** The guards without Redis: every token granted (the shared limit is tested against Redis). */
const fanOut = (settings: Record<string, string> = {}) => {
  const registry = new Registry();
  const metrics = new ProviderMetrics(registry);
  const bucket = {
    take: () => Promise.resolve({ allowed: true, vetoed: false, remaining: 1, retryMs: 0, resetMs: 0 }),
    veto: () => Promise.resolve(),
  };
  const guards = new UpstreamGuards(
    bucket,
    'spec',
    { breakerThreshold: 5, halfOpenAfterMs: 1000, maxAttempts: 1 },
    metrics,
  );
  const unexpected: { provider: string; error: unknown }[] = [];
  const fan = new FanOut(guards, metrics, settings, {
    unexpected: (provider, error) => unexpected.push({ provider, error }),
  });
  return { fan, registry, unexpected };
};

describe('FanOut', () => {
  it('runs providers in parallel, merges results best first and reports every outcome with a reason', async () => {
    const { fan } = fanOut();
    const result = await fan.run(
      'person',
      { name: 'Jane Doe' },
      [
        provider('low', () => found(person('low', 0.2))),
        provider('high', () => found(person('high', 0.9), person('mid', 0.5))),
        provider('empty', () => Promise.resolve({ outcome: 'not_found', items: [] })),
        provider('off', () => found(person('off', 1)), { configured: 'not configured: set OFF_API_KEY' }),
        provider('limited', () => Promise.reject(new ProviderError('rate_limited', 'limited: rate limited (429)'))),
        provider('walled', () => Promise.reject(new ProviderError('blocked', 'walled: a bot challenge (403)'))),
        provider('broken', () => Promise.reject(new Error('socket hang up at 10.0.0.7 with key sk_live_x'))),
      ],
      null,
    );
    expect(result.items.map((i) => i.id)).toEqual(['high', 'mid', 'low']);
    expect(result.sources).toEqual([
      { provider: 'low', outcome: 'found', took_ms: expect.any(Number) },
      { provider: 'high', outcome: 'found', took_ms: expect.any(Number) },
      { provider: 'empty', outcome: 'not_found', took_ms: expect.any(Number) },
      { provider: 'off', outcome: 'skipped', took_ms: 0, detail: 'not configured: set OFF_API_KEY' },
      {
        provider: 'limited',
        outcome: 'rate_limited',
        took_ms: expect.any(Number),
        detail: 'limited: rate limited (429)',
      },
      { provider: 'walled', outcome: 'blocked', took_ms: expect.any(Number), detail: 'walled: a bot challenge (403)' },
      // An unexpected error is not passed on: it may say anything.
      { provider: 'broken', outcome: 'error', took_ms: expect.any(Number), detail: 'the provider failed unexpectedly' },
    ]);
    expect(result.charge).toBe(true);
  });

  it('gives each provider its own timeout, even one that ignores its signal', async () => {
    const { fan } = fanOut();
    const started = Date.now();
    const result = await fan.run(
      'person',
      { name: 'x' },
      [
        provider('slow', () => new Promise(() => undefined), { timeoutMs: 50 }),
        provider('fast', () => found(person('fast', 0.5))),
      ],
      null,
    );
    expect(Date.now() - started).toBeLessThan(4000);
    expect(result.sources.find((s) => s.provider === 'slow')).toMatchObject({
      outcome: 'timeout',
      detail: 'slow: no answer before the deadline',
    });
    expect(result.items.map((i) => i.id)).toEqual(['fast']);
  });

  it('reports the timeout a provider gives when its deadline comes, saying how far it got, over its own', async () => {
    const { fan } = fanOut();
    const heeds = (_k: 'person', _i: unknown, ctx: { signal: AbortSignal }) =>
      new Promise<ProviderAnswer<'person'>>((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () =>
          reject(new ProviderError('timeout', 'heeds: cut off while asking mx2; mx1 refused the session')),
        );
      });
    const result = await fan.run('person', { name: 'x' }, [provider('heeds', heeds, { timeoutMs: 50 })], null);
    expect(result.sources).toEqual([
      {
        provider: 'heeds',
        outcome: 'timeout',
        took_ms: expect.any(Number),
        detail: 'heeds: cut off while asking mx2; mx1 refused the session',
      },
    ]);
  });

  it("ends calls at the request's deadline, except a provider whose check goes on (deadline: 'own')", async () => {
    const { fan } = fanOut();
    const hang = () => new Promise<ProviderAnswer<'person'>>(() => undefined);
    const late = (id: string) => (_k: 'person', _i: unknown, ctx: { signal: AbortSignal }) =>
      new Promise<ProviderAnswer<'person'>>((resolve) => {
        const timer = setTimeout(() => resolve({ outcome: 'found', items: [person(id, 0.5)] }), 400);
        ctx.signal.addEventListener('abort', () => clearTimeout(timer));
      });
    const result = await fan.run(
      'person',
      { name: 'x' },
      [
        provider('cut', hang, { timeoutMs: 10_000 }),
        provider('goes-on', late('goes-on'), { timeoutMs: 5000, deadline: 'own' }),
      ],
      Date.now() + 300,
    );
    expect(result.sources.find((s) => s.provider === 'cut')?.outcome).toBe('timeout');
    expect(result.sources.find((s) => s.provider === 'goes-on')?.outcome).toBe('found');
  });

  it("keeps calling an upstream whose calls the request's wait cut short: our time ran out, not its", async () => {
    const { fan, registry } = fanOut(); // the breaker opens after 5 consecutive failures
    let calls = 0;
    const hang = () => (calls++, new Promise<ProviderAnswer<'person'>>(() => undefined));
    for (let i = 0; i < 7; i++) {
      const result = await fan.run(
        'person',
        { name: 'x' },
        [provider('gleif-like', hang, { timeoutMs: 8000 })],
        Date.now() + 260,
      );
      expect(result.sources).toEqual([
        expect.objectContaining({
          provider: 'gleif-like',
          outcome: 'timeout',
          detail: expect.stringMatching(/not answered within the \d+ ms the request's wait left it/),
        }),
      ]);
    }
    expect(calls).toBe(7);
    expect(await registry.metrics()).not.toContain('dossier_provider_breaker_state{provider="gleif-like"} 2');
  });

  it('gives every provider its own timeout when the job is taken after its deadline (its caller has a 202 already)', async () => {
    const { fan } = fanOut();
    const late = (_k: 'person', _i: unknown, ctx: { signal: AbortSignal }) =>
      new Promise<ProviderAnswer<'person'>>((resolve) => {
        // past the 250 ms a call gets at least, well within its own 5 s
        const timer = setTimeout(() => resolve({ outcome: 'found', items: [person('late', 0.5)] }), 600);
        ctx.signal.addEventListener('abort', () => clearTimeout(timer));
      });
    const result = await fan.run(
      'person',
      { name: 'x' },
      [provider('late', late, { timeoutMs: 5000 })],
      Date.now() - 1,
    );
    expect(result.sources).toEqual([expect.objectContaining({ provider: 'late', outcome: 'found' })]);
    expect(result.charge).toBe(true);
  });

  it("ends a username check within the request's wait (ADR 0049), each site's report kept: what it found, and the rest timeout", async () => {
    const fake = await FakeUpstream.start();
    const dir = mkdtempSync(join(tmpdir(), 'dossier-fan-out-'));
    try {
      fake.reply((req) => (req.url.startsWith('/hub/') ? { status: 200, body: '<h1>ghopper</h1>' } : { hang: true }));
      const file = join(dir, 'sites.json');
      const site = (path: string) => ({ url: `${fake.url}/${path}/{}`, urlMain: fake.url, errorType: 'status_code' });
      writeFileSync(file, JSON.stringify({ GitHub: site('hub'), Slow: site('slow') }));
      const { fan } = fanOut({ USERNAME_SITES_FILE: file, USERNAME_TIMEOUT_MS: '60000' });
      // Its own timeout (60 s) and the site's do not end it: the caller's wait does, a little before the guards would.
      const result = await fan.run('person', { username: 'ghopper' }, [createUsernameProvider()], Date.now() + 600);
      expect(result.sources).toEqual([
        { provider: 'site:GitHub', outcome: 'found', took_ms: expect.any(Number) },
        {
          provider: 'site:Slow',
          outcome: 'timeout',
          took_ms: expect.any(Number),
          detail: 'site:Slow: no answer before the deadline',
        },
      ]);
      expect(result.items.map((i) => i.accounts.map((a) => a.service))).toEqual([['GitHub']]);
      expect(result.charge).toBe(true);
    } finally {
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("publishes a running lookup's progress as its answer will be (merged, the other providers' parts with it), never after its answer", async () => {
    const fake = await FakeUpstream.start();
    const dir = mkdtempSync(join(tmpdir(), 'dossier-fan-out-'));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      fake.reply((req) =>
        req.url.startsWith('/hub/') ? { status: 200, body: '<h1>ghopper</h1>' } : { status: 404, after: held },
      );
      const file = join(dir, 'sites.json');
      const site = (path: string) => ({ url: `${fake.url}/${path}/{}`, urlMain: fake.url, errorType: 'status_code' });
      writeFileSync(file, JSON.stringify({ GitHub: site('hub'), Slow: site('slow') }));
      const { fan } = fanOut({ USERNAME_SITES_FILE: file });
      const partials: { items: PersonResultItem[]; sources: unknown[]; pending: number }[] = [];
      let written = 0;
      const answer = fan.run(
        'person',
        { username: 'ghopper' },
        [
          createUsernameProvider(),
          provider('local', () => Promise.resolve({ outcome: 'not_found', items: [] })),
          provider('silent', () => held.then(() => ({ outcome: 'not_found' as const, items: [] })), {
            timeoutMs: 60_000,
          }),
        ],
        null,
        {
          progress: {
            everyMs: 20,
            // A slow write: the answer waits for the one under way.
            publish: async (partial) => {
              partials.push(partial);
              await new Promise((resolve) => setTimeout(resolve, 50));
              written++;
            },
          },
        },
      );
      await waitFor(
        () => Promise.resolve(partials.length),
        (n) => n > 0,
        { timeoutMs: 5000, what: 'a progress published' },
      );
      // GitHub answered, Slow has not; `local` is done, `silent` still runs and reports nothing: two sources pending.
      expect(partials[0]).toEqual(
        expect.objectContaining({
          items: [
            expect.objectContaining({
              usernames: ['ghopper'],
              accounts: [expect.objectContaining({ service: 'GitHub' })],
            }),
          ],
          sources: [
            { provider: 'site:GitHub', outcome: 'found', took_ms: expect.any(Number) },
            { provider: 'local', outcome: 'not_found', took_ms: expect.any(Number) },
          ],
          pending: 2,
        }),
      );
      release();
      const result = await answer;
      expect(written).toBe(partials.length);
      expect(result.sources.map((s) => [s.provider, s.outcome])).toEqual([
        ['site:GitHub', 'found'],
        ['site:Slow', 'not_found'],
        ['local', 'not_found'],
        ['silent', 'not_found'],
      ]);
    } finally {
      release();
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 10_000);

  it('charges only when a source found something: nothing found, or nothing known, is free', async () => {
    const { fan } = fanOut();
    // `unknown`: it answered but could not tell; `timeout`: an upstream of its own did not answer in time.
    // Either keeps its reason and what is known (the item), and neither is charged.
    for (const [outcome, detail] of [
      ['unknown', 'greylisted'],
      ['timeout', 'mx1: stopped answering'],
    ] as const) {
      const unsure = provider('unsure', () => Promise.resolve({ outcome, items: [person('u', 0.1)], detail }));
      const none = await fan.run('person', { name: 'x' }, [unsure], null);
      expect(none.items).toHaveLength(1);
      expect(none.sources).toEqual([{ provider: 'unsure', outcome, took_ms: expect.any(Number), detail }]);
      expect(none.charge).toBe(false);
    }
    const miss = await fan.run(
      'person',
      { name: 'x' },
      [provider('miss', () => Promise.resolve({ outcome: 'not_found', items: [] }))],
      null,
    );
    expect(miss.charge).toBe(false);
  });

  it('reports not_found, free, a source whose finding the merge left out (a profile with no name and no named subject)', async () => {
    const { fan } = fanOut();
    const nameless = {
      ...person('vendor', 0.9),
      full_name: null,
      first_name: null,
      last_name: null,
      matched_on: ['email'],
    };
    const result = await fan.run(
      'person',
      { email: 'x@example.com' },
      [provider('vendor', () => found(nameless))],
      null,
    );
    expect(result).toEqual({
      items: [],
      sources: [{ provider: 'vendor', outcome: 'not_found', took_ms: expect.any(Number) }],
      charge: false,
    });
  });

  it('lists only the providers that apply to the input, and a provider that checks several upstreams by its reports', async () => {
    const { fan } = fanOut();
    const result = await fan.run(
      'person',
      { name: 'x' },
      [
        provider('needs-username', () => found(person('u', 1)), { appliesTo: (input) => 'username' in input }),
        provider('sites', () =>
          Promise.resolve({
            outcome: 'found',
            items: [person('sites', 0.5)],
            reports: [
              { provider: 'site:GitHub', outcome: 'found', took_ms: 12 },
              { provider: 'site:Example', outcome: 'blocked', took_ms: 30, detail: 'a bot challenge (403)' },
            ],
          }),
        ),
      ],
      null,
    );
    expect(result.sources.map((s) => s.provider)).toEqual(['site:GitHub', 'site:Example']);
  });

  it('keeps the other providers when one throws from isConfigured or appliesTo, or answers items off the contract', async () => {
    const { fan } = fanOut();
    const boom = (): never => {
      throw new TypeError("Cannot read properties of undefined (reading 'trim')");
    };
    const result = await fan.run(
      'person',
      { name: 'Jane Doe' },
      [
        provider('good', () => found(person('good', 0.9))),
        { ...provider('bad-config', () => found(person('bad-config', 1))), isConfigured: boom },
        provider('bad-applies', () => found(person('bad-applies', 1)), { appliesTo: boom }),
        provider('bad-item', () =>
          Promise.resolve({ outcome: 'found', items: [{ ...person('bad-item', 1), emails: undefined }] } as never),
        ),
        provider('bad-items', () => Promise.resolve({ outcome: 'found', items: 'none' } as never)),
      ],
      null,
    );
    expect(result.items.map((i) => i.id)).toEqual(['good']);
    expect(result.charge).toBe(true);
    const failed = { outcome: 'error', took_ms: expect.any(Number), detail: 'the provider failed unexpectedly' };
    expect(result.sources).toEqual([
      { provider: 'good', outcome: 'found', took_ms: expect.any(Number) },
      { provider: 'bad-config', ...failed },
      { provider: 'bad-applies', ...failed },
      { provider: 'bad-item', ...failed },
      { provider: 'bad-items', ...failed },
    ]);
  });

  it("hands an unexpected failure's own error to the operator's log, while the answer says only that it failed", async () => {
    const { fan, unexpected } = fanOut();
    const bug = new TypeError("Cannot read properties of undefined (reading 'trim')");
    const result = await fan.run(
      'person',
      { name: 'Jane Doe' },
      [
        provider('thrower', () => Promise.reject(bug)),
        provider('off-contract', () =>
          Promise.resolve({ outcome: 'found', items: [{ ...person('off', 1), emails: undefined }] } as never),
        ),
        provider('refused', () =>
          Promise.reject(new ProviderError('unrecoverable', 'refused: credentials refused (401)')),
        ),
        provider('good', () => found(person('good', 0.9))),
      ],
      null,
    );
    expect(result.sources.filter((s) => s.outcome === 'error').map((s) => s.detail)).toEqual([
      'the provider failed unexpectedly',
      'the provider failed unexpectedly',
      'refused: credentials refused (401)',
    ]);
    // A ProviderError is an expected failure, its detail already says why: only the other two are logged.
    expect(unexpected.map((u) => u.provider)).toEqual(['thrower', 'off-contract']);
    expect(unexpected[0]!.error).toBe(bug);
    expect(String(unexpected[1]!.error)).toMatch(/off-contract: items off the result contract: .*emails/);
  });

  it('passes the settings and a live signal to providers', async () => {
    const { fan } = fanOut({ SPY_API_KEY: 'k' });
    let seen: { settings: unknown; aborted: boolean } | undefined;
    await fan.run(
      'person',
      { name: 'x' },
      [
        provider('spy', (_kind, _input, ctx) => {
          seen = { settings: ctx.settings, aborted: ctx.signal.aborted };
          return Promise.resolve({ outcome: 'not_found', items: [] });
        }),
      ],
      null,
    );
    expect(seen).toEqual({ settings: { SPY_API_KEY: 'k' }, aborted: false });
  });

  it('counts calls by outcome and their durations per provider', async () => {
    const { fan, registry } = fanOut();
    await fan.run('person', { name: 'x' }, [provider('m', () => found(person('m', 1)))], null);
    const text = await registry.metrics();
    expect(text).toContain('dossier_provider_calls_total{provider="m",outcome="found"} 1');
    expect(text).toMatch(/dossier_provider_call_duration_seconds_count\{provider="m",outcome="found"\} 1/);
  });

  it('merges e-mail items into one, the verdict from the highest precedence that could tell', async () => {
    const { fan } = fanOut();
    const email = (over: Partial<EmailResultItem>): EmailResultItem => ({
      email: 'a@example.com',
      normalized: 'a@example.com',
      syntax_valid: true,
      domain: 'example.com',
      mx_records: [],
      deliverability: 'unknown',
      reason: null,
      disposable: false,
      free_provider: false,
      role_account: false,
      did_you_mean: null,
      accounts: [],
      sources: [],
      is_catch_all: null,
      has_full_inbox: null,
      is_disabled: null,
      can_connect_smtp: null,
      score: 40,
      sub_status: 'not_probed',
      ...over,
    });
    const answer = (item: EmailResultItem) => () => Promise.resolve({ outcome: 'found' as const, items: [item] });
    const result = await fan.run(
      'email',
      { email: 'a@example.com' },
      [
        provider<'email'>(
          'offline',
          answer(
            email({
              mx_records: ['mx.example.com'],
              role_account: true,
              deliverability: 'risky',
              reason: 'role account',
              sources: ['offline'],
            }),
          ),
          { kinds: ['email'] },
        ),
        provider<'email'>(
          'probe',
          answer(email({ deliverability: 'deliverable', reason: 'mailbox accepted', sources: ['probe'] })),
          { kinds: ['email'] },
        ),
        provider<'email'>(
          'vendor',
          answer(email({ deliverability: 'undeliverable', reason: 'vendor says invalid', sources: ['vendor'] })),
          { kinds: ['email'], precedence: -10 },
        ),
        provider<'email'>(
          'profile',
          answer(
            email({
              accounts: [{ service: 'github', username: 'a', url: 'https://github.com/a' }],
              sources: ['profile'],
            }),
          ),
          { kinds: ['email'] },
        ),
      ],
      null,
    );
    expect(result.items).toEqual([
      email({
        mx_records: ['mx.example.com'],
        role_account: true,
        deliverability: 'risky',
        reason: 'role account',
        accounts: [{ service: 'github', username: 'a', url: 'https://github.com/a' }],
        sources: ['offline', 'probe', 'profile', 'vendor'],
      }),
    ]);
  });

  it("keeps the e-mail checks on when one domain's name server or mail host does not answer within the wait", async () => {
    // The e-mail checks' upstream is whatever each address names: its domain's name servers, its mail
    // hosts. Timing out on one of them says nothing about the next address, so it opens no breaker.
    const [dns, smtp] = await Promise.all([
      FakeDns.start({
        'acme.example': { mx: [[10, 'mx.acme.example']] },
        'mx.acme.example': { a: ['127.0.0.1'] },
        'silent.example': 'timeout',
      }),
      FakeSmtp.start({ rcpt: { 'grace@acme.example': 'accept', 'slow@acme.example': 'hang' } }),
    ]);
    try {
      const { fan } = fanOut({
        DNS_SERVERS: dns.server,
        SMTP_PROBE: 'true',
        SMTP_PROBE_PORT: String(smtp.port),
        SMTP_HELO_NAME: 'probe.dossier.test',
        SMTP_MAIL_FROM: 'verify@dossier.test',
        SMTP_PROBE_ALLOW_PRIVATE: 'true',
      });
      const checks = PROVIDERS.filter((p) => p.id === 'email' || p.id === 'smtp') as Provider<'email'>[];
      const check = (email: string, deadline: number | null) => fan.run('email', { email }, checks, deadline);
      const outcomes = (result: Awaited<ReturnType<typeof check>>) =>
        Object.fromEntries(result.sources.map((s) => [s.provider, s.outcome]));
      // More than the breaker's threshold (5), every one cut off by its caller's short wait.
      for (let i = 0; i < 6; i++) {
        expect(outcomes(await check('slow@acme.example', Date.now() + 500))).toEqual({
          email: 'found',
          smtp: 'timeout',
        });
      }
      // A name server that never answers: the address check is not cut at the caller's wait (it makes the
      // lookup's one item) but ends as its own `unknown`, with the item; the probe is cut.
      const silent = await check('grace@silent.example', Date.now() + 300);
      expect(outcomes(silent)).toEqual({ email: 'unknown', smtp: 'timeout' });
      expect(silent.items).toEqual([expect.objectContaining({ deliverability: 'unknown' })]);
      const next = await check('grace@acme.example', null);
      expect(outcomes(next)).toEqual({ email: 'found', smtp: 'found' });
      expect(next.items).toEqual([expect.objectContaining({ deliverability: 'deliverable' })]);
    } finally {
      await Promise.all([dns.close(), smtp.close()]);
    }
  });
  it('does not probe a mail host on a loopback or private address unless SMTP_PROBE_ALLOW_PRIVATE=true, and charges nothing for that', async () => {
    // Anyone can point their own domain's MX at 127.0.0.1, 10.x or 169.254.169.254: the worker must not
    // speak SMTP to its own network on their behalf (SSRF), as webhooks may not call it.
    const [dns, smtp] = await Promise.all([
      FakeDns.start({
        'inside.example': { mx: [[10, 'mx.inside.example']] },
        'mx.inside.example': { a: ['127.0.0.1'] },
      }),
      FakeSmtp.start({ rcpt: { 'grace@inside.example': 'accept' } }),
    ]);
    try {
      const settings = {
        DNS_SERVERS: dns.server,
        SMTP_PROBE: 'true',
        SMTP_PROBE_PORT: String(smtp.port),
        SMTP_HELO_NAME: 'probe.dossier.test',
        SMTP_MAIL_FROM: 'verify@dossier.test',
      };
      const email = PROVIDERS.find((p) => p.id === 'email') as Provider<'email'>;
      const smtpProbe = PROVIDERS.find((p) => p.id === 'smtp') as Provider<'email'>;
      const detail = `could not connect to port ${smtp.port} of mx.inside.example: it resolves only to a loopback, private, link-local or metadata address (127.0.0.1), which the probe does not connect to`;

      const refused = await fanOut(settings).fan.run(
        'email',
        { email: 'grace@inside.example' },
        [email, smtpProbe],
        null,
      );
      expect(refused.sources).toEqual([
        { provider: 'email', outcome: 'found', took_ms: expect.any(Number) },
        { provider: 'smtp', outcome: 'unknown', took_ms: expect.any(Number), detail },
      ]);
      // The address checks' verdict stands; the lookup is charged for what `email` found, as with a blocked port.
      expect(refused.items).toEqual([
        expect.objectContaining({ deliverability: 'unknown', reason: detail, sources: ['smtp', 'email'] }),
      ]);
      expect(refused.charge).toBe(true);
      // The probe alone found nothing: free.
      const alone = await fanOut(settings).fan.run('email', { email: 'grace@inside.example' }, [smtpProbe], null);
      expect(alone.sources).toEqual([{ provider: 'smtp', outcome: 'unknown', took_ms: expect.any(Number), detail }]);
      expect(alone.charge).toBe(false);
      expect(smtp.sessions).toEqual([]);

      const allowed = await fanOut({ ...settings, SMTP_PROBE_ALLOW_PRIVATE: 'true' }).fan.run(
        'email',
        { email: 'grace@inside.example' },
        [email, smtpProbe],
        null,
      );
      expect(Object.fromEntries(allowed.sources.map((s) => [s.provider, s.outcome]))).toEqual({
        email: 'found',
        smtp: 'found',
      });
      expect(allowed.items).toEqual([expect.objectContaining({ deliverability: 'deliverable' })]);
      expect(smtp.sessions).toHaveLength(1);
    } finally {
      await Promise.all([dns.close(), smtp.close()]);
    }
  });
});

describe('narrowed: a person search as it asked for it (limit, min_score)', () => {
  const found = (n: number) => ({
    items: Array.from({ length: n }, (_, i) => personItem({ id: `p${i}`, match_score: 1 - i / 100 })),
    sources: [{ provider: 'local', outcome: 'found' as const, took_ms: 1 }],
    charge: true,
  });

  it('keeps the best 25 by default and counts every item', () => {
    const out = narrowed('person', { name: 'Ada' }, found(30));
    expect([out.items.length, out.total, out.charge]).toEqual([25, 30, true]);
    expect(out.items[0]!.id).toBe('p0');
  });

  it('keeps the best `limit`, and leaves out and does not count items below `min_score`', () => {
    const out = narrowed('person', { name: 'Ada', limit: 3, min_score: 0.95 }, found(30));
    expect([out.items.map((i) => i.id), out.total]).toEqual([['p0', 'p1', 'p2'], 6]);
  });

  it('answers nothing and charges nothing when every item is below `min_score`', () => {
    const below = found(3);
    below.items.shift(); // p1 and p2: 0.99 and 0.98
    const out = narrowed('person', { name: 'Ada', min_score: 1 }, below);
    expect([out.items, out.total, out.charge, out.sources[0]!.outcome]).toEqual([[], 0, false, 'not_found']);
  });

  it('leaves other kinds as they are', () => {
    const phone = { items: [], sources: [], charge: false };
    expect(narrowed('phone', { phone: '+14155552671' }, phone)).toBe(phone);
  });
});
