import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DomainError } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import { RedisTokenBucket, type RedisClient } from '@dossier/runtime';
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
   * A password check's token from its login bucket (LOGIN_FAILURE_LIMIT, ADR 0007): `subject` is the
   * account, or the unknown e-mail's hash. None left: 429 before any password is hashed. The answer gives
   * the token back; call it when the password was right, so that only failures count. Taken first, not
   * counted after: parallel guesses cannot all pass a check made before any of them failed.
   */
  async takeLoginAttempt(subject: string): Promise<() => Promise<void>> {
    const { max, perMs } = this.config.loginFailureLimit;
    const key = `${this.keyPrefix}login:${subject}`;
    const d = await this.bucket.take(key, (max * 1000) / perMs, max);
    if (!d.allowed) {
      const retryAfterS = Math.max(1, Math.ceil(d.retryMs / 1000));
      throw new DomainError(
        'rate_limited',
        `too many failed logins for this e-mail address; retry in ${retryAfterS}s`,
        { retryAfterS },
      );
    }
    return () => this.bucket.giveBack(key, max);
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
