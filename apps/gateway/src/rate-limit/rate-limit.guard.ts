import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RateLimiterService } from './rate-limiter.service';

/**
 * Runs after the key guard on every /v1 route: per key when authenticated, per client address on the
 * public auth routes (which also slows password guessing). Requests with a bad key are limited per
 * address by the key guard itself.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(private readonly limiter: RateLimiterService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    if (!request.url.startsWith('/v1/')) return true;
    const identity = request.auth ? `key:${request.auth.keyId}` : `ip:${request.ip}`;
    await this.limiter.enforce(identity, http.getResponse<FastifyReply>());
    return true;
  }
}
