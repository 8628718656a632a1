import { Api, Blackhole, FakeDns, Stack, ledgerState, settled, waitFor, type AppProcess } from '@dossier/testing';

type Source = { provider: string; outcome: string; took_ms: number; detail?: string };
type Envelope = { status: string; results: Record<string, unknown>[]; credits_remaining: number; sources: Source[] };
type Status = { on: string[]; off: Record<string, string>; unreachable: Record<string, string> };
type Line = Record<string, unknown> & { level: string; msg: string; context?: string };

/** The connect timeout the stack runs with: far below GLEIF's own 8 s and the request's 10 s wait. */
const CONNECT_MS = 500;
/** A synchronous answer however loaded the machine is (the default wait is 10 s). */
const WAIT = { prefer: 'wait=60' };
/** What "the resolver cannot be trusted" reads as, wherever a lying resolver was met. */
const UNTRUSTED = /it answers NXDOMAIN for com, a top-level domain that always exists: this resolver cannot be trusted/;

function linesOf(app: AppProcess): Line[] {
  return app.logs
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

/** The one line an app logs about its providers, once it has. */
const providersLine = (app: AppProcess) =>
  waitFor(
    () => Promise.resolve(linesOf(app).filter((l) => l.context === 'providers' && 'providers' in l)),
    (lines) => lines.length > 0,
    { timeoutMs: 20_000, stallMs: 20_000, what: `${app.name}'s providers line` },
  ).then((lines) => {
    expect(lines).toHaveLength(1);
    return lines[0]!;
  });

describe('lookups behind a resolver that lies and a keyless upstream that cannot be reached (gateway + worker)', () => {
  let lying: FakeDns;
  let hole: Blackhole;
  let stack: Stack;
  let api: Api;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    [lying, hole] = await Promise.all([FakeDns.lying(), Blackhole.start()]);
    stack = await Stack.start({
      label: 'network',
      env: {
        SIGNUP_CREDITS: '100',
        // Every name the worker resolves goes to the resolver that answers NXDOMAIN for all of them: the
        // e-mail checks' (DNS_SERVERS) and the HTTP upstreams' (UPSTREAM_DNS_SERVERS).
        DNS_SERVERS: lying.server,
        UPSTREAM_DNS_SERVERS: lying.server,
        GRAVATAR_ENABLED: 'true',
        GRAVATAR_BASE_URL: 'http://api.gravatar.test',
        // GLEIF at a port that never completes a connection (no network, a firewall dropping packets).
        GLEIF_ENABLED: 'true',
        GLEIF_BASE_URL: `${hole.url}/api/v1`,
        UPSTREAM_CONNECT_TIMEOUT_MS: String(CONNECT_MS),
      },
      gatewayEnv: { LOG_LEVEL: 'info' },
    });
    api = new Api(stack.baseUrl);
    ({ key, accountId } = await api.register());
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([lying?.close(), hole?.close()]);
  });

  const outcomes = (body: Envelope) => Object.fromEntries(body.sources.map((s) => [s.provider, s.outcome]));

  it.each(['jane.doe@gmail.com', 'grace@gone.example'])(
    'verifies %s as unknown, never undeliverable, with Gravatar unknown too, and charges nothing',
    async (email) => {
      const before = await ledgerState(accountId);
      const res = await api.post<Envelope>('/v1/verify/email', { email }, { key, headers: WAIT });
      expect(res.status).toBe(200);
      expect(res.body.results).toHaveLength(1);
      expect(res.body.results[0]).toMatchObject({
        email,
        deliverability: 'unknown',
        reason: expect.stringMatching(/^DNS could not tell: the resolver answers NXDOMAIN for /),
      });
      expect(outcomes(res.body)).toEqual({ email: 'unknown', gravatar: 'unknown', smtp: 'skipped', hunter: 'skipped' });
      const gravatar = res.body.sources.find((s) => s.provider === 'gravatar')!;
      expect(gravatar.detail).toMatch(/^gravatar: the resolver answers NXDOMAIN for api\.gravatar\.test, and /);
      expect(gravatar.detail).toMatch(UNTRUSTED);
      expect(res.body.credits_remaining).toBe(before.balance);
      expect(res.headers.get('x-credits-spent')).toBe('0');
      expect(await ledgerState(accountId)).toEqual(
        settled(before.balance, {
          reserves: before.reserves + 1,
          captures: before.captures,
          releases: before.releases + 1,
        }),
      );
    },
  );

  it('answers a company search whose keyless upstream cannot be reached within the connect timeout, timeout, free', async () => {
    for (let call = 0; call < 2; call++) {
      const before = await ledgerState(accountId);
      const started = Date.now();
      const res = await api.post<Envelope>(
        '/v1/search/company',
        { company_name: 'Qzxv Unfindable Holdings' },
        { key, headers: WAIT },
      );
      const took = Date.now() - started;
      expect(res.status).toBe(200);
      const gleif = res.body.sources.find((s) => s.provider === 'gleif')!;
      expect(gleif).toMatchObject({
        outcome: 'timeout',
        detail: `gleif: no connection to 127.0.0.1 within ${CONNECT_MS} ms (UPSTREAM_CONNECT_TIMEOUT_MS)`,
      });
      // The connect timeout, not GLEIF's 8 s answer timeout.
      expect(gleif.took_ms).toBeGreaterThanOrEqual(CONNECT_MS - 50);
      expect(gleif.took_ms).toBeLessThan(CONNECT_MS + 1000);
      // Well under GLEIF's own 8 s, on a loaded machine too.
      expect(took).toBeLessThan(5000);
      expect(res.body.results).toEqual([]);
      expect(res.body.credits_remaining).toBe(before.balance);
    }
  });

  it("says at start, in the worker's log, which providers are on, off (naming the setting) and unreachable (why)", async () => {
    const line = await providersLine(stack.workers[0]!);
    const status = line['providers'] as Status;
    expect(status.on).toEqual(expect.arrayContaining(['libphonenumber', 'local']));
    expect(status.off).toMatchObject({
      smtp: 'off: the mailbox probe is opt-in (SMTP_PROBE=true)',
      pdl: 'not configured: set PDL_API_KEY',
      twilio: 'not configured: set TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN',
    });
    expect(status.unreachable).toEqual({
      email: expect.stringMatching(UNTRUSTED),
      gravatar: expect.stringMatching(UNTRUSTED),
      gleif: `no connection to 127.0.0.1 within ${CONNECT_MS} ms (UPSTREAM_CONNECT_TIMEOUT_MS)`,
    });
    // And in words, for people reading the log.
    expect(line.level).toBe('info');
    expect(line.msg).toMatch(/^providers on: libphonenumber, .*; off: .*pdl \(not configured: set PDL_API_KEY\)/);
    expect(line.msg).toContain(
      `gleif (no connection to 127.0.0.1 within ${CONNECT_MS} ms (UPSTREAM_CONNECT_TIMEOUT_MS))`,
    );
  });

  it("says it in the gateway's log too, as the workers report it, per lookup kind", async () => {
    const line = await providersLine(stack.gateway);
    const reports = line['providers'] as Record<string, (Status & { worker: string }) | null>;
    expect(Object.keys(reports).sort()).toEqual(['company', 'email', 'person', 'phone']);
    expect(reports['company']).toMatchObject({
      on: ['local', 'watchlists'],
      unreachable: { gleif: `no connection to 127.0.0.1 within ${CONNECT_MS} ms (UPSTREAM_CONNECT_TIMEOUT_MS)` },
      worker: expect.stringMatching(new RegExp(`/${stack.workers[0]!.pid}$`)),
    });
    expect(reports['email']!.unreachable).toEqual({
      email: expect.stringMatching(UNTRUSTED),
      gravatar: expect.stringMatching(UNTRUSTED),
    });
    expect(reports['phone']!.on).toEqual(['libphonenumber']);
    expect(line.level).toBe('info');
    expect(line.msg).toMatch(
      /^providers, as the workers report them — person: on: local.* \| company: on: local, watchlists;/,
    );
  });
});
