import IORedis, { type Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { CircuitState } from 'cockatiel';
import { RedisTokenBucket } from '@dossier/runtime';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROVIDERS, ProviderError, SkippedCall, unguardedContext } from '@dossier/providers';
import { FakeUpstream, REPO_ROOT, testEnv, uniquePrefix } from '@dossier/testing';
import { ProviderMetrics } from './provider-metrics';
import { CallersDeadline, UpstreamGuards, type GuardSettings } from './upstream-guards';

describe('UpstreamGuards against the real Redis', () => {
  let redis: Redis;
  const prefix = uniquePrefix('guards');

  beforeAll(() => {
    redis = new IORedis(testEnv.redisUrl);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** One worker process's guards; several on the same prefix share the rate limits, as workers do. */
  const guards = (settings: Partial<GuardSettings> = {}, registry = new Registry()) =>
    new UpstreamGuards(
      new RedisTokenBucket(redis),
      prefix,
      { breakerThreshold: 3, halfOpenAfterMs: 300, maxAttempts: 3, ...settings },
      new ProviderMetrics(registry),
    );
  const soon = (ms = 5000) => Date.now() + ms;
  const failing = (code: ProviderError['code']) => () => Promise.reject(new ProviderError(code, `x: ${code}`));

  it('retries a transient failure (5xx, refused) with backoff, and nothing else', async () => {
    const g = guards({ breakerThreshold: 100 });
    let calls = 0;
    await expect(
      g.run({ id: 'flaky' }, soon(), () => (++calls < 3 ? failing('unavailable')() : Promise.resolve('ok'))),
    ).resolves.toBe('ok');
    expect(calls).toBe(3);
    for (const code of ['rate_limited', 'blocked', 'malformed', 'unrecoverable', 'rejected'] as const) {
      let n = 0;
      await expect(g.run({ id: `once-${code}` }, soon(), () => (n++, failing(code)()))).rejects.toMatchObject({ code });
      expect([code, n]).toEqual([code, 1]);
    }
  });

  it('retries a 5xx after the wait its Retry-After names when that ends before the deadline, else gives up at once', async () => {
    const g = guards({ breakerThreshold: 100 });
    const at: number[] = [];
    const busyOnce = () => (
      at.push(Date.now()),
      at.length === 1
        ? Promise.reject(new ProviderError('unavailable', 'x: upstream error (503)', 2100))
        : Promise.resolve('ok')
    );
    await expect(g.run({ id: 'busy' }, soon(5000), busyOnce)).resolves.toBe('ok');
    expect(at).toHaveLength(2);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(2100);

    // A wait past the deadline: no retry (it could only time out), the upstream's own answer instead.
    let calls = 0;
    const busy = () => (calls++, Promise.reject(new ProviderError('unavailable', 'x: upstream error (503)', 10_000)));
    await expect(g.run({ id: 'busy-long' }, soon(1000), busy)).rejects.toMatchObject({
      code: 'unavailable',
      message: 'x: upstream error (503); its Retry-After (10s) ends past the deadline',
    });
    expect(calls).toBe(1);
  });

  it('opens the circuit after consecutive failures, skips calls while open, and closes after a good probe', async () => {
    const registry = new Registry();
    const g = guards({ maxAttempts: 1 }, registry);
    for (let i = 0; i < 3; i++)
      await expect(g.run({ id: 'down' }, soon(), failing('unavailable'))).rejects.toThrow(ProviderError);
    let called = false;
    const skipped = await g
      .run({ id: 'down' }, soon(), () => ((called = true), Promise.resolve('x')))
      .catch((e: unknown) => e);
    expect(skipped).toBeInstanceOf(SkippedCall);
    expect((skipped as Error).message).toMatch(
      /^down: circuit open after 3 consecutive failures: last failure x: unavailable/,
    );
    expect(called).toBe(false);
    expect(await registry.metrics()).toContain('dossier_provider_breaker_state{provider="down"} 2');
    await new Promise((r) => setTimeout(r, 350));
    await expect(g.run({ id: 'down' }, soon(), () => Promise.resolve('back'))).resolves.toBe('back');
    await expect(g.run({ id: 'down' }, soon(), () => Promise.resolve('again'))).resolves.toBe('again');
    expect(await registry.metrics()).toContain('dossier_provider_breaker_state{provider="down"} 0');
  });

  it('does not count a 429, a bot wall or a refused request towards the breaker: the upstream is up', async () => {
    const g = guards({ maxAttempts: 1 });
    for (const code of ['rate_limited', 'blocked', 'rejected'] as const) {
      for (let i = 0; i < 5; i++)
        await expect(g.run({ id: `up-${code}` }, soon(), failing(code))).rejects.toThrow(ProviderError);
      await expect(g.run({ id: `up-${code}` }, soon(), () => Promise.resolve('ok'))).resolves.toBe('ok');
    }
    // credentials refused: every call would fail, so it does count
    for (let i = 0; i < 3; i++)
      await expect(g.run({ id: 'keyless' }, soon(), failing('unrecoverable'))).rejects.toThrow(ProviderError);
    await expect(g.run({ id: 'keyless' }, soon(), () => Promise.resolve('ok'))).rejects.toBeInstanceOf(SkippedCall);
  });

  it('shares a rate limit between worker processes through Redis', async () => {
    const [a, b] = [guards(), guards()];
    const limited = { id: 'metered', rateLimit: { max: 3, perMs: 60_000 } };
    const results = await Promise.allSettled(
      [a, b, a, b, a, b].map((g) => g.run(limited, soon(200), () => Promise.resolve('ok'))),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    const refused = results
      .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      .map((r) => r.reason as ProviderError);
    expect(refused.map((e) => e.code)).toEqual(['rate_limited', 'rate_limited', 'rate_limited']);
    expect(refused[0]!.message).toBe('metered: the shared limit of 3 calls per 60s is used up');
  });

  /** The time a skipped call's detail says the upstream is held off until. */
  const heldUntil = (error: unknown): number => {
    expect(error).toBeInstanceOf(SkippedCall);
    const until = /not called until (\S+Z)/.exec((error as Error).message)?.[1];
    expect(until).toBeDefined();
    return Date.parse(until!);
  };

  it('holds an upstream off for the wait its 429 named, in every worker process, sending nothing until it ends', async () => {
    const [a, b] = [guards(), guards()];
    const quota = { id: 'monthly-quota', rateLimit: { max: 100, perMs: 1000 } };
    const limited = new ProviderError('rate_limited', "hunter: the plan's usage limit is reached (429)", 3_600_000);
    await expect(a.run(quota, soon(), () => Promise.reject(limited))).rejects.toBe(limited);
    let calls = 0;
    const call = () => (calls++, Promise.resolve('ok'));
    for (const g of [a, b, a, b]) {
      const error = await g.run(quota, soon(), call).catch((e: unknown) => e);
      expect((error as Error).message).toMatch(
        /^monthly-quota: not called until \S+Z, the wait its last 429 asked for \(at most 1h\)$/,
      );
      expect(heldUntil(error) - Date.now()).toBeGreaterThan(3_590_000);
    }
    expect(calls).toBe(0);
  });

  it('holds the upstream off in this process at once, whatever becomes of the write to Redis', async () => {
    // The hold's write to Redis is not awaited (ADR 0038): the next call in this process reads the hold from
    // memory, and a write Redis refuses neither changes the 429's answer nor rejects unhandled.
    const bucket = new RedisTokenBucket(redis);
    let takes = 0;
    const refusing = {
      take: (...args: Parameters<RedisTokenBucket['take']>) => (takes++, bucket.take(...args)),
      veto: () => Promise.reject(new Error('READONLY You cannot write against a read only replica.')),
    };
    const g = new UpstreamGuards(
      refusing,
      prefix,
      { breakerThreshold: 3, halfOpenAfterMs: 300, maxAttempts: 3 },
      new ProviderMetrics(new Registry()),
    );
    const quota = { id: 'hold-unwritten', rateLimit: { max: 100, perMs: 1000 } };
    const limited = new ProviderError('rate_limited', 'x: rate limited (429, retry after 60s)', 60_000);
    await expect(g.run(quota, soon(), () => Promise.reject(limited))).rejects.toBe(limited);
    let called = false;
    const next = await g.run(quota, soon(), () => ((called = true), Promise.resolve('x'))).catch((e: unknown) => e);
    expect(heldUntil(next) - Date.now()).toBeGreaterThan(50_000);
    expect([called, takes]).toEqual([false, 1]);
  });

  it("holds Hunter off after its monthly limit's 429 (Retry-After: 3600): the next lookups send it nothing", async () => {
    const hunter = await FakeUpstream.start();
    try {
      hunter.reply(
        JSON.parse(readFileSync(join(REPO_ROOT, 'libs/providers/src/hunter/fixtures/not-ok/429.json'), 'utf8')),
      );
      const hunterProvider = PROVIDERS.find((p) => p.id === 'hunter')!;
      const settings = { HUNTER_API_KEY: 'hk_test', HUNTER_BASE_URL: hunter.url };
      const lookup = (g: UpstreamGuards) =>
        g.run({ id: 'hunter', rateLimit: hunterProvider.rateLimit }, soon(), (signal) =>
          hunterProvider.lookup('email', { email: 'patrick@stripe.com' }, unguardedContext(signal, settings)),
        );
      const [a, b] = [guards(), guards()];
      await expect(lookup(a)).rejects.toMatchObject({ code: 'rate_limited', retryAfterMs: 3_600_000 });
      for (const g of [a, b, a]) await expect(lookup(g)).rejects.toBeInstanceOf(SkippedCall);
      expect(hunter.requests).toHaveLength(1);
    } finally {
      await hunter.close();
    }
  });

  it("counts a call that another worker's hold skips neither as a success nor as a failure of the breaker", async () => {
    const registry = new Registry();
    const [a, b] = [guards({ maxAttempts: 1 }, registry), guards({ maxAttempts: 1 })];
    const down = { id: 'down-then-held', rateLimit: { max: 100, perMs: 1000 } };
    const state = () => a.states().find(([id]) => id === down.id)?.[1];
    for (let i = 0; i < 3; i++)
      await expect(a.run(down, soon(), failing('unavailable'))).rejects.toThrow(ProviderError);
    expect(state()).toBe(CircuitState.Open);
    // Another worker meets the upstream's 429 and holds it off in Redis while this one's circuit waits.
    const limited = new ProviderError('rate_limited', 'x: rate limited (429, retry after 1s)', 1000);
    await expect(b.run(down, soon(), () => Promise.reject(limited))).rejects.toBe(limited);
    await new Promise((r) => setTimeout(r, 350));
    // The circuit's half-open probe is due, but the hold skips the call: nothing was asked, nothing learned.
    let called = false;
    const held = await a.run(down, soon(), () => ((called = true), Promise.resolve('x'))).catch((e: unknown) => e);
    expect((held as Error).message).toMatch(/^down-then-held: not called until \S+Z, the wait its last 429 asked/);
    expect(called).toBe(false);
    expect(state()).toBe(CircuitState.Open);
    expect(await registry.metrics()).toContain('dossier_provider_breaker_state{provider="down-then-held"} 2');
    // Once the hold is over (its detail names the second it ends in), the first call is still the half-open probe: one more failure opens the circuit again.
    await new Promise((r) => setTimeout(r, heldUntil(held) + 1000 - Date.now()));
    await expect(a.run(down, soon(), failing('unavailable'))).rejects.toThrow(ProviderError);
    await expect(a.run(down, soon(), () => Promise.resolve('x'))).rejects.toThrow(/circuit open after 3 consecutive/);
  });

  it("does not let a skipped call reset the breaker's count of consecutive failures", async () => {
    const [a, b] = [guards({ maxAttempts: 1 }), guards({ maxAttempts: 1 })];
    const flaky = { id: 'failing-then-held', rateLimit: { max: 100, perMs: 1000 } };
    for (let i = 0; i < 2; i++)
      await expect(a.run(flaky, soon(), failing('unavailable'))).rejects.toThrow(ProviderError);
    const limited = new ProviderError('rate_limited', 'x: rate limited (429, retry after 1s)', 300);
    await expect(b.run(flaky, soon(), () => Promise.reject(limited))).rejects.toBe(limited);
    const held = await a.run(flaky, soon(), () => Promise.resolve('x')).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, heldUntil(held) + 1000 - Date.now()));
    // The third failure in a row, the skip between them not counted: the circuit opens.
    await expect(a.run(flaky, soon(), failing('unavailable'))).rejects.toThrow(ProviderError);
    await expect(a.run(flaky, soon(), () => Promise.resolve('x'))).rejects.toThrow(/circuit open after 3 consecutive/);
  });

  it("ends a call with the upstream's own failure when a hold refuses its retry, and counts that failure", async () => {
    const [a, b] = [guards({ breakerThreshold: 1, maxAttempts: 2 }), guards()];
    const busy = { id: 'busy-then-held', rateLimit: { max: 100, perMs: 1000 } };
    const limited = new ProviderError('rate_limited', 'x: rate limited (429, retry after 60s)', 60_000);
    let calls = 0;
    const failingWhileHeld = async () => {
      calls++;
      // Between this attempt and its retry, another worker meets the upstream's 429.
      await expect(b.run(busy, soon(), () => Promise.reject(limited))).rejects.toBe(limited);
      throw new ProviderError('unavailable', 'x: upstream error (503)');
    };
    await expect(a.run(busy, soon(), failingWhileHeld)).rejects.toMatchObject({
      code: 'unavailable',
      message: 'x: upstream error (503)',
    });
    expect(calls).toBe(1);
    expect(a.states().find(([id]) => id === busy.id)?.[1]).toBe(CircuitState.Open);
  });

  it('holds off for an hour at most, whatever the upstream asked for, and calls again once the wait is over', async () => {
    const g = guards();
    const tenDays = new ProviderError('rate_limited', 'x: rate limited (429, retry after 864000s)', 864_000_000);
    await expect(
      g.run({ id: 'greedy', rateLimit: { max: 100, perMs: 1000 } }, soon(), () => Promise.reject(tenDays)),
    ).rejects.toBe(tenDays);
    const error = await g
      .run({ id: 'greedy', rateLimit: { max: 100, perMs: 1000 } }, soon(), () => Promise.resolve(1))
      .catch((e: unknown) => e);
    expect(heldUntil(error) - Date.now()).toBeLessThanOrEqual(3_600_000);

    const brief = new ProviderError('rate_limited', 'x: rate limited (429, retry after 1s)', 300);
    for (const upstream of [{ id: 'brief' }, { id: 'brief-shared', rateLimit: { max: 100, perMs: 1000 } }]) {
      await expect(g.run(upstream, soon(), () => Promise.reject(brief))).rejects.toBe(brief);
      await expect(g.run(upstream, soon(), () => Promise.resolve('early'))).rejects.toBeInstanceOf(SkippedCall);
      await new Promise((r) => setTimeout(r, 350));
      await expect(g.run(upstream, soon(), () => Promise.resolve('after'))).resolves.toBe('after');
    }
  });

  it("holds nothing off for Dossier's own shared limit, a 429 that names no wait, or an upstream that is each input's own", async () => {
    const g = guards();
    const own = { id: 'own-limit', rateLimit: { max: 1, perMs: 300 } };
    await g.run(own, soon(), () => Promise.resolve(1));
    await expect(g.run(own, Date.now() + 100, () => Promise.resolve(2))).rejects.toMatchObject({
      code: 'rate_limited',
    });
    await new Promise((r) => setTimeout(r, 350));
    await expect(g.run(own, soon(), () => Promise.resolve(3))).resolves.toBe(3);

    const noWait = new ProviderError('rate_limited', "pdl: the account's credits are used up (402)");
    await expect(g.run({ id: 'no-wait' }, soon(), () => Promise.reject(noWait))).rejects.toBe(noWait);
    await expect(g.run({ id: 'no-wait' }, soon(), () => Promise.resolve('ok'))).resolves.toBe('ok');

    const perInput = { id: 'mail-hosts', breaker: false };
    const busy = new ProviderError('rate_limited', 'smtp: too many connections', 60_000);
    await expect(g.run(perInput, soon(), () => Promise.reject(busy))).rejects.toBe(busy);
    await expect(g.run(perInput, soon(), () => Promise.resolve('next address'))).resolves.toBe('next address');
  });

  it('waits for a token when one comes before the deadline', async () => {
    const g = guards();
    const limited = { id: 'trickle', rateLimit: { max: 1, perMs: 200 } };
    const started = Date.now();
    await g.run(limited, soon(), () => Promise.resolve(1));
    await g.run(limited, soon(), () => Promise.resolve(2));
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('ends a call at its deadline, and does not retry past it', async () => {
    const g = guards({ breakerThreshold: 100 });
    let calls = 0;
    const slowFailure = () => (
      calls++,
      new Promise<never>((_, reject) => setTimeout(() => reject(new ProviderError('unavailable', 'x: 503')), 80))
    );
    await expect(g.run({ id: 'late' }, soon(100), slowFailure)).rejects.toMatchObject({
      code: expect.stringMatching(/timeout|unavailable/),
    });
    expect(calls).toBeLessThanOrEqual(2);
    await expect(g.run({ id: 'hangs' }, soon(50), () => new Promise(() => undefined))).rejects.toMatchObject({
      code: 'timeout',
    });
  });

  it("does not count a call the caller's deadline ended, before the upstream's own timeout, towards its breaker", async () => {
    const registry = new Registry();
    const g = guards({ breakerThreshold: 2, maxAttempts: 1 }, registry);
    const hang = () => new Promise<never>(() => undefined);
    // A job that waited in the queue: 60 ms of the request's wait left, against an own timeout of 5 s.
    for (let i = 0; i < 4; i++) {
      const cut = await g.run({ id: 'queued' }, soon(60), hang, { ownTimeoutAt: soon(5000) }).catch((e: unknown) => e);
      expect(cut).toBeInstanceOf(CallersDeadline);
      expect(cut).toMatchObject({ code: 'timeout' });
      expect((cut as Error).message).toMatch(/^queued: not answered within the \d+ ms the request's wait left it /);
    }
    expect(await registry.metrics()).not.toContain('dossier_provider_breaker_state{provider="queued"} 2');
    await expect(g.run({ id: 'queued' }, soon(), () => Promise.resolve('up'))).resolves.toBe('up');
    // Nor does it hide real failures: two 503s still open the circuit, cut-short calls between them or not.
    await expect(g.run({ id: 'queued' }, soon(), failing('unavailable'))).rejects.toThrow(ProviderError);
    await g.run({ id: 'queued' }, soon(60), hang, { ownTimeoutAt: soon(5000) }).catch(() => undefined);
    await expect(g.run({ id: 'queued' }, soon(), failing('unavailable'))).rejects.toThrow(ProviderError);
    await expect(g.run({ id: 'queued' }, soon(), () => Promise.resolve('x'))).rejects.toBeInstanceOf(SkippedCall);
  });

  it("counts a timeout at the upstream's own timeout: it was given all its time", async () => {
    const g = guards({ breakerThreshold: 2, maxAttempts: 1 });
    const hang = () => new Promise<never>(() => undefined);
    for (let i = 0; i < 2; i++) {
      const own = soon(60);
      const timedOut = await g.run({ id: 'slow' }, own, hang, { ownTimeoutAt: own }).catch((e: unknown) => e);
      expect(timedOut).toMatchObject({ code: 'timeout' });
      expect(timedOut).not.toBeInstanceOf(CallersDeadline);
    }
    await expect(g.run({ id: 'slow' }, soon(), () => Promise.resolve('x'))).rejects.toBeInstanceOf(SkippedCall);
  });
});
