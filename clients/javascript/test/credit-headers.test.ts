import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { InsufficientCreditsError, SearchResult } from '../src/index.js';

/** The same table is in the Python, Ruby and PHP clients' tests: [header value, count or null]. */
const COUNTS: [string, number | null][] = [
  ['7', 7],
  ['0', 0],
  [' 7 ', 7],
  ['-1', null],
  ['+7', null],
  ['1.5', null],
  ['1e2', null],
  ['0x10', null],
  ['1_000', null],
  ['٣', null],
  ['', null],
  [' ', null],
  ['seven', null],
];

describe('X-Credits-Spent and X-Credits-Remaining, read as the other clients read them', () => {
  for (const [value, count] of COUNTS) {
    test(`${JSON.stringify(value)} → ${String(count)}`, () => {
      const result = new SearchResult({
        httpStatus: 200,
        body: { status: 'success', search_id: 'srch_1', results: [], credits_remaining: 1, sources: [] },
        headers: { 'x-credits-spent': value },
        idempotencyKey: null,
      });
      assert.equal(result.creditsSpent, count);
      const err = new InsufficientCreditsError({
        status: 402,
        code: 'insufficient_credits',
        message: 'no credits',
        request_id: null,
        body: null,
        headers: { 'x-credits-remaining': value },
      });
      assert.equal(err.credits_remaining, count);
    });
  }
});
