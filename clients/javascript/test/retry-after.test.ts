import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, RateLimitError, UnavailableError } from '../src/index.js';
import { parseRetryAfterMs } from '../src/errors.js';
import { FAST, errorBody, sequence, withFake } from './fake-server.js';

const KEY = 'dsk_unit_test_key_0123456789abcdefghij';
const NOW = Date.UTC(2026, 10, 24, 14, 0, 0); // 2026-11-24T14:00:00Z

/** The same table is in the Python, Ruby and PHP clients' tests: [header value, seconds or null]. */
const CASES: [string, number | null][] = [
  ['120', 120],
  ['0', 0],
  [' 7 ', 7], // surrounding whitespace is not part of the value
  ['1.5', 1.5], // a decimal fraction is tolerated
  ['86400', 86400],
  ['86401', 86400], // capped at one day
  ['99999999999999999999999999', 86400],
  ['9'.repeat(400), 86400],
  ['Tue, 24 Nov 2026 14:00:30 GMT', 30], // IMF-fixdate
  ['Tuesday, 24-Nov-26 14:00:30 GMT', 30], // obsolete RFC 850 form
  ['Tue Nov 24 14:00:30 2026', 30], // obsolete asctime form
  ['Sun Nov  1 14:00:00 2026', 0], // asctime, one-digit day; a past date is no wait
  ['Sun, 06 Nov 1994 08:49:37 GMT', 0],
  ['Sunday, 06-Nov-94 08:49:37 GMT', 0], // two-digit year: 1994, not 2094 (over 50 years ahead)
  ['Fri, 31 Dec 9999 23:59:59 GMT', 86400],
  // Garbage: null (a retry waits its backoff, a poll its poll interval).
  ['', null],
  ['   ', null],
  ['-5', null],
  ['+5', null],
  ['1e3', null],
  ['0x10', null],
  ['1_000', null],
  ['.5', null],
  ['5.', null],
  ['1 2', null],
  ['inf', null],
  ['Infinity', null],
  ['NaN', null],
  ['soon', null],
  ['tomorrow', null],
  ['2026-11-24T14:00:30Z', null], // RFC 3339 is not an HTTP-date
  ['Tue, 24 Nov 2026 14:00:30 +0000', null], // an HTTP-date is always GMT
  ['tue, 24 nov 2026 14:00:30 gmt', null], // HTTP-date is case-sensitive
  ['24 Nov 2026 14:00:30 GMT', null],
  ['Mon, 30 Feb 2026 14:00:00 GMT', null], // no such day
  ['Tue, 24 Nov 2026 24:00:00 GMT', null],
];

describe('Retry-After (RFC 9110), read as the other clients read it', () => {
  for (const [value, seconds] of CASES) {
    test(`${JSON.stringify(value.length > 40 ? `${value.slice(0, 20)}…` : value)} → ${String(seconds)}`, () => {
      assert.equal(parseRetryAfterMs(value, NOW), seconds === null ? null : seconds * 1000);
    });
  }

  test('absent is null', () => {
    assert.equal(parseRetryAfterMs(undefined), null);
    assert.equal(parseRetryAfterMs(null), null);
  });

  test('a huge value is read as a day: the error is thrown at once with retry_after 86400', async () => {
    const limited = { status: 429, body: errorBody('rate_limited', 'slow down'), headers: { 'Retry-After': '9'.repeat(400) } };
    await withFake(sequence(limited), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      await assert.rejects(client.account(), (err: unknown) => err instanceof RateLimitError && err.retry_after === 86400);
      assert.equal(fake.requests.length, 1);
    });
  });

  test('garbage on an error is no retry_after', async () => {
    const down = { status: 503, body: errorBody('unavailable', 'down'), headers: { 'Retry-After': '-5' } };
    await withFake(sequence(down), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST, maxRetries: 0 });
      await assert.rejects(client.account(), (err: unknown) => err instanceof UnavailableError && err.retry_after === null);
    });
  });
});
