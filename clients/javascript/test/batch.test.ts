import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  APIError,
  BatchItem,
  BatchResult,
  Client,
  InsufficientCreditsError,
  NotFoundError,
  PollTimeoutError,
  UnavailableError,
  ValidationError,
} from '../src/index.js';
import type { BatchRequest } from '../src/index.js';
import { FAST, PHONE_RESULT, errorBody, pending, sequence, success, withFake, UNIT_KEY } from './fake-server.js';

const KEY = UNIT_KEY;

const REQUESTS: BatchRequest[] = [
  { kind: 'phone', input: { phone: '+14155552671' } },
  { kind: 'phone', input: { phone: 'abc' } },
];
const INVALID = {
  status: 'error',
  error: {
    code: 'validation_error',
    message: 'phone is not a phone number',
    details: [{ field: 'phone', issue: 'is not a phone number' }],
  },
};
const BROKE = { status: 'error', error: { code: 'insufficient_credits', message: 'balance too low' } };
const FAILED = { status: 'error', search_id: 'srch_f', error: { code: 'unavailable', message: 'the lookup failed' } };

const batchBody = (status: 'success' | 'pending', items: unknown[], credits = 2) => ({
  status,
  batch_id: 'bat_1',
  items,
  credits_remaining: credits,
});
const accepted = (items: unknown[], retryAfter = '0') => ({
  status: 202,
  body: batchBody('pending', items),
  headers: { Location: '/v1/batches/bat_1', 'Retry-After': retryAfter },
});

