import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { Client } from '../src/index.js';
import { withFake, type Recorded, type Reply } from './fake-server.js';

const KEY = 'dsk_unit_test_key_0123456789abcdefghij';

/** The headers the gateway sends on every /v1 answer, as a lookup reads them. */
const HEADERS = {
  'RateLimit-Limit': '100',
  'RateLimit-Remaining': '97',
  'RateLimit-Reset': '2',
  'X-Request-Id': 'req_gateway',
};

const BODIES: Record<string, unknown> = {
  'GET /v1/account': { status: 'success', account: { id: 'acct_1', email: 'a@example.com', created_at: 'x' }, credits_remaining: 7 },
  'GET /v1/auth/keys': { status: 'success', keys: [] },
  'POST /v1/auth/keys': { status: 'success', api_key: 'dsk_k', key_id: 'key_2' },
  'DELETE /v1/auth/keys/key_2': { status: 'success', key: { id: 'key_2' } },
  'GET /v1/searches': { status: 'success', searches: [], next_cursor: null },
  'POST /v1/webhooks': { status: 'success', webhook: { id: 'wh_1' }, secret: 'whsec_s' },
  'GET /v1/webhooks': { status: 'success', webhooks: [] },
  'DELETE /v1/webhooks/wh_1': { status: 'success', webhook: { id: 'wh_1' } },
  'GET /v1/webhooks/wh_1/deliveries': { status: 'success', deliveries: [] },
  'POST /v1/auth/register': { status: 'success', account: { id: 'acct_1' }, api_key: 'dsk_new', credits_remaining: 3 },
  'POST /v1/auth/login': { status: 'success', api_key: 'dsk_login', key_id: 'key_3' },
};

function reply(req: Recorded): Reply {
  const body = BODIES[`${req.method} ${req.path}`];
  return body === undefined ? { status: 404 } : { status: req.method === 'POST' ? 201 : 200, body, headers: HEADERS };
}

describe('the answers of the methods other than the lookups', () => {
  test('carry the HTTP answer (httpStatus, headers, requestId, rateLimit) as a SearchResult does', async () => {
    await withFake(reply, async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url });
      const auth = { email: 'a@example.com', password: 'password123', baseUrl: fake.url };
      const answers = [
        await client.account(),
        await client.listKeys(),
        await client.createKey('ci'),
        await client.revokeKey('key_2'),
        await client.listSearches(),
        await client.createWebhook({ url: 'https://example.com/hook' }),
        await client.listWebhooks(),
        await client.deleteWebhook('wh_1'),
        await client.webhookDeliveries('wh_1'),
        await Client.register(auth),
        await Client.login(auth),
      ];
      for (const [i, answer] of answers.entries()) {
        const sent = fake.requests[i]!;
        const what = `${sent.method} ${sent.path}`;
        assert.equal(answer.requestId, 'req_gateway', what);
        assert.equal(answer.httpStatus, sent.method === 'POST' ? 201 : 200, what);
        assert.equal(answer.headers['ratelimit-remaining'], '97', what);
        assert.deepEqual(answer.rateLimit, { limit: 100, remaining: 97, reset: 2 }, what);
        // Backwards compatible: the body is what it was, field for field, in JSON and in a spread.
        assert.deepEqual({ ...answer }, BODIES[what], what);
        assert.deepEqual(JSON.parse(JSON.stringify(answer)), BODIES[what], what);
      }
    });
  });

  test('printing one still hides a key or a secret', async () => {
    await withFake(reply, async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url });
      const issued = await client.createKey('ci');
      const hook = await client.createWebhook({ url: 'https://example.com/hook' });
      assert.equal(issued.requestId, 'req_gateway');
      assert.doesNotMatch(inspect(issued), /'dsk_k'/);
      assert.doesNotMatch(inspect(hook, { showHidden: true }), /'whsec_s'/);
    });
  });
});
