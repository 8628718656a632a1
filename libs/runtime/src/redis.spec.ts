import { jest } from '@jest/globals';
import { redisOptionsFromUrl, throttledErrorLog } from './redis';

describe('redisOptionsFromUrl', () => {
  it('parses Redis URLs', () => {
    expect(redisOptionsFromUrl('redis://user:p%40ss@cache:6380/2')).toMatchObject({
      host: 'cache',
      port: 6380,
      db: 2,
      username: 'user',
      password: 'p@ss',
    });
    expect(redisOptionsFromUrl('rediss://h')).toMatchObject({ host: 'h', port: 6379, tls: {} });
  });
});

describe('throttledErrorLog', () => {
  afterEach(() => jest.useRealTimers());

  it('logs the first error, then at most one line per interval saying how many it left out', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const lines: string[] = [];
    const log = throttledErrorLog((m) => lines.push(m), 10_000);
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:6379');
    log('phone-lookup', refused);
    for (let i = 0; i < 40; i++) {
      jest.advanceTimersByTime(200);
      log('email-lookup', refused);
    }
    jest.advanceTimersByTime(2_000);
    log('person-lookup', refused);
    expect(lines).toEqual([
      'phone-lookup: connect ECONNREFUSED 127.0.0.1:6379',
      'person-lookup: connect ECONNREFUSED 127.0.0.1:6379 (40 more errors since the last line)',
    ]);
  });
});
