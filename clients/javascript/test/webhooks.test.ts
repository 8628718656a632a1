import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import {
  Client,
  DossierError,
  NotFoundError,
  SignatureVerificationError,
  ValidationError,
  Webhook,
} from '../src/index.js';
import { FAST, errorBody, withFake, UNIT_KEY } from './fake-server.js';

const KEY = UNIT_KEY;
const HOOK = {
  id: 'wh_1',
  url: 'https://203.0.113.10/hook',
  events: ['search.completed'],
  created_at: '2026-11-23T09:00:00.000Z',
};
const SECRET = 'whsec_3q2-7wVbQ0nLk9sYt4XcZr1mA8uHf6dJ5pGe0iBo2Nw';
const NOW = 1_795_000_000;
const BODY = JSON.stringify({
  id: 'evt_1',
  type: 'search.completed',
  created_at: '2026-11-23T09:00:00.000Z',
  data: { status: 'success', search_id: 'srch_1', results: [] },
});

/** As the server signs (libs/contracts signatureHeader), written out independently. */
const sign = (body: string, t: number, secret = SECRET) =>
  createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
const header = (t = NOW, ...sigs: string[]) =>
  [`t=${t}`, ...(sigs.length ? sigs : [sign(BODY, t)]).map((s) => `v1=${s}`)].join(',');

describe('webhook registration', () => {
  test('create, list, delete and deliveries', async () => {
    const delivery = {
      event_id: 'evt_2',
      type: 'search.failed',
      attempt: 3,
      outcome: 'failed',
      status_code: null,
      error: 'timed out after 10 s',
      duration_ms: 10_000,
      attempted_at: '2026-11-24T10:00:00.000Z',
    };
    await withFake(
      (req) => {
        const route = `${req.method} ${req.path}`;
        if (route === 'POST /v1/webhooks')
          return { status: 201, body: { status: 'success', webhook: HOOK, secret: SECRET } };
        if (route === 'GET /v1/webhooks') return { status: 200, body: { status: 'success', webhooks: [HOOK] } };
        if (route === 'DELETE /v1/webhooks/wh_1') return { status: 200, body: { status: 'success', webhook: HOOK } };
        if (route === 'GET /v1/webhooks/wh_1/deliveries')
          return { status: 200, body: { status: 'success', deliveries: [delivery] } };
        return { status: 404, body: errorBody('not_found', 'no such route') };
      },
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        const created = await client.createWebhook({ url: HOOK.url, events: ['search.completed'] });
        assert.equal(created.secret, SECRET);
        assert.match(inspect(created), /secret: 'whsec_…'/, 'console.log never shows the secret whole');
        assert.deepEqual(created.webhook, HOOK);
        await client.createWebhook({ url: HOOK.url });
        assert.deepEqual(
          fake.requests.map((r) => r.body),
          [{ url: HOOK.url, events: ['search.completed'] }, { url: HOOK.url }],
        );
        assert.equal(fake.requests[0]!.headers['authorization'], `Bearer ${KEY}`);
        assert.deepEqual((await client.listWebhooks()).webhooks, [HOOK]);
        assert.deepEqual((await client.deleteWebhook('wh_1')).webhook, HOOK);
        assert.deepEqual((await client.webhookDeliveries('wh_1')).deliveries, [delivery]);
      },
    );
  });

  test('a refused URL is a ValidationError on url; an unknown webhook is NotFoundError', async () => {
    await withFake(
      (req) =>
        req.method === 'POST'
          ? {
              status: 400,
              body: errorBody('validation_error', 'url must be an https URL', [
                { field: 'url', issue: 'must be an https URL' },
              ]),
            }
          : { status: 404, body: errorBody('not_found', 'no such webhook') },
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        await assert.rejects(
          client.createWebhook({ url: 'http://10.0.0.1/hook' }),
          (err: unknown) => err instanceof ValidationError && err.details[0]!.field === 'url',
        );
        await assert.rejects(client.deleteWebhook('wh_nope'), NotFoundError);
        await assert.rejects(client.webhookDeliveries('wh_nope'), NotFoundError);
        assert.equal(fake.requests.length, 3, 'no retries');
      },
    );
  });
});

describe('test keys', () => {
  test("createKey({ mode: 'test' }) sends the mode; listKeys shows each key's mode", async () => {
    const keys = [
      {
        id: 'key_l',
        prefix: 'dsk_abcd',
        name: null,
        mode: 'live',
        created_at: 't',
        last_used_at: null,
        revoked_at: null,
      },
      {
        id: 'key_t',
        prefix: 'dsk_test_ab',
        name: 'sandbox',
        mode: 'test',
        created_at: 't',
        last_used_at: null,
        revoked_at: null,
      },
    ];
    await withFake(
      (req) =>
        req.method === 'POST'
          ? { status: 201, body: { status: 'success', api_key: 'dsk_test_abc', key_id: 'key_t' } }
          : { status: 200, body: { status: 'success', keys } },
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        const issued = await client.createKey({ name: 'sandbox', mode: 'test' });
        assert.equal(issued.api_key, 'dsk_test_abc');
        await client.createKey({ mode: 'test' });
        await client.createKey('ci');
        assert.deepEqual(
          fake.requests.map((r) => r.body),
          [{ name: 'sandbox', mode: 'test' }, { mode: 'test' }, { name: 'ci' }],
        );
        const listed = await client.listKeys();
        assert.deepEqual(
          listed.keys.map((k) => [k.id, k.mode]),
          [
            ['key_l', 'live'],
            ['key_t', 'test'],
          ],
        );
      },
    );
  });
});

