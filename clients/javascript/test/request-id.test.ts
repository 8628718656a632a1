import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '../src/index.js';
import { FAST, errorBody, pending, success, withFake, type Recorded, type Reply } from './fake-server.js';

const KEY = 'dsk_unit_test_key_0123456789abcdefghij';
const OK = { status: 'success' };
const ACCOUNT = { id: 'acc_1', email: 'a@example.com', created_at: '2026-11-24T00:00:00.000Z' };

const BODIES: Record<string, unknown> = {
  'POST /v1/auth/register': { ...OK, api_key: 'dsk_n', account: ACCOUNT, credits_remaining: 3 },
  'POST /v1/auth/login': { ...OK, api_key: 'dsk_l', key_id: 'key_l' },
  'GET /v1/account': { ...OK, account: ACCOUNT, credits_remaining: 1 },
  'POST /v1/auth/keys': { ...OK, api_key: 'dsk_k', key_id: 'key_k' },
  'GET /v1/auth/keys': { ...OK, keys: [] },
  'DELETE /v1/auth/keys/key_k': { ...OK, key: { id: 'key_k' } },
  'GET /v1/searches/srch_ok1': success(),
  'GET /v1/searches': { ...OK, searches: [], next_cursor: null },
  'POST /v1/batch': { ...OK, batch_id: 'bat_1', items: [], credits_remaining: 1 },
  'GET /v1/batches/bat_1': { ...OK, batch_id: 'bat_1', items: [], credits_remaining: 1 },
  'POST /v1/webhooks': { ...OK, webhook: { id: 'wh_1' }, secret: 'whsec_x' },
  'GET /v1/webhooks': { ...OK, webhooks: [] },
  'DELETE /v1/webhooks/wh_1': { ...OK, webhook: { id: 'wh_1' } },
  'GET /v1/webhooks/wh_1/deliveries': { ...OK, deliveries: [] },
};

function reply(req: Recorded): Reply {
  const body = BODIES[`${req.method} ${req.path}`] ?? (req.method === 'POST' ? success() : undefined);
  // The gateway echoes a safe X-Request-Id.
  const echoed = req.headers['x-request-id'];
  return body === undefined
    ? { status: 404, body: errorBody('not_found', 'no such route') }
    : { status: 200, body, headers: typeof echoed === 'string' ? { 'X-Request-Id': echoed } : {} };
}

describe("the caller's own X-Request-Id", () => {
  test('every method sends it, and the answer gives it back', async () => {
    await withFake(reply, async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      const requestId = 'order-42/attempt:1';
      const o = { requestId };
      const auth = { email: 'a@example.com', password: 'password123', baseUrl: fake.url, requestId };
      const answers: { requestId: string | null }[] = [
        await Client.register(auth),
        await Client.login(auth),
        await client.account(o),
        await client.createKey('ci', o),
        await client.listKeys(o),
        await client.revokeKey('key_k', o),
        await client.search({ query: 'Acme', type: 'company' }, o),
        await client.search({ name: 'J' }, o),
        await client.searchPerson({ name: 'J' }, o),
        await client.searchCompany({ company_name: 'Acme' }, o),
        await client.verifyEmail('a@example.com', o),
        await client.verifyPhone('+14155552671', o),
        await client.getSearch('srch_ok1', o),
        await client.listSearches({}, o),
        await client.batch([{ kind: 'phone', input: { phone: '+14155552671' } }], o),
        await client.getBatch('bat_1', o),
        await client.createWebhook({ url: 'https://example.com/h' }, o),
        await client.listWebhooks(o),
        await client.deleteWebhook('wh_1', o),
        await client.webhookDeliveries('wh_1', o),
      ];
      for await (const _ of client.iterSearches({}, o)) void _;
      assert.equal(fake.requests.length, answers.length + 1);
      for (const sent of fake.requests) assert.equal(sent.headers['x-request-id'], requestId, `${sent.method} ${sent.path}`);
      for (const answer of answers) assert.equal(answer.requestId, requestId);
    });
  });

  test('without one, none is sent', async () => {
    await withFake(reply, async (fake) => {
      await new Client({ apiKey: KEY, baseUrl: fake.url }).account();
      assert.equal(fake.requests[0]!.headers['x-request-id'], undefined);
    });
  });

  test('the same id goes with every retry and every poll of the call', async () => {
    const answers: Reply[] = [
      { status: 503, body: errorBody('unavailable', 'try again'), headers: { 'Retry-After': '0' } },
      { status: 202, body: pending('srch_p'), headers: { 'Retry-After': '0' } },
      { status: 200, body: pending('srch_p'), headers: { 'Retry-After': '0' } },
      { status: 200, body: success([], 9, 'srch_p') },
    ];
    await withFake(
      (_req, i) => answers[i]!,
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        await client.verifyPhone('+14155552671', { requestId: 'trace-7' });
        assert.deepEqual(
          fake.requests.map((r) => r.headers['x-request-id']),
          ['trace-7', 'trace-7', 'trace-7', 'trace-7'],
        );
      },
    );
  });

  test('an id the gateway would not echo is a TypeError before anything is sent', async () => {
    await withFake(reply, async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      for (const requestId of ['', 'a'.repeat(129), 'has space', 'line\r\nX-Injected: 1', 'café', 42]) {
        const o = { requestId: requestId as string };
        await assert.rejects(client.account(o), TypeError, String(requestId));
        await assert.rejects(client.verifyPhone('+14155552671', o), TypeError, String(requestId));
      }
      assert.equal(fake.requests.length, 0);
      const longest = 'AZaz09._~:@+=/-'.repeat(9).slice(0, 128);
      assert.equal((await client.account({ requestId: longest })).requestId, longest);
    });
  });
});
