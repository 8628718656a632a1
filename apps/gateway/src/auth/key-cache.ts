import type { AuthContext } from './auth-context';

/** How long a gateway trusts a key lookup. Revocation is enforced sooner, by a Redis marker (see RateLimiterService). */
export const KEY_CACHE_TTL_MS = 30_000;
const MAX_ENTRIES = 50_000;

/**
 * Recently authenticated API keys by key hash, so a busy key costs no Postgres round trip per
 * request. Only successes are cached; a revoked key is refused from the next request on through the
 * revocation marker checked in the rate-limit call, and evicted here.
 */
export class KeyCache {
  private readonly entries = new Map<string, { auth: AuthContext; expiresAt: number }>();

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
    if (this.entries.size >= MAX_ENTRIES) {
      // Map iteration is insertion order: drop the oldest entry.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(hash, { auth, expiresAt: now + KEY_CACHE_TTL_MS });
  }

  evictKey(keyId: string): void {
    for (const [hash, entry] of this.entries) if (entry.auth.keyId === keyId) this.entries.delete(hash);
  }
}
