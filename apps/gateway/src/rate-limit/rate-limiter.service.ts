import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DomainError } from '@dossier/domain';
import type { Redis } from 'ioredis';
import type { GatewayConfig } from '@dossier/config';
import { GATEWAY_CONFIG, REDIS } from '../infra/tokens';

/**
 * Token bucket held in Redis, so the limit holds across every gateway process. Redis's own clock
 * (TIME) is used, so gateways with skewed clocks agree.
 * Returns: allowed (0/1), whole tokens left, ms until a token is available (when refused), ms until full.
 */
const TOKEN_BUCKET = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(b[1])
local ts = tonumber(b[2])
if tokens == nil then tokens = burst; ts = now end
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local allowed = 0
if tokens >= 1 then tokens = tokens - 1; allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
local retry = 0
if allowed == 0 then retry = math.ceil((1 - tokens) * 1000 / rate) end
return { allowed, math.floor(tokens), retry, math.ceil((burst - tokens) * 1000 / rate) }
`;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetS: number;
  retryAfterS: number;
}

@Injectable()
export class RateLimiterService {
  private readonly keyPrefix: string;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    this.keyPrefix = `${config.queuePrefix}:ratelimit:`;
    this.redis.defineCommand('dossierTokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET });
  }

  async take(identity: string): Promise<RateDecision> {
    const { rps, burst } = this.config.rateLimit;
    const run = (this.redis as unknown as Record<string, (...a: unknown[]) => Promise<number[]>>)['dossierTokenBucket']!;
    const [allowed, remaining, retryMs, resetMs] = await run.call(this.redis, this.keyPrefix + identity, rps, burst);
    return {
      allowed: allowed === 1,
      limit: burst,
      remaining: remaining ?? 0,
      resetS: Math.ceil((resetMs ?? 0) / 1000),
      retryAfterS: Math.max(1, Math.ceil((retryMs ?? 0) / 1000)),
    };
  }

  /** Takes a token for `identity`, sets RateLimit-* on the reply, and throws 429 when none is left. */
  async enforce(identity: string, reply: FastifyReply): Promise<void> {
    const decision = await this.take(identity);
    void reply.header('RateLimit-Limit', String(decision.limit));
    void reply.header('RateLimit-Remaining', String(decision.remaining));
    void reply.header('RateLimit-Reset', String(decision.resetS));
    if (!decision.allowed) {
      throw new DomainError('rate_limited', `too many requests; retry in ${decision.retryAfterS}s`, {
        retryAfterS: decision.retryAfterS,
      });
    }
  }
}
