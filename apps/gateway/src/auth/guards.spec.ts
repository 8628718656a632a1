import { jest } from '@jest/globals';
import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { Test } from '@nestjs/testing';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, newApiKey } from '@dossier/domain';
import { ApiKeysRepository, hashApiKey } from '@dossier/persistence';
import { RateLimiterService, type RateDecision } from '../rate-limit/rate-limiter.service';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard';
import { ApiKeyGuard } from './api-key.guard';
import { KeyCache } from './key-cache';
import { KeyRevocations } from './key-revocations';
import { Public } from './public.decorator';

@Controller()
class Routes {
  @Get('private')
  guarded(): void {}

  @Public()
  @Get('public')
  open(): void {}
}

const decision = (over: Partial<RateDecision> = {}): RateDecision => ({
  allowed: true,
  vetoed: false,
  limit: 100,
  remaining: 99,
  resetS: 1,
  retryAfterS: 1,
  ...over,
});

describe('the global guards', () => {
  const live = newApiKey();
  const stale = newApiKey();
  const keys = {
    authenticate: jest.fn(async (key: string) =>
      key === live || key === stale
        ? { key_id: key === live ? 'key_live' : 'key_stale', account_id: 'acct_1', mode: 'live', stale: key === stale }
        : null,
    ),
    touch: jest.fn(async () => undefined),
  };
  const limiter = { enforce: jest.fn(async (..._args: unknown[]) => decision()) };
  const revocations = { markerKey: (id: string) => `marker:${id}`, revoked: jest.fn(), revoke: jest.fn() };
  let keyGuard: ApiKeyGuard;
  let rateGuard: RateLimitGuard;
  let cache: KeyCache;

  beforeEach(async () => {
    jest.clearAllMocks();
    const moduleRef = await Test.createTestingModule({
      providers: [
        ApiKeyGuard,
        RateLimitGuard,
        Reflector,
        { provide: KeyCache, useValue: new KeyCache() },
        { provide: ApiKeysRepository, useValue: keys },
        { provide: RateLimiterService, useValue: limiter },
        { provide: KeyRevocations, useValue: revocations },
      ],
    }).compile();
    keyGuard = moduleRef.get(ApiKeyGuard);
    rateGuard = moduleRef.get(RateLimitGuard);
    cache = moduleRef.get(KeyCache);
  });

  function context(
    handler: 'guarded' | 'open',
    headers: Record<string, string> = {},
    route = '/v1/private',
    url = route,
  ) {
    const request = { headers, ip: '203.0.113.7', url, routeOptions: { url: route } } as unknown as FastifyRequest;
    const reply = { header: jest.fn() } as unknown as FastifyReply;
    const ctx = new ExecutionContextHost([request, reply], Routes, Routes.prototype[handler]) as ExecutionContext;
    return { ctx, request };
  }

  describe('ApiKeyGuard', () => {
    it('lets @Public() routes through without a key', async () => {
      await expect(keyGuard.canActivate(context('open').ctx)).resolves.toBe(true);
      expect(keys.authenticate).not.toHaveBeenCalled();
    });

    it.each([
      ['no Authorization header', {}],
      ['another scheme', { authorization: `Basic ${live}` }],
      ['a key of the wrong shape', { authorization: 'Bearer sk_live_123' }],
      ['an unknown key', { authorization: `Bearer ${newApiKey()}` }],
    ])('refuses %s with unauthorized, and spends the address bucket', async (_label, headers) => {
      const error = await keyGuard.canActivate(context('guarded', headers).ctx).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ code: 'unauthorized' });
      expect(limiter.enforce).toHaveBeenCalledWith('ip:203.0.113.7', expect.anything());
    });

    it('authenticates a live key, then serves it from the cache', async () => {
      const first = context('guarded', { authorization: `Bearer ${live}` });
      await expect(keyGuard.canActivate(first.ctx)).resolves.toBe(true);
      expect(first.request.auth).toEqual({ keyId: 'key_live', accountId: 'acct_1', mode: 'live' as const });
      const second = context('guarded', { authorization: `bearer  ${live} ` });
      await keyGuard.canActivate(second.ctx);
      expect(second.request.auth).toEqual({ keyId: 'key_live', accountId: 'acct_1', mode: 'live' as const });
      expect(keys.authenticate).toHaveBeenCalledTimes(1);
      expect(cache.get(hashApiKey(live))).toEqual({ keyId: 'key_live', accountId: 'acct_1', mode: 'live' as const });
      expect(keys.touch).not.toHaveBeenCalled();
    });

    it('remembers an unknown key briefly: presenting it again costs no Postgres query, and is still refused', async () => {
      const unknown = newApiKey();
      for (let i = 0; i < 3; i++) {
        const error = await keyGuard
          .canActivate(context('guarded', { authorization: `Bearer ${unknown}` }).ctx)
          .catch((e: unknown) => e);
        expect(error).toMatchObject({ code: 'unauthorized' });
      }
      expect(keys.authenticate).toHaveBeenCalledTimes(1);
      expect(limiter.enforce).toHaveBeenCalledTimes(3);
    });

    it('refreshes last_used_at of a key not used for a while, off the request path', async () => {
      await keyGuard.canActivate(context('guarded', { authorization: `Bearer ${stale}` }).ctx);
      expect(keys.touch).toHaveBeenCalledWith('key_stale');
    });
  });

  describe('RateLimitGuard', () => {
    it('leaves routes outside /v1 alone', async () => {
      await expect(rateGuard.canActivate(context('open', {}, '/health/ready').ctx)).resolves.toBe(true);
      expect(limiter.enforce).not.toHaveBeenCalled();
    });

    it('goes by the route that matched, not the raw URL: a percent-encoded /v1 is limited too', async () => {
      const { ctx, request } = context('guarded', {}, '/v1/private', '/%761/private');
      request.auth = { keyId: 'key_live', accountId: 'acct_1', mode: 'live' as const };
      await expect(rateGuard.canActivate(ctx)).resolves.toBe(true);
      expect(limiter.enforce).toHaveBeenCalledWith('key:key_live', expect.anything(), 'marker:key_live');
    });

    it('limits by client address where there is no key', async () => {
      await rateGuard.canActivate(context('open', {}, '/v1/auth/login').ctx);
      expect(limiter.enforce).toHaveBeenCalledWith('ip:203.0.113.7', expect.anything());
    });

    it("limits by key, checking auth's revocation marker in the same call", async () => {
      const { ctx, request } = context('guarded');
      request.auth = { keyId: 'key_live', accountId: 'acct_1', mode: 'live' as const };
      await expect(rateGuard.canActivate(ctx)).resolves.toBe(true);
      expect(limiter.enforce).toHaveBeenCalledWith('key:key_live', expect.anything(), 'marker:key_live');
    });

    it('refuses a revoked key with unauthorized, and lets auth forget it', async () => {
      limiter.enforce.mockResolvedValueOnce(decision({ vetoed: true, allowed: false }));
      const { ctx, request } = context('guarded');
      request.auth = { keyId: 'key_gone', accountId: 'acct_1', mode: 'live' as const };
      await expect(rateGuard.canActivate(ctx)).rejects.toMatchObject({ code: 'unauthorized' });
      expect(revocations.revoked).toHaveBeenCalledWith('key_gone');
    });
  });
});
