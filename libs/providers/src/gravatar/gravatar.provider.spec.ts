import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeDns, FakeUpstream, REPO_ROOT, type FakeAnswer } from '@dossier/testing';
import { DEFAULT_CONNECT_TIMEOUT_MS, useUpstreamNetwork } from '../http';
import { ProviderError, reportOfFailure, unguardedContext } from '../provider';
import { gravatarProvider } from './gravatar.provider';

const fixture = (file: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'libs/providers/src/gravatar/fixtures', file), 'utf8')) as FakeAnswer & {
    headers: Record<string, string>;
  };

describe('gravatarProvider', () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await FakeUpstream.start();
  });
  afterAll(async () => {
    await fake.close();
  });

  const lookup = () =>
    gravatarProvider.lookup(
      'email',
      { email: 'grace.hopper@example.com' },
      unguardedContext(AbortSignal.timeout(5000), { GRAVATAR_BASE_URL: fake.url }),
    );

  // Gravatar's OpenAPI document (rate_limit_exceeded): its 429 names the end of the window in X-RateLimit-Reset,
  // a Unix time, and sends no Retry-After.
  it('reads a 429 as rate_limited with the wait its X-RateLimit-Reset names', async () => {
    const documented = fixture('not-ok/429.json');
    expect(documented.headers['retry-after']).toBeUndefined();
    const reset = String(Math.floor(Date.now() / 1000) + 120);
    fake.reply({ ...documented, headers: { ...documented.headers, 'x-ratelimit-reset': reset } });
    const error = await lookup().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: 'rate_limited' });
    expect((error as ProviderError).retryAfterMs).toBeGreaterThan(100_000);
    expect((error as ProviderError).retryAfterMs).toBeLessThanOrEqual(120_000);
    expect((error as ProviderError).message).toMatch(/^gravatar: rate limited \(429, retry after 1[12]\ds\)$/);
  });

  it('is unknown, not an error, when a resolver that lies says the Gravatar host does not exist', async () => {
    const lying = await FakeDns.lying();
    useUpstreamNetwork({ connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS, dnsServers: [lying.server] });
    try {
      const error = await gravatarProvider
        .lookup('email', { email: 'jane.doe@gmail.com' }, unguardedContext(AbortSignal.timeout(5000), {}))
        .catch((e: unknown) => e);
      expect(reportOfFailure('gravatar', error, 3)).toEqual({
        provider: 'gravatar',
        outcome: 'unknown',
        took_ms: 3,
        detail:
          'gravatar: the resolver answers NXDOMAIN for api.gravatar.com, and it answers NXDOMAIN for com, a top-level domain that always exists: this resolver cannot be trusted',
      });
    } finally {
      useUpstreamNetwork({ connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS, dnsServers: null });
      await lying.close();
    }
  });

  it('checks at start-up that its API answers (checkReach)', async () => {
    fake.reply({ status: 405, body: '' });
    await expect(
      gravatarProvider.checkReach?.({ GRAVATAR_BASE_URL: fake.url }, AbortSignal.timeout(5000)),
    ).resolves.toBe(true);
  });

  it('reads a Retry-After where one is sent', async () => {
    fake.reply({ ...fixture('not-ok/429.json'), headers: { 'retry-after': '30' } });
    await expect(lookup()).rejects.toMatchObject({ code: 'rate_limited', retryAfterMs: 30_000 });
  });
});
