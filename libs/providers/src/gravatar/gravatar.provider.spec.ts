import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeUpstream, REPO_ROOT, type FakeAnswer } from '@dossier/testing';
import { ProviderError, unguardedContext } from '../provider';
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

  it('reads a Retry-After where one is sent', async () => {
    fake.reply({ ...fixture('not-ok/429.json'), headers: { 'retry-after': '30' } });
    await expect(lookup()).rejects.toMatchObject({ code: 'rate_limited', retryAfterMs: 30_000 });
  });
});
