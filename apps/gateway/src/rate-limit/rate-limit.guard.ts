import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '@dossier/domain';
import { KeyRevocations } from '../auth/key-revocations';
import { RateLimiterService } from './rate-limiter.service';
import { addressIdentity } from './client-address';

/**
 * Runs after the key guard on every route under /v1 (by the route Fastify matched): per key when authenticated, per client address on the
 * public auth routes (which also slows password guessing). Requests with a bad key are limited per
 * address by the key guard itself. For keys, the same Redis call checks auth's revocation marker.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly limiter: RateLimiterService,
    private readonly revocations: KeyRevocations,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    // The route that matched, not the raw URL: the router decodes percent-escapes, so `/%761/account`
    // reaches the /v1 handler while its raw URL does not start with /v1/.
    if (request.routeOptions.url?.startsWith('/v1/') !== true) return true;
    const reply = http.getResponse<FastifyReply>();
    const keyId = request.auth?.keyId;
    if (keyId === undefined) {
      await this.limiter.enforce(addressIdentity(request.ip), reply);
      return true;
    }
    const decision = await this.limiter.enforce(`key:${keyId}`, reply, this.revocations.markerKey(keyId));
    if (decision.vetoed) {
      this.revocations.revoked(keyId);
      throw new DomainError('unauthorized', 'the API key is not valid or has been revoked');
    }
    return true;
  }
}
