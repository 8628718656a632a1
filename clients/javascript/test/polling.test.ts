import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pollDelayMs } from '../src/client.js';
import { BatchResult, Client, PollTimeoutError, SearchResult, UnavailableError } from '../src/index.js';
import { FAST, PHONE_RESULT, errorBody, fakeClock, pending, type FakeClock, sequence, success, withFake } from './fake-server.js';

const KEY = 'dsk_unit_test_key_0123456789abcdefghij';

const accepted = (id = 'srch_pend1', retryAfter = '0') => ({
  status: 202,
  body: pending(id),
  headers: {
    Location: `/v1/searches/${id}`,
    'Retry-After': retryAfter,
    'X-Credits-Spent': '1',
    'X-Credits-Remaining': '98',
  },
});

describe('202 polling', () => {
  test('a 202 is polled at GET /v1/searches/{id} until it succeeds', async () => {
    await withFake(
      sequence(accepted(), accepted(), accepted(), { status: 200, body: success([PHONE_RESULT], 98, 'srch_pend1') }),
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        const result = await client.verifyPhone('+14155552671', { idempotencyKey: 'k-1' });
        assert.equal(result.status, 'success');
        assert.equal(result.search_id, 'srch_pend1');
        assert.equal(result.results[0]!.e164, '+14155552671');
        assert.equal(result.credits_remaining, 98);
        assert.equal(result.idempotencyKey, 'k-1', 'the polled result keeps the lookup key');
        assert.deepEqual(
          fake.requests.map((r) => `${r.method} ${r.path}`),
          [
            'POST /v1/verify/phone',
            'GET /v1/searches/srch_pend1',
            'GET /v1/searches/srch_pend1',
            'GET /v1/searches/srch_pend1',
          ],
        );
        assert.equal(fake.requests[0]!.headers['prefer'], undefined, 'by default the server decides how long to wait');
        for (const poll of fake.requests.slice(1)) assert.equal(poll.headers['idempotency-key'], undefined);
      },
    );
  });

  test('screen() is a lookup: sent with an Idempotency-Key, retried with it, its 202 polled to the envelope', async () => {
    const hit = {
      list: 'ofac-sdn',
      entry_id: '9001',
      listed_name: 'KARIMOV, Rustam Bakhtiyorovich',
      programme: 'SDGT',
      match_score: 0.95,
      matched_on: ['name', 'birth_year'],
    };
    const item = { id: 'per_1', full_name: 'KARIMOV, Rustam', match_score: 0.9, watchlist_hits: [hit] };
    await withFake(
      sequence(
        { status: 503, body: errorBody('unavailable', 'busy'), headers: { 'Retry-After': '0' } },
        accepted('srch_scr1'),
        { status: 200, body: { ...success([item], 97, 'srch_scr1'), total_results: 1 } },
      ),
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        const result = await client.screen({ name: 'Rustam Karimov', birth_year: 1961 });
        assert.equal(result.status, 'success');
        assert.equal(result.raw.status === 'success' && result.raw.total_results, 1);
        const first = result.results[0]!;
        assert.deepEqual('watchlist_hits' in first ? first.watchlist_hits : null, [hit]);
        assert.deepEqual(
          fake.requests.map((r) => `${r.method} ${r.path}`),
          ['POST /v1/screen', 'POST /v1/screen', 'GET /v1/searches/srch_scr1'],
        );
        const key = fake.requests[0]!.headers['idempotency-key'];
        assert.equal(fake.requests[1]!.headers['idempotency-key'], key, 'the retry sends the same key');
        assert.equal(result.idempotencyKey, key);
        assert.deepEqual(fake.requests[0]!.body, { name: 'Rustam Karimov', birth_year: 1961 });
      },
    );
  });

  test("a pending username search shows its progress, and the finished one its source_summary", async () => {
    const summary = { found: 1, not_found: 3, unknown: 0, rate_limited: 0, blocked: 0, timeout: 1, error: 0, skipped: 0 };
    const progress = {
      results: [{ id: 'per_u', full_name: null, accounts: [{ service: 'GitHub', username: 'gh', url: null }] }],
      source_summary: { ...summary, timeout: 0 },
      sources_pending: 1,
      updated_at: '2026-12-07T00:00:00.000Z',
    };
    await withFake(
      sequence({ status: 202, body: { ...pending('srch_u1'), progress }, headers: { 'Retry-After': '0' } }, {
        status: 200,
        body: { ...success([], 97, 'srch_u1'), source_summary: summary },
      }),
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        const started = await client.searchPerson({ username: 'gh', tags: ['coding'], top: 5 }, { wait: false });
        assert.equal(started.pending, true);
        assert.equal(started.raw.status === 'pending' && started.raw.progress?.sources_pending, 1);
        assert.deepEqual(fake.requests[0]!.body, { username: 'gh', tags: ['coding'], top: 5 });
        const done = await client.getSearch('srch_u1');
        assert.deepEqual(done.raw.status === 'success' && done.raw.source_summary, summary);
      },
    );
  });

  test('polling honours Retry-After of the 202', async () => {
    await withFake(
      sequence(accepted('srch_p', '0.2'), { status: 200, body: success([], 98, 'srch_p') }),
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST, pollIntervalMs: 5_000 });
        const clock = fakeClock(client);
        await client.searchPerson({ name: 'John Smith' });
        assert.deepEqual(clock.sleeps, [200], 'slept the Retry-After, not pollIntervalMs');
        assert.equal(fake.requests.length, 2);
      },
    );
  });

  test('without Retry-After the poll interval is pollIntervalMs', async () => {
    const noRetryAfter = { status: 202, body: pending('srch_q') };
    await withFake(sequence(noRetryAfter, { status: 200, body: success([], 98, 'srch_q') }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST, pollIntervalMs: 150 });
      const clock = fakeClock(client);
      await client.searchPerson({ name: 'John Smith' });
      assert.deepEqual(clock.sleeps, [150]);
    });
  });

  test('the wait between polls: Retry-After, else pollIntervalMs; at most maxRetryAfterMs; never past the deadline', () => {
    // The rule of the Python, Ruby and PHP clients too (with their 60 s for maxRetryAfterMs).
    const wait = (retryAfter: string | undefined, remainingMs = 600_000) =>
      pollDelayMs(retryAfter, { pollIntervalMs: 1_000, maxRetryAfterMs: 60_000, remainingMs });
    assert.equal(wait('2'), 2_000);
    assert.equal(wait('0.25'), 250);
    assert.equal(wait(undefined), 1_000);
    assert.equal(wait('-1'), 1_000, 'an unreadable Retry-After: the poll interval');
    assert.equal(wait('soon'), 1_000);
    assert.equal(wait('3600'), 60_000, 'a long Retry-After: the longest wait a retry sleeps');
    assert.equal(wait('30', 5_000), 5_000, 'never past the deadline');
  });

  test('{ wait: false } sends Prefer: respond-async and returns the pending search at once', async () => {
    await withFake(sequence(accepted('srch_async')), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      const result = await client.verifyPhone('+14155552671', { wait: false });
      assert.equal(result.status, 'pending');
      assert.equal(result.pending, true);
      assert.equal(result.search_id, 'srch_async');
      assert.equal(result.credits_remaining, 98);
      assert.deepEqual(result.results, []);
      assert.deepEqual(result.sources, []);
      assert.equal(result.httpStatus, 202);
      assert.equal(result.creditsSpent, 1);
      assert.equal(fake.requests.length, 1, 'no polling');
      assert.equal(fake.requests[0]!.headers['prefer'], 'respond-async');
    });
  });

  test('serverWaitSeconds sends Prefer: wait=N', async () => {
    await withFake(sequence({ status: 200, body: success() }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      await client.searchCompany({ company_name: 'Acme' }, { serverWaitSeconds: 3 });
      assert.equal(fake.requests[0]!.headers['prefer'], 'wait=3');
    });
  });

  test('asks the server to answer within the poll budget and 2 s under the HTTP timeout, as the other clients do', async () => {
    await withFake(sequence({ status: 200, body: success() }, { status: 200, body: success() }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST, timeoutMs: 5_000 });
      await client.verifyPhone('+14155552671');
      await client.verifyPhone('+14155552671', { pollTimeoutMs: 2_000, timeoutMs: 30_000 });
      assert.deepEqual(
        fake.requests.map((r) => r.headers['prefer']),
        ['wait=3', 'wait=2'],
      );
    });
  });

  test('getSearch returns the pending search as is, or polls with { wait: true }', async () => {
    await withFake(
      sequence(accepted('srch_g'), accepted('srch_g'), { status: 200, body: success([], 97, 'srch_g') }),
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        const now = await client.getSearch('srch_g');
        assert.equal(now.status, 'pending');
        assert.equal(fake.requests.length, 1);
        const done = await client.getSearch('srch_g', { wait: true });
        assert.equal(done.status, 'success');
        assert.equal(done.credits_remaining, 97);
        assert.equal(fake.requests.length, 3);
      },
    );
  });

  test('polling GETs are retried on 503 and 429 like any call', async () => {
    const limited = { status: 429, body: errorBody('rate_limited', 'slow down'), headers: { 'Retry-After': '0' } };
    const down = { status: 503, body: errorBody('unavailable', 'redis is unreachable') };
    await withFake(
      sequence(accepted('srch_r'), down, limited, { status: 200, body: success([], 98, 'srch_r') }),
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        const result = await client.verifyEmail('a@example.com');
        assert.equal(result.status, 'success');
        assert.equal(fake.requests.length, 4);
      },
    );
  });

  test('a search that fails while polled throws UnavailableError with its search_id', async () => {
    const failed = {
      status: 503,
      body: {
        ...errorBody('unavailable', 'the lookup failed; nothing was charged'),
        search_id: 'srch_f',
        credits_remaining: 99,
      },
      headers: { 'Retry-After': '0' },
    };
    await withFake(sequence(accepted('srch_f'), failed), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      await assert.rejects(
        client.verifyPhone('+14155552671'),
        (err: unknown) => err instanceof UnavailableError && err.search_id === 'srch_f',
      );
      assert.equal(fake.requests.length, 2);
    });
  });

  test('past pollTimeoutMs a still pending search throws PollTimeoutError with its id', async () => {
    await withFake(sequence(accepted('srch_slow', '0.05')), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST, pollTimeoutMs: 5_000 });
      const clock = fakeClock(client);
      await assert.rejects(client.verifyPhone('+14155552671', { pollTimeoutMs: 120 }), (err: unknown) => {
        assert.ok(err instanceof PollTimeoutError);
        assert.equal(err.search_id, 'srch_slow');
        assert.equal(err.searchId, 'srch_slow');
        assert.match(err.message, /still pending after 120 ms/, 'the per-call budget, not the client-wide 5 s');
        return true;
      });
      // Polled every Retry-After (50 ms) until the budget was spent, the last wait cut to what was left.
      assert.deepEqual(clock.sleeps, [50, 50, 20]);
      assert.equal(fake.requests.length, 4, 'the lookup and a poll after each wait');
    });
  });

  test('a PollTimeoutError carries the last pending answer and its request id, as in the other clients', async () => {
    // Python's SearchTimeoutError (.search, .request_id), Ruby's PollTimeoutError (.result) and PHP's
    // SearchTimeoutException (getPendingResult()) hand back the last pending answer: its request id is the one to quote.
    const pendingBatch = { status: 'pending', batch_id: 'bat_slow', items: [pending('srch_b')], credits_remaining: 97 };
    await withFake(
      (req) => (req.path.includes('batch') ? { status: 202, body: pendingBatch } : accepted('srch_slow', '0')),
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        for (const call of [
          () => client.verifyPhone('+14155552671', { pollTimeoutMs: 50 }),
          () => client.batch([{ kind: 'phone', input: { phone: '+14155552671' } }], { pollTimeoutMs: 50 }),
        ]) {
          await assert.rejects(call(), (err: unknown) => {
            assert.ok(err instanceof PollTimeoutError);
            assert.ok(err.result instanceof (err.batch_id === null ? SearchResult : BatchResult));
            assert.equal(err.result.status, 'pending');
            assert.equal(err.result.httpStatus, 202);
            assert.equal(err.requestId, `req_fake${fake.requests.length}`, 'the last answer seen');
            assert.equal(err.request_id, err.requestId);
            return true;
          });
        }
      },
    );
  });

  test('pollTimeoutMs counts from the start of the call, its first request included, as in the other clients', async () => {
    // The first request used up the budget: no poll follows, the call ends at pollTimeoutMs, not after it.
    let clock: FakeClock | undefined;
    const slowAnswer = () => {
      clock!.now += 400; // the answer takes 400 ms of the (fake) clock
      return accepted('srch_late', '0.05');
    };
    await withFake(slowAnswer, async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      clock = fakeClock(client);
      await assert.rejects(client.verifyPhone('+14155552671', { pollTimeoutMs: 300 }), PollTimeoutError);
      assert.equal(fake.requests.length, 1, 'the lookup');
      await assert.rejects(client.getSearch('srch_late', { wait: true, pollTimeoutMs: 300 }), PollTimeoutError);
      assert.equal(fake.requests.length, 2, 'and the first GET');
      assert.deepEqual(clock.sleeps, [], 'no wait past the budget');
    });
  });
});
