import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DomainError } from '@dossier/domain';
import { RedisTokenBucket, type GatewayConfig, type RedisClient } from '@dossier/config';
import { GATEWAY_CONFIG, REDIS } from '../infra/tokens';

export interface RateDecision {
  allowed: boolean;
  /** The veto key existed: the caller refuses the request for its own reason; no token was taken. */
  vetoed: boolean;
  limit: number;
  remaining: number;
  resetS: number;
  retryAfterS: number;
}

@Injectable()
export class RateLimiterService {
  private readonly keyPrefix: string;
  private readonly bucket: RedisTokenBucket;

  constructor(
    @Inject(REDIS) redis: RedisClient,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    this.keyPrefix = `${config.queuePrefix}:ratelimit:`;
    this.bucket = new RedisTokenBucket(redis);
  }

  /** `identity` is `key:<id>` or `ip:<address>`; `vetoKey`, when given, is checked in the same Redis call. */
  async take(identity: string, vetoKey?: string): Promise<RateDecision> {
    const { rps, burst } = this.config.rateLimit;
    const d = await this.bucket.take(this.keyPrefix + identity, rps, burst, vetoKey);
    return {
      vetoed: d.vetoed,
      allowed: d.allowed,
      limit: burst,
      remaining: d.remaining,
      resetS: Math.ceil(d.resetMs / 1000),
      retryAfterS: Math.max(1, Math.ceil(d.retryMs / 1000)),
    };
  }

  /**
   * Takes a token for `identity`, sets RateLimit-* on the reply, and throws 429 when none is left. A
   * vetoed decision is returned as is (no headers, no error): the caller knows what the veto means.
   */
  async enforce(identity: string, reply: FastifyReply, vetoKey?: string): Promise<RateDecision> {
    const decision = await this.take(identity, vetoKey);
    if (decision.vetoed) return decision;
    void reply.header('RateLimit-Limit', String(decision.limit));
    void reply.header('RateLimit-Remaining', String(decision.remaining));
    void reply.header('RateLimit-Reset', String(decision.resetS));
    if (!decision.allowed) {
      throw new DomainError('rate_limited', `too many requests; retry in ${decision.retryAfterS}s`, {
        retryAfterS: decision.retryAfterS,
      });
    }
    return decision;
  }
}
