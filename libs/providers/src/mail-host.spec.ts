import { FakeDns, LOOPBACK_PROVIDER_ENV } from '@dossier/testing';
import { MailDns, dnsServersOf, resolversReach } from './mail-host';
import { ResolverSanityCache } from './resolver-sanity';

describe('MailDns against a fake DNS server on loopback', () => {
  let fake: FakeDns;

  beforeAll(async () => {
    fake = await FakeDns.start({
      'mx.test': {
        mx: [
          [20, 'MX2.mx.test.'],
          [10, 'mx1.mx.test'],
          [20, 'mx0.mx.test'],
          [30, 'mx1.mx.test'],
        ],
      },
      'null.test': { mx: [[0, '.']] },
      'slip.test': {
        mx: [
          [0, '.'],
          [10, 'mx.slip.test'],
        ],
      },
      'a-only.test': { a: ['192.0.2.1'] },
      'aaaa-only.test': { aaaa: ['2001:db8::1'] },
      'nothing.test': {},
      'servfail.test': 'servfail',
      'refused.test': 'refused',
      'silent.test': 'timeout',
      'host.test': { a: ['127.0.0.1', '127.0.0.2'], aaaa: ['::1'] },
      'broken-host.test': 'servfail',
    });
  });
  afterAll(async () => {
    await fake?.close();
  });

  // Answers come in well under a millisecond, but a loaded CI machine can hold a UDP reply back for
  // hundreds of them: only the test that wants a timeout gets a short one.
  const dns = (signal = AbortSignal.timeout(10_000), timeoutMs = 2_000) =>
    new MailDns(signal, { servers: [fake.server], timeoutMs, tries: 1 });

  it('lists MX hosts by preference (then name), lower-cased, without the root dot, each once', async () => {
    await expect(dns().route('mx.test')).resolves.toEqual({
      kind: 'mx',
      hosts: [
        { host: 'mx1.mx.test', preference: 10 },
        { host: 'mx0.mx.test', preference: 20 },
        { host: 'mx2.mx.test', preference: 20 },
      ],
    });
  });

  it('reads a null MX (RFC 7505) as "accepts no mail", and ignores one mixed with real MX records', async () => {
    await expect(dns().route('null.test')).resolves.toEqual({ kind: 'null-mx' });
    await expect(dns().route('slip.test')).resolves.toEqual({
      kind: 'mx',
      hosts: [{ host: 'mx.slip.test', preference: 10 }],
    });
  });

  it('falls back to the domain itself when it has no MX but an A or AAAA record (RFC 5321 §5.1)', async () => {
    for (const domain of ['a-only.test', 'aaaa-only.test']) {
      await expect(dns().route(domain)).resolves.toEqual({
        kind: 'implicit',
        hosts: [{ host: domain, preference: 0 }],
      });
    }
  });

  it('tells a domain that does not exist from one without a mail host', async () => {
    await expect(dns().route('missing.test')).resolves.toEqual({ kind: 'no-domain' });
    await expect(dns().route('nothing.test')).resolves.toEqual({ kind: 'no-mail-host' });
  });

  it.each([
    ['servfail.test', 'MX of servfail.test: the DNS server failed (SERVFAIL)'],
    ['refused.test', 'MX of refused.test: the DNS server refused the query (REFUSED)'],
    ['silent.test', 'MX of silent.test: no answer from the DNS server (timeout)'],
  ])('reports a resolver that cannot tell (%s) as a failure, never as "no mail host"', async (domain, detail) => {
    const timeoutMs = domain === 'silent.test' ? 100 : undefined;
    await expect(dns(undefined, timeoutMs).route(domain)).resolves.toEqual({ kind: 'dns-failure', detail });
  });

  it('reports a resolver address where nothing answers as a failure', async () => {
    const nowhere = new MailDns(AbortSignal.timeout(10_000), {
      servers: dnsServersOf(LOOPBACK_PROVIDER_ENV),
      timeoutMs: 100,
      tries: 1,
    });
    await expect(nowhere.route('example.com')).resolves.toMatchObject({ kind: 'dns-failure' });
  });

  it("resolves a mail host's addresses through the same resolver, IPv4 first; an address literal is itself", async () => {
    await expect(dns().addresses('host.test')).resolves.toEqual({ addresses: ['127.0.0.1', '127.0.0.2', '::1'] });
    await expect(dns().addresses('192.0.2.7')).resolves.toEqual({ addresses: ['192.0.2.7'] });
    await expect(dns().addresses('missing.test')).resolves.toEqual({ addresses: [] });
    await expect(dns().addresses('broken-host.test')).resolves.toEqual({
      failure: 'addresses of broken-host.test: the DNS server failed (SERVFAIL)',
    });
  });

  it("does not believe an NXDOMAIN for a known mail provider's domain, even from a sane resolver", async () => {
    await expect(dns().route('gmail.com', { knownMailProvider: true })).resolves.toEqual({
      kind: 'dns-failure',
      detail:
        "the resolver answers NXDOMAIN for gmail.com, a known mail provider's domain: this resolver cannot be trusted",
    });
  });

  it('is reported reachable at start-up (checkReach) when the resolvers answer the canary', async () => {
    await expect(resolversReach({ DNS_SERVERS: fake.server }, AbortSignal.timeout(10_000))).resolves.toBe(true);
  });

  it('asks the canary only after an NXDOMAIN, at most once for many lookups', async () => {
    const sanity = new ResolverSanityCache();
    const canary = () => fake.queries.filter((q) => q.name === 'com').length;
    const before = canary();
    const counted = new MailDns(AbortSignal.timeout(10_000), { servers: [fake.server], tries: 1, sanity });
    await counted.route('mx.test');
    expect(canary()).toBe(before);
    for (const domain of ['missing.test', 'gone.test', 'never.test']) {
      await expect(counted.route(domain)).resolves.toEqual({ kind: 'no-domain' });
    }
    expect(canary()).toBe(before + 1);
  });

  it('rejects with a timeout ProviderError when the deadline has passed or passes mid-query', async () => {
    const passed = new AbortController();
    passed.abort();
    await expect(dns(passed.signal).route('mx.test')).rejects.toMatchObject({ name: 'ProviderError', code: 'timeout' });

    const passing = new AbortController();
    const slow = new MailDns(passing.signal, { servers: [fake.server], timeoutMs: 60_000, tries: 1 });
    const pending = slow.route('silent.test');
    passing.abort();
    await expect(pending).rejects.toMatchObject({ name: 'ProviderError', code: 'timeout' });
  });
});

