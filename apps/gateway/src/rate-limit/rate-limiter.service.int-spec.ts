import { jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import IORedis, { type Redis } from 'ioredis';
import type { FastifyReply } from 'fastify';
import { loadGatewayConfig } from '@dossier/config';
import { testEnv, uniquePrefix } from '@dossier/testing';
import { GATEWAY_CONFIG, REDIS } from '../infra/tokens';
import { RateLimiterService } from './rate-limiter.service';

describe('RateLimiterService against the real Redis', () => {
  let redis: Redis;
  let limiter: RateLimiterService;
  const prefix = uniquePrefix('ratelimit');

  beforeAll(async () => {
    redis = new IORedis(testEnv.redisUrl);
    const moduleRef = await Test.createTestingModule({
      providers: [
        RateLimiterService,
        { provide: REDIS, useValue: redis },
        // 1 token a second, 3 at most: a burst of 3, then refusals for about a second.
        {
          provide: GATEWAY_CONFIG,
          useValue: loadGatewayConfig({ QUEUE_PREFIX: prefix, RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '3' }),
        },
      ],
    }).compile();
    limiter = moduleRef.get(RateLimiterService);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  const reply = () => {
    const headers: Record<string, string> = {};
    const r = { header: jest.fn((k: string, v: string) => ((headers[k] = v), r)) };
    return { reply: r as unknown as FastifyReply, headers };
  };

  it('allows a burst, then refuses with the time until a token is back', async () => {
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.take('key:burst'));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    expect(decisions[3]).toMatchObject({ vetoed: false, limit: 3, retryAfterS: 1 });
  });

  it('keeps one bucket per identity', async () => {
    for (let i = 0; i < 3; i++) await limiter.take('key:a');
    expect((await limiter.take('key:a')).allowed).toBe(false);
    expect((await limiter.take('key:b')).allowed).toBe(true);
  });

  it('sets RateLimit-* on the reply and throws rate_limited with Retry-After when the bucket is empty', async () => {
    const { reply: r, headers } = reply();
    await limiter.enforce('ip:203.0.113.9', r);
    expect(headers).toEqual({ 'RateLimit-Limit': '3', 'RateLimit-Remaining': '2', 'RateLimit-Reset': '1' });
    await limiter.enforce('ip:203.0.113.9', r);
    await limiter.enforce('ip:203.0.113.9', r);
    await expect(limiter.enforce('ip:203.0.113.9', r)).rejects.toMatchObject({ code: 'rate_limited', retryAfterS: 1 });
  });

  it('answers vetoed, taking no token and setting no header, while the veto key exists', async () => {
    const veto = `${prefix}:veto`;
    await redis.set(veto, '1');
    const { reply: r, headers } = reply();
    await expect(limiter.enforce('key:vetoed', r, veto)).resolves.toMatchObject({ vetoed: true, allowed: false });
    expect(headers).toEqual({});
    await redis.del(veto);
    const after = await limiter.take('key:vetoed', veto);
    expect(after).toMatchObject({ vetoed: false, allowed: true, remaining: 2 });
  });
});