describe('batch', () => {
  test('a settled batch: each item is a success, a pending lookup or an error, in request order', async () => {
    const items = [success([PHONE_RESULT], 2, 'srch_1'), INVALID, BROKE, FAILED];
    await withFake(sequence({ status: 200, body: batchBody('success', items) }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      const result = await client.batch(REQUESTS, { idempotencyKey: 'batch-1' });
      const post = fake.requests[0]!;
      assert.equal(`${post.method} ${post.path}`, 'POST /v1/batch');
      assert.deepEqual(post.body, { requests: REQUESTS });
      assert.equal(post.headers['idempotency-key'], 'batch-1');
      assert.equal(post.headers['content-type'], 'application/json');

      assert.ok(result instanceof BatchResult);
      assert.equal(result.status, 'success');
      assert.equal(result.pending, false);
      assert.equal(result.batch_id, 'bat_1');
      assert.equal(result.batchId, 'bat_1');
      assert.equal(result.credits_remaining, 2);
      assert.equal(result.idempotencyKey, 'batch-1');
      assert.equal(result.httpStatus, 200);
      assert.deepEqual(
        result.items.map((i) => i.status),
        ['success', 'error', 'error', 'error'],
      );
      const first = result.items[0]!;
      assert.ok(first instanceof BatchItem);
      assert.deepEqual([first.ok, first.pending, first.failed, first.error], [true, false, false, null]);
      assert.equal(first.search_id, 'srch_1');
      assert.equal(first.searchId, 'srch_1');
      assert.deepEqual(first.results, [PHONE_RESULT]);
      assert.equal(first.credits_remaining, 2);
      const second = result.items[1]!;
      assert.deepEqual([second.ok, second.pending, second.failed], [false, false, true]);
      assert.ok(second.error instanceof ValidationError);
      assert.equal(second.error.code, 'validation_error');
      assert.equal(second.error.message, 'phone is not a phone number');
      assert.equal(second.error.status, 0, 'an item has no HTTP status of its own');
      assert.deepEqual(second.error.details, [{ field: 'phone', issue: 'is not a phone number' }]);
      assert.deepEqual([second.search_id, second.results, second.credits_remaining], [null, [], null]);
      assert.deepEqual(result.succeeded, [first]);
      assert.deepEqual(
        result.errors.map((e) => [e.error?.constructor, e.error?.code, e.search_id]),
        [
          [ValidationError, 'validation_error', null],
          [InsufficientCreditsError, 'insufficient_credits', null],
          [UnavailableError, 'unavailable', 'srch_f'],
        ],
      );
      const failed = result.items[3]!.error;
      assert.ok(failed instanceof UnavailableError);
      assert.equal(failed.search_id, 'srch_f');
      assert.deepEqual(JSON.parse(JSON.stringify(result)), batchBody('success', items));
      assert.deepEqual(JSON.parse(JSON.stringify(result.items)), items);
    });
  });

  test("null or undefined fields of an item's input are not sent, as for a lookup", async () => {
    await withFake(sequence({ status: 200, body: batchBody('success', [success(), success()]) }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      await client.batch([
        { kind: 'phone', input: { phone: '+14155552671', country: null as unknown as string } },
        { kind: 'person', input: { name: 'Jane Doe', email: undefined, location: 'Austin' } },
      ]);
      assert.deepEqual(fake.requests[0]!.body, {
        requests: [
          { kind: 'phone', input: { phone: '+14155552671' } },
          { kind: 'person', input: { name: 'Jane Doe', location: 'Austin' } },
        ],
      });
    });
  });

  test('a 202 batch is polled at GET /v1/batches/{id} until every item is settled', async () => {
    await withFake(
      sequence(
        accepted([success([PHONE_RESULT]), pending('srch_2')]),
        accepted([success([PHONE_RESULT]), pending('srch_2')]),
        { status: 200, body: batchBody('success', [success([PHONE_RESULT]), success([], 1, 'srch_2')], 1) },
      ),
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        const result = await client.batch(REQUESTS, { serverWaitSeconds: 5 });
        assert.equal(result.status, 'success');
        assert.equal(result.credits_remaining, 1);
        assert.deepEqual(
          fake.requests.map((r) => `${r.method} ${r.path}`),
          ['POST /v1/batch', 'GET /v1/batches/bat_1', 'GET /v1/batches/bat_1'],
        );
        assert.equal(fake.requests[0]!.headers['prefer'], 'wait=5');
        assert.equal(
          result.idempotencyKey,
          fake.requests[0]!.headers['idempotency-key'],
          'the polled result keeps the key',
        );
        for (const poll of fake.requests.slice(1)) assert.equal(poll.headers['idempotency-key'], undefined);
      },
    );
  });

  test('{ wait: false } returns the pending batch at once; getBatch reads it, and waits on request', async () => {
    await withFake(
      sequence(accepted([pending('srch_2')]), accepted([pending('srch_2')]), accepted([pending('srch_2')]), {
        status: 200,
        body: batchBody('success', [success([PHONE_RESULT], 2, 'srch_2')]),
      }),
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        const started = await client.batch(REQUESTS.slice(0, 1), { wait: false });
        assert.equal(started.pending, true);
        assert.equal(started.httpStatus, 202);
        assert.equal(started.items[0]!.status, 'pending');
        assert.deepEqual([started.items[0]!.pending, started.items[0]!.search_id], [true, 'srch_2']);
        assert.equal(fake.requests[0]!.headers['prefer'], 'respond-async');
        const now = await client.getBatch('bat_1');
        assert.equal(now.pending, true);
        assert.equal(now.idempotencyKey, null);
        const done = await client.getBatch('bat_1', { wait: true });
        assert.equal(done.status, 'success');
        assert.equal(fake.requests.length, 4);
      },
    );
  });

  test('past pollTimeoutMs a pending batch throws PollTimeoutError with its batch_id', async () => {
    await withFake(sequence(accepted([pending('srch_2')], '0.02')), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      await assert.rejects(client.batch(REQUESTS, { pollTimeoutMs: 80 }), (err: unknown) => {
        assert.ok(err instanceof PollTimeoutError);
        assert.equal(err.batch_id, 'bat_1');
        assert.equal(err.batchId, 'bat_1');
        assert.equal(err.search_id, null);
        assert.match(err.message, /getBatch\(\)/);
        return true;
      });
    });
  });

  test("101 requests: the server's 400 validation_error, not retried", async () => {
    const tooMany = {
      status: 400,
      body: errorBody('validation_error', 'requests must hold at most 100 items', [
        { field: 'requests', issue: 'must hold at most 100 items' },
      ]),
    };
    await withFake(sequence(tooMany), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      const many: BatchRequest[] = Array.from({ length: 101 }, () => ({
        kind: 'phone',
        input: { phone: '+14155552671' },
      }));
      await assert.rejects(client.batch(many), (err: unknown) => {
        assert.ok(err instanceof ValidationError);
        assert.equal(err.status, 400);
        assert.deepEqual(err.details, [{ field: 'requests', issue: 'must hold at most 100 items' }]);
        return true;
      });
      assert.equal(fake.requests.length, 1);
      assert.equal((fake.requests[0]!.body as { requests: unknown[] }).requests.length, 101);
    });
  });

  test('an unknown batch is NotFoundError; a body that is not a batch is an APIError', async () => {
    await withFake(
      (req) =>
        req.path === '/v1/batches/bat_nope'
          ? { status: 404, body: errorBody('not_found', 'no such batch') }
          : { status: 200, body: { status: 'success' } },
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        await assert.rejects(client.getBatch('bat_nope'), NotFoundError);
        await assert.rejects(client.getBatch('bat_odd'), (err: unknown) => {
          assert.ok(err instanceof APIError && err.code === null && err.status === 200);
          return true;
        });
      },
    );
  });
});
