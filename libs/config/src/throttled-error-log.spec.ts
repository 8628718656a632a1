import { jest } from '@jest/globals';
import { throttledErrorLog } from './redis';

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
