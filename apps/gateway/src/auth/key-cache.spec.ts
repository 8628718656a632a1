import { KEY_CACHE_TTL_MS, KeyCache, UNKNOWN_KEY_TTL_MS } from './key-cache';

describe('KeyCache', () => {
  it('serves an entry until its TTL and evicts by key id', () => {
    const cache = new KeyCache();
    cache.set('h1', { keyId: 'key_1', accountId: 'acct_1', mode: 'live' as const }, 0);
    cache.set('h2', { keyId: 'key_2', accountId: 'acct_1', mode: 'live' as const }, 0);
    expect(cache.get('h1', KEY_CACHE_TTL_MS - 1)).toEqual({
      keyId: 'key_1',
      accountId: 'acct_1',
      mode: 'live' as const,
    });
    expect(cache.get('h1', KEY_CACHE_TTL_MS)).toBeUndefined();
    cache.evictKey('key_2');
    expect(cache.get('h2', 1)).toBeUndefined();
    expect(cache.get('nope', 1)).toBeUndefined();
  });

  it('remembers an unknown hash until its short TTL, bounded in size, and forgets it once the key exists', () => {
    const cache = new KeyCache();
    cache.setUnknown('u1', 0);
    expect(cache.isUnknown('u1', UNKNOWN_KEY_TTL_MS - 1)).toBe(true);
    expect(cache.isUnknown('u1', UNKNOWN_KEY_TTL_MS)).toBe(false);
    expect(cache.isUnknown('never', 0)).toBe(false);

    cache.setUnknown('u2', 0);
    cache.forgetUnknown('u2');
    expect(cache.isUnknown('u2', 1)).toBe(false);

    // A successful lookup of the same hash replaces what was remembered as unknown.
    cache.setUnknown('u3', 0);
    cache.set('u3', { keyId: 'key_3', accountId: 'acct_1', mode: 'live' as const }, 0);
    expect(cache.isUnknown('u3', 1)).toBe(false);

    const bounded = new KeyCache();
    for (let i = 0; i <= 10_000; i++) bounded.setUnknown(`h${i}`, 0);
    expect(bounded.isUnknown('h0', 1)).toBe(false);
    expect(bounded.isUnknown('h10000', 1)).toBe(true);
  });
});