describe('MailDns behind a resolver that answers NXDOMAIN for everything', () => {
  let lying: FakeDns;
  beforeAll(async () => {
    lying = await FakeDns.lying();
  });
  afterAll(async () => {
    await lying?.close();
  });

  it('says DNS could not tell, never that the domain does not exist', async () => {
    const dns = new MailDns(AbortSignal.timeout(10_000), { servers: [lying.server], timeoutMs: 2_000, tries: 1 });
    await expect(dns.route('example.org')).resolves.toEqual({
      kind: 'dns-failure',
      detail:
        'the resolver answers NXDOMAIN for example.org, and it answers NXDOMAIN for com, a top-level domain that always exists: this resolver cannot be trusted',
    });
  });

  it('is reported unreachable at start-up (checkReach), naming the resolvers', async () => {
    await expect(resolversReach({ DNS_SERVERS: lying.server }, AbortSignal.timeout(10_000))).resolves.toBe(
      `DNS (${lying.server}): it answers NXDOMAIN for com, a top-level domain that always exists: this resolver cannot be trusted`,
    );
  });
});

describe('DNS_SERVERS', () => {
  it('is the system resolvers when unset or empty, else a list of addresses with optional ports', () => {
    expect(dnsServersOf({})).toBeNull();
    expect(dnsServersOf({ DNS_SERVERS: ' ' })).toBeNull();
    expect(dnsServersOf({ DNS_SERVERS: '127.0.0.1:5353, 10.0.0.2,[::1]:53,::1' })).toEqual([
      '127.0.0.1:5353',
      '10.0.0.2',
      '[::1]:53',
      '::1',
    ]);
  });

  it.each(['dns.example.com:53', '127.0.0.1:0', '127.0.0.1:99999', '127.0.0.1:', '1.2.3:53'])(
    'refuses %j, naming the setting',
    (value) => {
      expect(() => dnsServersOf({ DNS_SERVERS: value })).toThrow(/^DNS_SERVERS: expected IP addresses/);
    },
  );
});
