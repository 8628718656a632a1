import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, ValidationError } from '../src/index.js';
import type { SearchHistoryItem } from '../src/index.js';
import { FAST, startFake, type FakeServer, type Recorded } from './fake-server.js';

const KEY = 'dsk_unit_test_key_0123456789abcdefghij';

function item(search_id: string, kind: SearchHistoryItem['kind'] = 'phone'): SearchHistoryItem {
  return {
    search_id,
    kind,
    status: 'succeeded',
    created_at: '2026-11-22T09:31:12.418Z',
    completed_at: '2026-11-22T09:31:12.502Z',
    credits_spent: 1,
    permissible_purpose: null,
    result_count: 1,
  };
}

describe('search history (GET /v1/searches)', () => {
  let fake: FakeServer;
  let client: Client;

  before(async () => {
    fake = await startFake((req: Recorded) => {
      const url = new URL(req.path, 'http://x');
      if (url.pathname !== '/v1/searches')
        return { status: 404, body: { status: 'error', error: { code: 'not_found' } } };
      if (url.searchParams.get('limit') === '0') {
        return {
          status: 400,
          body: {
            status: 'error',
            error: {
              code: 'validation_error',
              message: 'limit must be a whole number from 1 to 100',
              details: [{ field: 'limit', issue: 'must be a whole number from 1 to 100' }],
            },
          },
        };
      }
      const cursor = url.searchParams.get('cursor');
      if (cursor === null)
        return {
          status: 200,
          body: { status: 'success', searches: [item('srch_3'), item('srch_2')], next_cursor: 'c+/2' },
        };
      if (cursor === 'c+/2')
        return { status: 200, body: { status: 'success', searches: [item('srch_1')], next_cursor: null } };
      return { status: 400, body: { status: 'error', error: { code: 'validation_error', message: 'bad cursor' } } };
    });
    client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
  });
  after(() => fake.close());

  test('listSearches sends the filters as a query string and returns the page', async () => {
    const start = fake.requests.length;
    const page = await client.listSearches({
      kind: 'phone',
      since: '2026-11-01T00:00:00Z',
      until: '2026-12-01T00:00:00Z',
      limit: 2,
    });
    assert.deepEqual(
      page.searches.map((s) => s.search_id),
      ['srch_3', 'srch_2'],
    );
    assert.equal(page.next_cursor, 'c+/2');
    const sent = fake.requests[start]!;
    assert.equal(sent.method, 'GET');
    assert.equal(
      sent.path,
      '/v1/searches?kind=phone&since=2026-11-01T00%3A00%3A00Z&until=2026-12-01T00%3A00%3A00Z&limit=2',
    );
    assert.equal(sent.headers['authorization'], `Bearer ${KEY}`);
    await client.listSearches();
    assert.equal(fake.requests.at(-1)!.path, '/v1/searches');
  });

  test('a Date filter is sent as RFC 3339 in UTC, its fraction of a second only when it has one', async () => {
    // String(date) ("Tue Nov 24 2026 15:00:00 GMT+0100 …") is not a date-time the gateway reads: it answers 400.
    const start = fake.requests.length;
    await client.listSearches({
      since: new Date('2026-11-24T15:00:00+01:00'),
      until: new Date(Date.UTC(2026, 10, 25, 8, 30, 0, 250)),
    });
    await client.listSearches({ since: new Date('2026-11-24T14:00:00.123Z') });
    assert.deepEqual(
      fake.requests.slice(start).map((r) => r.path),
      [
        '/v1/searches?since=2026-11-24T14%3A00%3A00Z&until=2026-11-25T08%3A30%3A00.25Z',
        '/v1/searches?since=2026-11-24T14%3A00%3A00.123Z',
      ],
    );
    await assert.rejects(client.listSearches({ since: new Date('not a date') }), TypeError);
    assert.equal(fake.requests.length, start + 2, 'an invalid Date is refused before anything is sent');
  });

  test('iterSearches follows next_cursor with the same filters until it is null', async () => {
    const start = fake.requests.length;
    const ids: string[] = [];
    for await (const s of client.iterSearches({ kind: 'phone', limit: 2 })) ids.push(s.search_id);
    assert.deepEqual(ids, ['srch_3', 'srch_2', 'srch_1']);
    assert.deepEqual(
      fake.requests.slice(start).map((r) => r.path),
      ['/v1/searches?kind=phone&limit=2', '/v1/searches?kind=phone&limit=2&cursor=c%2B%2F2'],
    );
  });

  test('a bad filter is a ValidationError naming the field', async () => {
    await assert.rejects(client.listSearches({ limit: 0 }), (err: unknown) => {
      assert.ok(err instanceof ValidationError);
      assert.equal(err.details[0]?.field, 'limit');
      return true;
    });
  });
});
