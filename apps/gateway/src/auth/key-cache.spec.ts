import { KEY_CACHE_TTL_MS, KeyCache } from './key-cache';

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
});
