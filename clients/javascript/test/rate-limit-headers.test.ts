import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchResult, SearchResult } from '../src/index.js';

const HEADERS = { 'ratelimit-limit': '100', 'ratelimit-remaining': '99', 'ratelimit-reset': '1' };

describe('RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset, read as the other clients read them', () => {
  test('a search and a batch read the rate limit they carry', () => {
    const search = new SearchResult({
      httpStatus: 200,
      body: { status: 'success', search_id: 'srch_1', results: [], credits_remaining: 1, sources: [] },
      headers: HEADERS,
      idempotencyKey: null,
    });
    const batch = new BatchResult({
      httpStatus: 200,
      body: { status: 'success', batch_id: 'bat_1', items: [], credits_remaining: 1 },
      headers: HEADERS,
      idempotencyKey: null,
    });
    for (const answer of [search, batch]) assert.deepEqual(answer.rateLimit, { limit: 100, remaining: 99, reset: 1 });
  });

  test('a missing or unreadable header is null (read as the credit headers are)', () => {
    const search = new SearchResult({
      httpStatus: 200,
      body: { status: 'success', search_id: 'srch_1', results: [], credits_remaining: 1, sources: [] },
      headers: { 'ratelimit-limit': '1.5', 'ratelimit-remaining': '-1' },
      idempotencyKey: null,
    });
    assert.deepEqual(search.rateLimit, { limit: null, remaining: null, reset: null });
  });
});
