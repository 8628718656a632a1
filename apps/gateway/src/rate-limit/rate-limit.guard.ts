import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '@dossier/domain';
import { RateLimiterService } from './rate-limiter.service';

/**
 * Runs after the key guard on every /v1 route: per key when authenticated, per client address on the
 * public auth routes (which also slows password guessing). Sets RateLimit-* on every answer.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(private readonly limiter: RateLimiterService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    if (!request.url.startsWith('/v1/')) return true;
    const reply = http.getResponse<FastifyReply>();
    const identity = request.auth ? `key:${request.auth.keyId}` : `ip:${request.ip}`;
    const decision = await this.limiter.take(identity);
    void reply.header('RateLimit-Limit', String(decision.limit));
    void reply.header('RateLimit-Remaining', String(decision.remaining));
    void reply.header('RateLimit-Reset', String(decision.resetS));
    if (!decision.allowed) {
      throw new DomainError('rate_limited', `too many requests; retry in ${decision.retryAfterS}s`, {
        retryAfterS: decision.retryAfterS,
      });
    }
    return true;
  }
}
