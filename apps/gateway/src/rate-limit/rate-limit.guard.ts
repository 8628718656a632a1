import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '@dossier/domain';
import { KeyCache } from '../auth/key-cache';
import { RateLimiterService } from './rate-limiter.service';

/**
 * Runs after the key guard on every /v1 route: per key when authenticated, per client address on the
 * public auth routes (which also slows password guessing). Requests with a bad key are limited per
 * address by the key guard itself. For keys, the same Redis call checks the key's revocation marker.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly limiter: RateLimiterService,
    private readonly cache: KeyCache,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    if (!request.url.startsWith('/v1/')) return true;
    const reply = http.getResponse<FastifyReply>();
    const keyId = request.auth?.keyId;
    if (keyId === undefined) {
      await this.limiter.enforce(`ip:${request.ip}`, reply);
      return true;
    }
    await this.limiter.enforce(`key:${keyId}`, reply, keyId).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === 'unauthorized') this.cache.evictKey(keyId);
      throw err;
    });
    return true;
  }
}
