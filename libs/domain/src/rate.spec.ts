import { parseRate } from './rate';

describe('parseRate', () => {
  it('reads calls per period', () => {
    expect(parseRate('600/300s')).toEqual({ max: 600, perMs: 300_000 });
    expect(parseRate(' 10 / 1s ')).toEqual({ max: 10, perMs: 1000 });
    expect(parseRate('100/h')).toEqual({ max: 100, perMs: 3_600_000 });
    expect(parseRate('1/1ms')).toEqual({ max: 1, perMs: 1 });
  });

  // A limit is a token bucket in Redis whose key expires when the bucket is full again (one period): a period
  // past what Redis takes as an expiry failed every call it guarded, so such a value is not a rate.
  it('takes 1 to 1,000,000,000 calls in a period of 1 ms to 8784 h (a leap year), and nothing beyond', () => {
    expect(parseRate('1000000000/8784h')).toEqual({ max: 1_000_000_000, perMs: 8784 * 3_600_000 });
    for (const bad of ['0/1s', '10/0s', '10/8785h', '10/99999999999999h', '1000000001/1s', '10 per minute']) {
      expect([bad, parseRate(bad)]).toEqual([bad, null]);
    }
  });
});
