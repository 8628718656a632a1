import { randomBytes } from 'node:crypto';
import { FakeDns } from '@dossier/testing';
import {
  WEBHOOK_BACKOFF_CAP_MS,
  WEBHOOK_RETRY_SPAN_MS,
  checkWebhookTarget,
  isRefusedAddress,
  openSecret,
  resolverAt,
  sealSecret,
  signatureHeader,
  webhookAttempts,
  webhookBackoffMs,
} from './webhooks';

describe('webhook addresses (SSRF defence)', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fd00:ec2::254',
    'fc00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '::7f00:1',
    '::a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::a9fe:a9fe',
    '2002:7f00:1::1',
    'fec0::1',
    'not-an-address',
  ])('refuses %s', (address) => {
    expect(isRefusedAddress(address)).toBe(true);
  });

  it.each(['93.184.215.14', '8.8.8.8', '203.0.113.10', '2606:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isRefusedAddress(address)).toBe(false);
  });

  const resolvesTo =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('refuses a name when any of its addresses is refused, and connects to the addresses checked, in order', async () => {
    expect(await checkWebhookTarget('https://sneaky.example/x', false, resolvesTo('8.8.8.8', '127.0.0.1'))).toEqual({
      ok: false,
      reason: 'resolves to a loopback, private, link-local or metadata address',
    });
    const ok = await checkWebhookTarget('https://hooks.example/x', false, resolvesTo('8.8.4.4', '2606:4700::1111'));
    expect(ok).toMatchObject({
      ok: true,
      target: {
        addresses: [
          { address: '8.8.4.4', family: 4 },
          { address: '2606:4700::1111', family: 6 },
        ],
      },
    });
  });

  it('takes http and private addresses only when the operator allows them', async () => {
    expect(await checkWebhookTarget('http://8.8.8.8/x', false)).toMatchObject({
      ok: false,
      reason: 'must be an https URL',
    });
    expect(await checkWebhookTarget('http://127.0.0.1:8080/x', true)).toMatchObject({
      ok: true,
      target: { addresses: [{ address: '127.0.0.1', family: 4 }] },
    });
    expect(await checkWebhookTarget('ftp://8.8.8.8/x', true)).toMatchObject({ ok: false });
    expect(await checkWebhookTarget('https://u:p@8.8.8.8/x', false)).toMatchObject({ ok: false });
    expect(await checkWebhookTarget('https://8.8.8.8:0/x', false)).toEqual({
      ok: false,
      reason: 'must not use port 0',
    });
    expect(await checkWebhookTarget('https://8.8.8.8/x#part', false)).toEqual({
      ok: false,
      reason: 'must not have a #fragment',
    });
    expect(await checkWebhookTarget('https://8.8.8.8/x#', false)).toMatchObject({ ok: false });
    expect(
      await checkWebhookTarget('https://nowhere.invalid/x', false, async () => {
        throw new Error('ENOTFOUND');
      }),
    ).toEqual({ ok: false, reason: 'has a host name that does not resolve' });
  });

  it("stops waiting for a lookup that never ends when its signal aborts (a delivery attempt's deadline)", async () => {
    const never = () => new Promise<never>(() => {});
    expect(await checkWebhookTarget('https://slow.example/x', false, never, AbortSignal.timeout(50))).toEqual({
      ok: false,
      reason: 'has a host name that did not resolve in time',
      timedOut: true,
    });
    // An address needs no lookup: nothing to wait for.
    expect(await checkWebhookTarget('https://8.8.8.8/x', false, never, AbortSignal.abort())).toMatchObject({
      ok: true,
    });
  });

  describe('through a DNS server on loopback (resolverAt: WEBHOOK_DNS_SERVERS)', () => {
    let dns: FakeDns;
    beforeAll(async () => {
      dns = await FakeDns.start({
        'hooks.test': { a: ['127.0.0.1'], aaaa: ['::1'] },
        'v6.test': { aaaa: ['2606:4700::1111'] },
        'silent.test': 'timeout',
      });
    });
    afterAll(async () => {
      await dns?.close();
    });

    it('resolves A and AAAA records from it, and tells a name it does not know', async () => {
      const resolve = resolverAt([dns.server]);
      expect(await resolve('hooks.test')).toEqual([
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ]);
      expect(await checkWebhookTarget('https://v6.test/x', false, resolve)).toMatchObject({
        ok: true,
        target: { addresses: [{ address: '2606:4700::1111', family: 6 }] },
      });
      expect(await checkWebhookTarget('https://missing.test/x', false, resolve)).toEqual({
        ok: false,
        reason: 'has a host name that does not resolve',
      });
    });

    it('gives up on a server that never answers when the signal aborts', async () => {
      const asked = dns.queries.length;
      const check = await checkWebhookTarget(
        'https://silent.test/x',
        false,
        resolverAt([dns.server]),
        AbortSignal.timeout(200),
      );
      expect(check).toMatchObject({ ok: false, timedOut: true });
      expect(dns.queries.slice(asked)).toEqual(
        expect.arrayContaining([
          { name: 'silent.test', type: 'A' },
          { name: 'silent.test', type: 'AAAA' },
        ]),
      );
    });
  });
});

describe('webhook secrets and signatures', () => {
  it('seals a secret that opens only with the same key', () => {
    const key = randomBytes(32);
    const sealed = sealSecret('whsec_abc', key);
    expect(sealed).not.toContain('whsec_abc');
    expect(sealSecret('whsec_abc', key)).not.toBe(sealed); // a fresh IV each time
    expect(openSecret(sealed, key)).toBe('whsec_abc');
    expect(() => openSecret(sealed, randomBytes(32))).toThrow();
  });

  it('signs "<t>.<body>" with HMAC-SHA256 (a known vector)', () => {
    expect(signatureHeader('whsec_test', '{"a":1}', 1700000000)).toBe(
      't=1700000000,v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789',
    );
  });
});

describe('webhook retries', () => {
  it('doubles from the base up to the cap, with up to a quarter more of jitter', () => {
    expect(webhookBackoffMs(1, 30_000, () => 0)).toBe(30_000);
    expect(webhookBackoffMs(3, 30_000, () => 0)).toBe(120_000);
    expect(webhookBackoffMs(3, 30_000, () => 0.999)).toBe(Math.round(120_000 * (1 + 0.999 / 4)));
    expect(webhookBackoffMs(40, 30_000, () => 0)).toBe(WEBHOOK_BACKOFF_CAP_MS);
  });

  it.each([30_000, 100, 1000])('gives enough attempts to retry for at least 24 h (base %d ms)', (base) => {
    const attempts = webhookAttempts(base);
    let waited = 0;
    for (let made = 1; made < attempts; made += 1) waited += webhookBackoffMs(made, base, () => 0);
    expect(waited).toBeGreaterThanOrEqual(WEBHOOK_RETRY_SPAN_MS);
    // and not much more: one attempt fewer would stop short
    expect(waited - webhookBackoffMs(attempts - 1, base, () => 0)).toBeLessThan(WEBHOOK_RETRY_SPAN_MS);
  });
});
