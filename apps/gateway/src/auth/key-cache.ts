import type { AuthContext } from './auth-context';

/** How long a gateway trusts a key lookup. Revocation is enforced sooner, by a Redis marker (see RateLimiterService). */
export const KEY_CACHE_TTL_MS = 30_000;
const MAX_ENTRIES = 50_000;

/**
 * How long a gateway remembers that a well-formed key is unknown (or revoked) in Postgres, and how many
 * such hashes at most (ADR 0008). Short and small: it only spares Postgres a client that keeps sending
 * the same dead key; a newly issued key can never be in it (see `setUnknown`).
 */
export const UNKNOWN_KEY_TTL_MS = 5_000;
const MAX_UNKNOWN_ENTRIES = 10_000;

/**
 * Recently authenticated API keys by key hash, so a busy key costs no Postgres round trip per
 * request; a revoked key is refused from the next request on through the revocation marker checked in
 * the rate-limit call, and evicted here. Also, briefly, the hashes Postgres did not know (a negative
 * cache), so that a client repeating an unknown or revoked key costs no query per request.
 */
export class KeyCache {
  private readonly entries = new Map<string, { auth: AuthContext; expiresAt: number }>();
  private readonly unknown = new Map<string, number>();

  get(hash: string, now = Date.now()): AuthContext | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.auth;
  }

  set(hash: string, auth: AuthContext, now = Date.now()): void {
    this.unknown.delete(hash);
    boundedSet(this.entries, MAX_ENTRIES, hash, { auth, expiresAt: now + KEY_CACHE_TTL_MS });
  }

  evictKey(keyId: string): void {
    for (const [hash, entry] of this.entries) if (entry.auth.keyId === keyId) this.entries.delete(hash);
  }

  /** Whether Postgres found no live key of this hash less than UNKNOWN_KEY_TTL_MS ago. */
  isUnknown(hash: string, now = Date.now()): boolean {
    const expiresAt = this.unknown.get(hash);
    if (expiresAt === undefined) return false;
    if (expiresAt <= now) {
      this.unknown.delete(hash);
      return false;
    }
    return true;
  }

  /**
   * Postgres has no live key of this hash. Safe on every gateway without any invalidation message: a key
   * is 238 random bits drawn when it is created and shown only once its row is committed, so no client
   * can have presented a new key — on this gateway or another — before it existed. A revoked key stays
   * revoked. `forgetUnknown` is for the gateway that issues a key all the same.
   */
  setUnknown(hash: string, now = Date.now()): void {
    boundedSet(this.unknown, MAX_UNKNOWN_ENTRIES, hash, now + UNKNOWN_KEY_TTL_MS);
  }

  forgetUnknown(hash: string): void {
    this.unknown.delete(hash);
  }
}

/** Sets `key`, first dropping the oldest entry when the map is full (Map iteration is insertion order). */
function boundedSet<V>(map: Map<string, V>, max: number, key: string, value: V): void {
  if (!map.has(key) && map.size >= max) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}
