/** Calls or attempts allowed: `max` per `perMs` (a provider's shared limit, the failed logins of one account). */
export interface RateLimit {
  max: number;
  perMs: number;
}

/** Most calls one limit counts. */
const MAX_CALLS = 1_000_000_000;
/**
 * Longest period (8784 h, a leap year): a limit is a token bucket in Redis whose key expires once the bucket
 * is full again, one period on; Redis refuses an expiry much past this, and then every guarded call failed.
 */
const MAX_PERIOD_MS = 8784 * 3_600_000;

/**
 * `600/300s`, `10/1s`, `10/10m`, `100/1h` → a RateLimit; null for a malformed one, or one out of range (1 to
 * 1,000,000,000 calls in 1 ms to 8784 h).
 */
export function parseRate(value: string): RateLimit | null {
  const m = /^\s*(\d+)\s*\/\s*(\d+)?\s*(ms|s|m|h)\s*$/.exec(value);
  if (!m) return null;
  const max = Number(m[1]);
  const perMs = Number(m[2] ?? 1) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[3] as 'ms' | 's' | 'm' | 'h'];
  return max >= 1 && max <= MAX_CALLS && perMs >= 1 && perMs <= MAX_PERIOD_MS ? { max, perMs } : null;
}

/** The expected shape and range, for messages about a value that is not one. */
export const RATE_FORMAT = 'calls/period such as 600/300s or 10/1s, 1 to 1000000000 calls in 1ms to 8784h';
