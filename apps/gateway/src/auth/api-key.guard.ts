import { Inject, Injectable, Logger, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_PATTERN, DomainError } from '@dossier/domain';
import { ApiKeysRepository, hashApiKey } from '@dossier/persistence';
import { IS_PUBLIC } from './public.decorator';
import { KeyCache } from './key-cache';
import { RateLimiterService } from '../rate-limit/rate-limiter.service';
import { addressIdentity } from '../rate-limit/client-address';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;
const REFUSED = 'the API key is not valid or has been revoked';

/**
 * The one global guard: every route needs a live API key unless it is marked @Public(). Successful
 * lookups are cached briefly (KeyCache), and so, for less time, are keys Postgres did not know; revocation
 * is enforced by the rate-limit guard's Redis call.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly logger = new Logger(ApiKeyGuard.name);

  constructor(
    private readonly reflector: Reflector,
    @Inject(ApiKeysRepository) private readonly keys: ApiKeysRepository,
    private readonly limiter: RateLimiterService,
    private readonly cache: KeyCache,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    try {
      await this.authenticate(request);
    } catch (err) {
      // A refused key still spends the caller's address bucket: guessing keys is rate-limited too.
      if (err instanceof DomainError && err.code === 'unauthorized') {
        await this.limiter.enforce(addressIdentity(request.ip), context.switchToHttp().getResponse<FastifyReply>());
      }
      throw err;
    }
    return true;
  }

  private async authenticate(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    if (!header) throw new DomainError('unauthorized', 'send your API key as Authorization: Bearer <API_KEY>');
    const match = BEARER.exec(header);
    if (!match?.[1]) throw new DomainError('unauthorized', 'the Authorization header must be: Bearer <API_KEY>');
    const key = match[1];
    if (!API_KEY_PATTERN.test(key)) throw new DomainError('unauthorized', 'the API key is not valid');
    const hash = hashApiKey(key);
    const cached = this.cache.get(hash);
    if (cached) {
      request.auth = cached;
      return;
    }
    if (this.cache.isUnknown(hash)) throw new DomainError('unauthorized', REFUSED);
    const found = await this.keys.authenticate(key);
    if (!found) {
      this.cache.setUnknown(hash);
      throw new DomainError('unauthorized', REFUSED);
    }
    request.auth = { keyId: found.key_id, accountId: found.account_id, mode: found.mode };
    this.cache.set(hash, request.auth);
    if (found.stale) {
      // Best effort and off the hot path: last_used_at is informational (minute resolution).
      this.keys.touch(found.key_id).catch((err: unknown) => this.logger.warn(`could not touch key: ${String(err)}`));
    }
  }
}