describe('Webhook.verify', () => {
  const refused = async (payload: string, h: string | null | undefined, options = {}) => {
    await assert.rejects(Webhook.verify(payload, h, SECRET, { now: NOW, ...options }), (err: unknown) => {
      assert.ok(err instanceof SignatureVerificationError, String(err));
      assert.ok(err instanceof DossierError);
      return true;
    });
  };

  test('a genuine delivery returns the parsed event (string or bytes)', async () => {
    for (const payload of [BODY, new TextEncoder().encode(BODY), Buffer.from(BODY)]) {
      const event = await Webhook.verify(payload, header(), SECRET, { now: NOW + 299 });
      assert.equal(event.id, 'evt_1');
      assert.equal(event.type, 'search.completed');
      assert.deepEqual(event.data, { status: 'success', search_id: 'srch_1', results: [] });
    }
  });

  test('any one of several v1 signatures may match; other schemes are ignored', async () => {
    const h = `${header(NOW, '0'.repeat(64), sign(BODY, NOW))},v0=ignored`;
    assert.equal((await Webhook.verify(BODY, h, SECRET, { now: NOW })).id, 'evt_1');
  });

  test('elements without an equals sign are ignored, as in the other clients', async () => {
    const good = header();
    for (const h of [`${good},`, `${good},garbage`, `garbage,${good}`, good.replace(',', ', ,')]) {
      assert.equal((await Webhook.verify(BODY, h, SECRET, { now: NOW })).id, 'evt_1', h);
    }
  });

  test('with the real clock, a fresh signature verifies', async () => {
    const t = Math.floor(Date.now() / 1000);
    assert.equal((await Webhook.verify(BODY, header(t), SECRET)).id, 'evt_1');
    await refused(BODY, header(t - 1000), { now: undefined });
  });

  test('forged signatures are refused', async () => {
    await refused(BODY, header(NOW, sign(BODY, NOW, 'whsec_other')));
    await refused(BODY.replace('srch_1', 'srch_2'), header());
    await refused(BODY, `t=${NOW + 1},v1=${sign(BODY, NOW)}`);
    await refused(BODY, header(NOW, sign(BODY, NOW).slice(0, 62)));
    await refused(BODY, header(NOW, 'zz'.repeat(32)));
  });

  test('the hex signature may be in either case, as in the other clients', async () => {
    // Hex is case-insensitive (RFC 4648 section 8); Python, Ruby and PHP accept both cases too.
    const good = sign(BODY, NOW);
    const mixed = [...good].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
    for (const candidate of [good.toUpperCase(), mixed]) {
      assert.equal((await Webhook.verify(BODY, header(NOW, candidate), SECRET, { now: NOW })).id, 'evt_1', candidate);
    }
    await refused(BODY, header(NOW, sign(BODY, NOW, 'whsec_other').toUpperCase()));
  });

  test('timestamps outside the tolerance are refused', async () => {
    await refused(BODY, header(), { now: NOW + 301 });
    await refused(BODY, header(), { now: NOW - 301 });
    await refused(BODY, header(), { now: NOW + 11, tolerance: 10 });
    assert.equal((await Webhook.verify(BODY, header(), SECRET, { now: NOW - 10, tolerance: 10 })).id, 'evt_1');
  });

  test('a number as the 4th argument is the tolerance, as in the other clients', async () => {
    const t = Math.floor(Date.now() / 1000) - 120; // signed two minutes ago
    await assert.rejects(Webhook.verify(BODY, header(t), SECRET, 60), SignatureVerificationError);
    assert.equal((await Webhook.verify(BODY, header(t), SECRET, 600)).id, 'evt_1');
    assert.equal((await Webhook.verify(BODY, header(t), SECRET, { tolerance: 600 })).id, 'evt_1');
  });

  test('any other 4th argument, or a tolerance that is not a number >= 0, is a TypeError', async () => {
    for (const options of ['60', null, true, [60], Number.NaN, -1, { tolerance: '60' }, { tolerance: Number.NaN }]) {
      await assert.rejects(
        Webhook.verify(BODY, header(), SECRET, options as unknown as number),
        TypeError,
        String(options),
      );
    }
  });

  test('missing or malformed headers are refused', async () => {
    const good = sign(BODY, NOW);
    for (const h of [
      null,
      undefined,
      '',
      'garbage',
      `v1=${good}`,
      `t=${NOW}`,
      `t=abc,v1=${good}`,
      `t=-${NOW},v1=${good}`,
      `t=${'1'.repeat(5000)},v1=${good}`,
      `t=${NOW},v1=`,
      `t=${NOW};v1=${good}`,
      `t=${NOW},${good}`,
    ])
      await refused(BODY, h);
  });

  test('an empty or missing secret is refused, as in the other clients', async () => {
    for (const secret of ['', undefined, null]) {
      await assert.rejects(
        Webhook.verify(BODY, header(NOW, sign(BODY, NOW, '')), secret as unknown as string, { now: NOW }),
        (err: unknown) => err instanceof SignatureVerificationError && /secret/.test(err.message),
        String(secret),
      );
    }
  });

  test('a signed payload that is not a JSON object is refused', async () => {
    await refused('[1,2]', `t=${NOW},v1=${sign('[1,2]', NOW)}`);
    await refused('not json', `t=${NOW},v1=${sign('not json', NOW)}`);
  });

  test('any validly signed object is accepted, even {}, and an empty body is not (as in the other clients)', async () => {
    for (const payload of ['{}', ' { } \n', '{"0":"a"}']) {
      const event = await Webhook.verify(payload, `t=${NOW},v1=${sign(payload, NOW)}`, SECRET, { now: NOW });
      assert.deepEqual(event, JSON.parse(payload));
    }
    for (const payload of ['', '[]', 'null', '"{}"']) await refused(payload, `t=${NOW},v1=${sign(payload, NOW)}`);
  });
});
