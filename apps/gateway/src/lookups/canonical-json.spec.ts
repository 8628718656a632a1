import { canonicalJson, hashRequest } from './request-hash';

describe('canonicalJson', () => {
  it('ignores key order but not values', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }),
    );
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: '1' }));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson({ a: [], b: {}, c: [undefined, 'x'] })).toBe('{"a":[],"b":{},"c":[null,"x"]}');
  });

  it('takes any depth without recursion (a 60 KB batch item can nest 30,000 levels deep)', () => {
    const depth = 30_000;
    const deep = JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`) as unknown;
    expect(canonicalJson({ requests: [deep] })).toBe(`{"requests":[${'['.repeat(depth)}1${']'.repeat(depth)}]}`);
  });

  it('hashes route and body together', () => {
    expect(hashRequest('/v1/search', { a: 1, b: 2 })).toBe(hashRequest('/v1/search', { b: 2, a: 1 }));
    expect(hashRequest('/v1/search', { a: 1 })).not.toBe(hashRequest('/v1/search/person', { a: 1 }));
  });
});
