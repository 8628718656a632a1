/** Calls or attempts allowed: `max` per `perMs` (a provider's shared limit, the failed logins of one account). */
export interface RateLimit {
  max: number;
  perMs: number;
}

/** `600/300s`, `10/1s`, `10/10m`, `100/1h` → a RateLimit; null for a malformed one. */
export function parseRate(value: string): RateLimit | null {
  const m = /^\s*(\d+)\s*\/\s*(\d+)?\s*(ms|s|m|h)\s*$/.exec(value);
  if (!m) return null;
  const max = Number(m[1]);
  const perMs = Number(m[2] ?? 1) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[3] as 'ms' | 's' | 'm' | 'h'];
  return max > 0 && perMs > 0 ? { max, perMs } : null;
}

/** The expected shape, for messages about a malformed value. */
export const RATE_FORMAT = 'calls/period such as 600/300s or 10/1s';
