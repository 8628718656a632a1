import { join } from 'node:path';
import type { EmailInput } from '@dossier/contracts';
import { FakeDns, LOOPBACK_PROVIDER_ENV, REPO_ROOT, readFixtures, type DnsName } from '@dossier/testing';
import { unguardedContext, type ProviderAnswer } from '../provider';
import { emailProvider } from './email.provider';

/** One case: what the fake DNS answers, the input, and exactly the answer the provider must give. */
interface Fixture {
  name: string;
  dns: Record<string, DnsName>;
  input: EmailInput;
  answer: ProviderAnswer<'email'>;
}

const FIXTURES = join(REPO_ROOT, 'libs/providers/src/email/fixtures');
const load = (folder: 'ok' | 'not-ok'): Fixture[] => readFixtures<Fixture>(join(FIXTURES, folder));

describe('emailProvider', () => {
  let dns: FakeDns;

  beforeAll(async () => {
    dns = await FakeDns.start();
  });
  afterAll(async () => {
    await dns?.close();
  });

  const lookup = (input: EmailInput, settings: Record<string, string> = { DNS_SERVERS: dns.server }) =>
    emailProvider.lookup('email', input, unguardedContext(AbortSignal.timeout(10_000), settings));

  it('declares itself: always on, DNS through DNS_SERVERS, first-hand precedence', () => {
    expect(emailProvider).toMatchObject({
      id: 'email',
      kinds: ['email'],
      transport: 'dns',
      configKeys: ['DNS_SERVERS'],
    });
    expect(emailProvider.isConfigured({})).toBe(true);
  });

  it('refuses, at boot, a DNS_SERVERS that is not a list of IP addresses', () => {
    expect(() => emailProvider.validateSettings?.({})).not.toThrow();
    expect(() => emailProvider.validateSettings?.({ DNS_SERVERS: '127.0.0.1:53' })).not.toThrow();
    expect(() => emailProvider.validateSettings?.({ DNS_SERVERS: 'resolver.example' })).toThrow(
      'DNS_SERVERS: expected IP addresses as host:port,…, got "resolver.example"',
    );
  });

  describe.each([
    ['ok', load('ok')],
    ['not ok', load('not-ok')],
  ])('%s', (_folder, fixtures) => {
    it.each(fixtures.map((f) => [f.name, f] as const))('%s', async (_name, fixture) => {
      for (const [name, answer] of Object.entries(fixture.dns)) dns.set(name, answer);
      await expect(lookup(fixture.input)).resolves.toEqual(fixture.answer);
    });
  });

  it('asks DNS nothing for an address whose syntax is invalid', async () => {
    const before = dns.queries.length;
    await lookup({ email: 'not-an-address' });
    expect(dns.queries.length).toBe(before);
  });

  it('asks the A and AAAA records only when there is no MX', async () => {
    dns.set('mx-only.example', { mx: [[10, 'mx.mx-only.example']] }).set('a-only.example', { a: ['192.0.2.1'] });
    await lookup({ email: 'x@mx-only.example' });
    await lookup({ email: 'x@a-only.example' });
    const asked = (name: string) => dns.queries.filter((q) => q.name === name).map((q) => q.type);
    expect(asked('mx-only.example')).toEqual(['MX']);
    expect(asked('a-only.example').sort()).toEqual(['A', 'AAAA', 'MX']);
  });

  it("says unknown with the harness's DNS, where nothing answers", async () => {
    const answer = await lookup({ email: 'grace@acme-corp.example' }, { ...LOOPBACK_PROVIDER_ENV });
    expect(answer).toMatchObject({ outcome: 'unknown', detail: expect.stringMatching(/^MX of acme-corp\.example: /) });
    expect(answer.items[0]).toMatchObject({
      deliverability: 'unknown',
      reason: expect.stringMatching(/^DNS could not tell/),
    });
  });

  describe('behind a resolver that answers NXDOMAIN for everything (a captive portal, broken DNS)', () => {
    let lying: FakeDns;
    beforeAll(async () => {
      lying = await FakeDns.lying();
    });
    afterAll(async () => {
      await lying?.close();
    });

    it.each(['jane.doe@gmail.com', 'grace@gone.example'])('says unknown for %s, never undeliverable', async (email) => {
      const answer = await lookup({ email }, { DNS_SERVERS: lying.server });
      const domain = email.split('@')[1]!;
      const why = `the resolver answers NXDOMAIN for ${domain}`;
      expect(answer).toMatchObject({ outcome: 'unknown', detail: expect.stringContaining(why) });
      expect(answer.items).toEqual([
        expect.objectContaining({
          deliverability: 'unknown',
          reason: expect.stringMatching(new RegExp(`^DNS could not tell: ${why}.*: this resolver cannot be trusted$`)),
        }),
      ]);
    });
  });

  it('rejects with a timeout when the deadline has already passed', async () => {
    const passed = new AbortController();
    passed.abort();
    await expect(
      emailProvider.lookup('email', { email: 'x@acme-corp.example' }, unguardedContext(passed.signal, {})),
    ).rejects.toMatchObject({ name: 'ProviderError', code: 'timeout' });
  });
});
