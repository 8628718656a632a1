import { API_KEY_PATTERN, newApiKey, newId, randomBase62 } from './ids';

describe('ids', () => {
  it('makes prefixed base62 ids of the right length, all different', () => {
    const ids = new Set(Array.from({ length: 5000 }, () => newId.search()));
    expect(ids.size).toBe(5000);
    for (const id of ids) expect(id).toMatch(/^srch_[0-9A-Za-z]{24}$/);
    expect(newApiKey()).toMatch(API_KEY_PATTERN);
  });

  it('uses every base62 character about equally (no modulo bias)', () => {
    const counts = new Map<string, number>();
    const sample = randomBase62(62 * 2000);
    for (const c of sample) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(Math.abs(n - 2000)).toBeLessThan(400);
  });
});
