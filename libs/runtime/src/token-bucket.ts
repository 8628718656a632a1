import type { RedisClient } from './redis';

/**
 * A token bucket held in Redis, so a limit holds across every process that shares the Redis (the
 * gateway's per-key limits, the worker's per-provider limits). Redis's own clock (TIME) is used, so
 * processes with skewed clocks agree. KEYS[2], when given, is a veto: if that key exists the script
 * answers -1 and takes no token. Returns: allowed (1, 0, or -1 = vetoed), whole tokens left, ms until a
 * token is available (when refused; when vetoed, the veto's own time to live, -1 if it has none), ms until
 * full. ARGV[3] says whether KEYS[2] is a veto: when it
 * is not, KEYS[2] repeats KEYS[1] so that, on Redis Cluster, both keys are in one slot.
 */
const TOKEN_BUCKET = `
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then return { -1, 0, redis.call('PTTL', KEYS[2]), 0 } end
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

/** Gives one token back to a bucket (at most up to `burst`); nothing when the bucket has expired (full). */
const GIVE_BACK = `
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens'))
if tokens == nil then return 0 end
redis.call('HSET', KEYS[1], 'tokens', tostring(math.min(tonumber(ARGV[1]), tokens + 1)))
return 1
`;

export interface BucketDecision {
  allowed: boolean;
  /** The veto key existed: no token was taken; the caller refuses for its own reason. */
  vetoed: boolean;
  /** Whole tokens left. */
  remaining: number;
  /** When refused: ms until a token is available; when vetoed: ms until the veto key expires (-1: never). */
  retryMs: number;
  /** Ms until the bucket is full again. */
  resetMs: number;
}

type TokenBucketCommand = (
  bucket: string,
  veto: string,
  ratePerS: number,
  burst: number,
  hasVeto: 0 | 1,
) => Promise<number[]>;
type GiveBackCommand = (bucket: string, burst: number) => Promise<number>;
const COMMAND = 'dossierTokenBucket';
const GIVE_BACK_COMMAND = 'dossierTokenGiveBack';

export class RedisTokenBucket {
  private readonly run: TokenBucketCommand;
  private readonly runGiveBack: GiveBackCommand;

  constructor(private readonly redis: RedisClient) {
    redis.defineCommand(COMMAND, { numberOfKeys: 2, lua: TOKEN_BUCKET });
    redis.defineCommand(GIVE_BACK_COMMAND, { numberOfKeys: 1, lua: GIVE_BACK });
    const commands = redis as unknown as Record<string, TokenBucketCommand & GiveBackCommand>;
    this.run = commands[COMMAND]!.bind(redis);
    this.runGiveBack = commands[GIVE_BACK_COMMAND]!.bind(redis);
  }

  /** Sets `key`, a veto for `take`, for `ms`: the bucket refuses with `vetoed` until it expires. */
  async veto(key: string, ms: number): Promise<void> {
    await this.redis.set(key, '1', 'PX', Math.max(1, Math.ceil(ms)));
  }

  /** Returns a token taken from `key` (a failure that did not happen: only failures count). */
  async giveBack(key: string, burst: number): Promise<void> {
    await this.runGiveBack(key, burst);
  }

  /** Takes a token from `key` (refilled at `ratePerS`, holding at most `burst`), unless `vetoKey` exists. */
  async take(key: string, ratePerS: number, burst: number, vetoKey?: string): Promise<BucketDecision> {
    const [allowed, remaining, retryMs, resetMs] = await this.run(
      key,
      vetoKey ?? key,
      ratePerS,
      burst,
      vetoKey === undefined ? 0 : 1,
    );
    return {
      allowed: allowed === 1,
      vetoed: allowed === -1,
      remaining: remaining ?? 0,
      retryMs: retryMs ?? 0,
      resetMs: resetMs ?? 0,
    };
  }
}
