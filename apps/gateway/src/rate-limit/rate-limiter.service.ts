import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DomainError } from '@dossier/domain';
import type { Redis } from 'ioredis';
import type { GatewayConfig } from '@dossier/config';
import { GATEWAY_CONFIG, REDIS } from '../infra/tokens';

/**
 * Token bucket held in Redis, so the limit holds across every gateway process. Redis's own clock
 * (TIME) is used, so gateways with skewed clocks agree. KEYS[2], when given, is a veto: if that key
 * exists the script answers -1 and takes no token (auth uses it for revoked API keys, so the check
 * rides on a call every request makes). Returns: allowed (1, 0, or -1 = vetoed), whole tokens left,
 * ms until a token is available (when refused), ms until full.
 */
const TOKEN_BUCKET = `
if KEYS[2] ~= '' and redis.call('EXISTS', KEYS[2]) == 1 then return { -1, 0, 0, 0 } end
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
  /** The veto key existed: the caller refuses the request for its own reason; no token was taken. */
  vetoed: boolean;
  limit: number;
  remaining: number;
  resetS: number;
  retryAfterS: number;
}

type TokenBucketCommand = (bucket: string, veto: string, rps: number, burst: number) => Promise<number[]>;

@Injectable()
export class RateLimiterService {
  private readonly keyPrefix: string;
  private readonly run: TokenBucketCommand;

  constructor(
    @Inject(REDIS) redis: Redis,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    this.keyPrefix = `${config.queuePrefix}:ratelimit:`;
    redis.defineCommand('dossierTokenBucket', { numberOfKeys: 2, lua: TOKEN_BUCKET });
    const command = (redis as unknown as Record<string, TokenBucketCommand>)['dossierTokenBucket']!;
    this.run = command.bind(redis);
  }

  /** `identity` is `key:<id>` or `ip:<address>`; `vetoKey`, when given, is checked in the same Redis call. */
  async take(identity: string, vetoKey?: string): Promise<RateDecision> {
    const { rps, burst } = this.config.rateLimit;
    const [allowed, remaining, retryMs, resetMs] = await this.run(this.keyPrefix + identity, vetoKey ?? '', rps, burst);
    return {
      vetoed: allowed === -1,
      allowed: allowed === 1,
      limit: burst,
      remaining: remaining ?? 0,
      resetS: Math.ceil((resetMs ?? 0) / 1000),
      retryAfterS: Math.max(1, Math.ceil((retryMs ?? 0) / 1000)),
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
