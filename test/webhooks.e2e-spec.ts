import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WEBHOOK_JOB_NAME, WEBHOOK_QUEUE, openSecret, webhookJobId } from '@dossier/contracts';
import {
  Api,
  FakeDns,
  QueueProbe,
  REPO_ROOT,
  Stack,
  TEST_WEBHOOK_SECRET_KEY,
  ledgerState,
  receiver,
  sql,
  waitFor,
  withFaults,
} from '@dossier/testing';

type Created = {
  status: string;
  webhook: { id: string; url: string; events: string[]; created_at: string };
  secret: string;
};
type ErrorBody = { status: string; error: { code: string; details?: { field: string; issue: string }[] } };
type Delivery = {
  event_id: string;
  type: string;
  attempt: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
};

/** A webhook's delivery rows, once they satisfy `until` (each attempt is recorded when it ends). */
function deliveriesOnce(
  client: Api,
  webhookId: string,
  key: string,
  until: (deliveries: Delivery[]) => boolean,
  what: string,
): Promise<Delivery[]> {
  return waitFor(
    async () =>
      (await client.get<{ deliveries: Delivery[] }>(`/v1/webhooks/${webhookId}/deliveries`, { key })).body.deliveries,
    until,
    { timeoutMs: 30_000, what },
  );
}

/**
 * What an integrator writes: the docs' own Node recipe (the ```js block under "Verifying a delivery" in
 * docs/operations.md), run as it is printed, so that the snippet people copy is the one tested.
 */
const verify = ((): ((raw: string, header: string, secret: string, toleranceS?: number) => boolean) => {
  const doc = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
  const block = /Verifying a delivery[\s\S]*?```js\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/operations.md: no ```js block after "Verifying a delivery"');
  const body = block.replace(/^import .*\n/m, '');
  return new Function('createHmac', 'timingSafeEqual', `${body}\nreturn verify;`)(createHmac, timingSafeEqual) as never;
})();

describe('webhooks (gateway + worker processes, real Redis and Postgres, a receiver on loopback)', () => {
  let stack: Stack;
  let api: Api;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    stack = await Stack.start({
      label: 'webhooks',
      env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
      workerEnv: { WEBHOOK_TIMEOUT_MS: '500', WEBHOOK_RETRY_BASE_MS: '100' },
    });
    api = new Api(stack.baseUrl);
    ({ key, accountId } = await api.register());
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("keeps modes apart: a test key's webhook takes only test events, a live one only live events, and neither key sees the other's (ADR 0034)", async () => {
    const testKey = (await api.post<{ api_key: string }>('/v1/auth/keys', { mode: 'test' }, { key })).body.api_key;
    const [liveHook, testHook] = await Promise.all([receiver([]), receiver([])]);
    try {
      const events = ['search.completed'];
      const live = await api.post<Created>('/v1/webhooks', { url: liveHook.url, events }, { key });
      const test = await api.post<Created>('/v1/webhooks', { url: testHook.url, events }, { key: testKey });
      expect([live.status, test.status]).toEqual([201, 201]);
      const ids = async (k: string) =>
        (await api.get<{ webhooks: { id: string }[] }>('/v1/webhooks', { key: k })).body.webhooks.map((w) => w.id);
      expect(await ids(testKey)).toEqual([test.body.webhook.id]);
      expect(await ids(key)).toContain(live.body.webhook.id);
      expect(await ids(key)).not.toContain(test.body.webhook.id);
      const liveId = live.body.webhook.id;
      expect((await api.get(`/v1/webhooks/${liveId}/deliveries`, { key: testKey })).status).toBe(404);
      expect((await api.request('DELETE', `/v1/webhooks/${liveId}`, { key: testKey })).status).toBe(404);

      const liveSearch = await api.post<{ search_id: string }>(
        '/v1/verify/phone',
        { phone: '+1 650 253 0000' },
        { key },
      );
      const testSearch = await api.post<{ search_id: string }>(
        '/v1/verify/phone',
        { phone: '+15555550100' },
        { key: testKey },
      );
      expect([liveSearch.status, testSearch.status]).toEqual([200, 200]);
      const eventOf = (searchId: string) => `evt_${searchId.slice('srch_'.length)}`;
      const idsOf = (hook: typeof liveHook) => hook.received.map((r) => (JSON.parse(r.raw) as { id: string }).id);
      await waitFor(
        async () => [idsOf(liveHook), idsOf(testHook)],
        ([l, t]) => l!.length > 0 && t!.length > 0,
        { timeoutMs: 30_000, what: 'both webhooks to receive an event' },
      );
      // Both searches' events were queued when they settled: a delivery across modes would arrive with them.
      await new Promise((r) => setTimeout(r, 1000));
      expect(idsOf(liveHook)).toEqual([eventOf(liveSearch.body.search_id)]);
      expect(idsOf(testHook)).toEqual([eventOf(testSearch.body.search_id)]);
    } finally {
      await Promise.all([liveHook.close(), testHook.close()]);
      await sql(`DELETE FROM webhooks WHERE account_id = $1`, [accountId]);
    }
  });

  it('delivers a completed search signed, after a receiver that failed (500) and hung, recording every attempt', async () => {
    const hook = await receiver([500, 'hang', 200]);
    let id = '';
    try {
      const created = await api.post<Created>('/v1/webhooks', { url: hook.url }, { key });
      expect(created.status).toBe(201);
      expect(created.body.webhook).toEqual({
        id: expect.stringMatching(/^wh_/),
        url: hook.url,
        events: ['search.completed', 'search.failed', 'batch.completed'],
        created_at: expect.any(String),
      });
      expect(created.body.secret).toMatch(/^whsec_/);
      id = created.body.webhook.id;

      const search = await api.post<{ search_id: string }>('/v1/verify/phone', { phone: '+1 650 253 0000' }, { key });
      expect(search.status).toBe(200);
      const got = await api.get<Record<string, unknown>>(`/v1/searches/${search.body.search_id}`, { key });

      const deliveries = await waitFor(
        async () =>
          (await api.get<{ deliveries: Delivery[] }>(`/v1/webhooks/${created.body.webhook.id}/deliveries`, { key }))
            .body.deliveries,
        (d) => d.some((x) => x.outcome === 'delivered'),
        { timeoutMs: 30_000, what: 'a delivered attempt' },
      );
      const eventId = `evt_${search.body.search_id.slice('srch_'.length)}`;
      expect(deliveries).toEqual([
        expect.objectContaining({
          event_id: eventId,
          type: 'search.completed',
          attempt: 3,
          outcome: 'delivered',
          status_code: 200,
          error: null,
        }),
        expect.objectContaining({
          event_id: eventId,
          attempt: 2,
          outcome: 'retrying',
          status_code: null,
          error: 'no answer within 500 ms',
        }),
        expect.objectContaining({
          event_id: eventId,
          attempt: 1,
          outcome: 'retrying',
          status_code: 500,
          error: 'answered 500',
        }),
      ]);

      expect(hook.received).toHaveLength(3);
      const events = hook.received.map((r) => JSON.parse(r.raw) as { id: string; type: string; data: unknown });
      // the same event on every attempt: receivers dedupe on its id
      expect(new Set(events.map((e) => e.id))).toEqual(new Set([eventId]));
      const last = hook.received[2]!;
      expect(events[2]).toEqual({
        id: eventId,
        type: 'search.completed',
        created_at: expect.any(String),
        data: got.body,
      });
      expect(last.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verify(last.raw, last.signature, created.body.secret)).toBe(true);
      // a forged signature: the body tampered with, or the wrong secret, does not verify
      expect(verify(last.raw.replace('"success"', '"succesS"'), last.signature, created.body.secret)).toBe(false);
      expect(verify(last.raw, last.signature, 'whsec_not-the-secret')).toBe(false);
      // a timestamp that is not a number, or is too old, does not verify though its HMAC is right
      const signed = (t: string) =>
        `t=${t},v1=${createHmac('sha256', created.body.secret).update(`${t}.${last.raw}`).digest('hex')}`;
      expect(verify(last.raw, signed(String(Math.floor(Date.now() / 1000))), created.body.secret)).toBe(true);
      expect(verify(last.raw, signed('later'), created.body.secret)).toBe(false);
      expect(verify(last.raw, signed(String(Math.floor(Date.now() / 1000) - 301)), created.body.secret)).toBe(false);
    } finally {
      // later searches send it nothing: its receiver is gone
      if (id) await api.request('DELETE', `/v1/webhooks/${id}`, { key });
      await hook.close();
    }
  });

  it("refuses, in the docs' recipe, a delivery checked against an unset secret or with no signature header, as the clients do", () => {
    const raw = '{"id":"evt_1","type":"search.completed","created_at":"2026-11-23T09:00:00.000Z","data":{}}';
    const t = String(Math.floor(Date.now() / 1000));
    // Anyone can sign with the empty key: a receiver whose secret variable is empty must accept nothing.
    const forged = `t=${t},v1=${createHmac('sha256', '').update(`${t}.${raw}`).digest('hex')}`;
    expect(verify(raw, forged, '')).toBe(false);
    // A request without the header (someone else's POST) is refused, not a TypeError in the receiver.
    expect(verify(raw, undefined as unknown as string, 'whsec_x')).toBe(false);
  });

  it('sends an event only to the webhooks that take its type', async () => {
    const all = await receiver([]);
    const failedOnly = await receiver([]);
    try {
      const a = await api.post<Created>('/v1/webhooks', { url: all.url }, { key });
      const f = await api.post<Created>('/v1/webhooks', { url: failedOnly.url, events: ['search.failed'] }, { key });
      const search = await api.post<{ search_id: string }>('/v1/verify/phone', { phone: '+44 20 7946 0958' }, { key });
      expect(search.status).toBe(200);
      const eventId = `evt_${search.body.search_id.slice('srch_'.length)}`;
      // both webhooks' jobs would have been queued together, by the one call that settled the search
      await waitFor(
        async () =>
          (await api.get<{ deliveries: Delivery[] }>(`/v1/webhooks/${a.body.webhook.id}/deliveries`, { key })).body
            .deliveries,
        (d) => d.some((x) => x.event_id === eventId && x.outcome === 'delivered'),
        { timeoutMs: 30_000, what: 'the completed event delivered to the webhook taking every event' },
      );
      const none = await api.get<{ deliveries: Delivery[] }>(`/v1/webhooks/${f.body.webhook.id}/deliveries`, { key });
      expect(none.body.deliveries).toEqual([]);
      expect(failedOnly.received).toEqual([]);
    } finally {
      for (const w of await api
        .get<{ webhooks: { id: string }[] }>('/v1/webhooks', { key })
        .then((r) => r.body.webhooks))
        await api.request('DELETE', `/v1/webhooks/${w.id}`, { key });
      await Promise.all([all.close(), failedOnly.close()]);
    }
  });

  it('records an event failed once its last attempt fails (attempts cut to 3 for the test)', async () => {
    const short = await Stack.start({
      label: 'webhooks-fail',
      env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
      workerEnv: { WEBHOOK_TIMEOUT_MS: '500', WEBHOOK_RETRY_BASE_MS: '50', ...withFaults({ webhookAttempts: 3 }) },
    });
    const hook = await receiver([500, 502, 503, 200]);
    try {
      const other = new Api(short.baseUrl);
      const { key: k } = await other.register();
      const webhookId = await other.webhook(k, hook.url);
      const search = await other.post<{ search_id: string }>(
        '/v1/verify/phone',
        { phone: '+1 650 253 0000' },
        { key: k },
      );
      expect(search.status).toBe(200);
      const deliveries = await deliveriesOnce(
        other,
        webhookId,
        k,
        (d) => d.some((x) => x.outcome === 'failed'),
        'the event recorded failed',
      );
      expect(deliveries.map((d) => [d.attempt, d.outcome, d.status_code])).toEqual([
        [3, 'failed', 503],
        [2, 'retrying', 502],
        [1, 'retrying', 500],
      ]);
      expect(hook.received).toHaveLength(3);
    } finally {
      await hook.close();
      await short.stop();
    }
  });

  it('checks the URL again at delivery: a worker without WEBHOOK_ALLOW_PRIVATE sends nothing to loopback', async () => {
    const split = await Stack.start({
      label: 'webhooks-recheck',
      gatewayEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' },
      workerEnv: { WEBHOOK_ALLOW_PRIVATE: 'false', ...withFaults({ webhookAttempts: 1 }) },
    });
    const hook = await receiver([]);
    try {
      const other = new Api(split.baseUrl);
      const { key: k } = await other.register();
      // https, so that only the address can be what the worker refuses
      const url = hook.url.replace('http:', 'https:');
      const webhookId = await other.webhook(k, url);
      expect((await other.post('/v1/verify/phone', { phone: '+1 650 253 0000' }, { key: k })).status).toBe(200);
      const deliveries = await deliveriesOnce(other, webhookId, k, (d) => d.length > 0, 'the refused attempt recorded');
      expect(deliveries).toEqual([
        expect.objectContaining({
          attempt: 1,
          outcome: 'failed',
          status_code: null,
          error: 'refused: the URL resolves to a loopback, private, link-local or metadata address',
        }),
      ]);
      expect(hook.received).toEqual([]);
    } finally {
      await hook.close();
      await split.stop();
    }
  });

  it('refuses to register a URL whose host name has not resolved within WEBHOOK_TIMEOUT_MS, without waiting on the name server', async () => {
    const dns = await FakeDns.start({ 'silent.test': 'timeout' });
    const slow = await Stack.start({
      label: 'webhooks-slow-dns-register',
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_DNS_SERVERS: dns.server, WEBHOOK_TIMEOUT_MS: '500' },
    });
    try {
      const other = new Api(slow.baseUrl);
      const { key: k } = await other.register();
      const created = await other.post('/v1/webhooks', { url: 'http://silent.test:8080/hook' }, { key: k });
      expect({ status: created.status, body: created.body }).toEqual({
        status: 400,
        body: expect.objectContaining({
          error: expect.objectContaining({
            code: 'validation_error',
            details: [{ field: 'url', issue: 'has a host name that did not resolve within 500 ms' }],
          }),
        }),
      });
      expect(dns.queries).toContainEqual({ name: 'silent.test', type: 'A' });
      expect((await other.get<{ webhooks: unknown[] }>('/v1/webhooks', { key: k })).body.webhooks).toEqual([]);
    } finally {
      await slow.stop();
      await dns.close();
    }
  });

  it('ends an attempt whose host name has not resolved within WEBHOOK_TIMEOUT_MS, recorded failed (a DNS server that stopped answering)', async () => {
    const dns = await FakeDns.start({ 'hooks.test': { a: ['127.0.0.1'] } });
    const hook = await receiver([]);
    const slow = await Stack.start({
      label: 'webhooks-slow-dns',
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_DNS_SERVERS: dns.server },
      workerEnv: { WEBHOOK_TIMEOUT_MS: '500', ...withFaults({ webhookAttempts: 1 }) },
    });
    try {
      const other = new Api(slow.baseUrl);
      const { key: k } = await other.register();
      const url = hook.url.replace('127.0.0.1', 'hooks.test');
      const webhookId = await other.webhook(k, url);
      // From now on the name's server never answers: the check before the attempt waits on it.
      dns.set('hooks.test', 'timeout');
      const asked = dns.queries.length;
      expect((await other.post('/v1/verify/phone', { phone: '+1 650 253 0000' }, { key: k })).status).toBe(200);
      const deliveries = await deliveriesOnce(other, webhookId, k, (d) => d.length > 0, 'the attempt recorded');
      expect(deliveries).toEqual([
        expect.objectContaining({
          attempt: 1,
          outcome: 'failed',
          status_code: null,
          error: "not sent: the URL's host name did not resolve within 500 ms",
        }),
      ]);
      expect(dns.queries.slice(asked)).toContainEqual({ name: 'hooks.test', type: 'A' });
      expect(hook.received).toEqual([]);
    } finally {
      await slow.stop();
      await hook.close();
      await dns.close();
    }
  });

  it("tries the host name's other addresses within the attempt when the first refuses the connection", async () => {
    const hook = await receiver([]);
    const port = new URL(hook.url).port;
    // 127.0.0.2 is loopback too, but the receiver listens on 127.0.0.1 alone: connecting to it is refused.
    const dns = await FakeDns.start({ 'hooks.test': { a: ['127.0.0.2', '127.0.0.1'] } });
    const multi = await Stack.start({
      label: 'webhooks-addresses',
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_DNS_SERVERS: dns.server },
      workerEnv: { ...withFaults({ webhookAttempts: 1 }) },
    });
    try {
      const other = new Api(multi.baseUrl);
      const { key: k } = await other.register();
      const webhookId = await other.webhook(k, `http://hooks.test:${port}/hooks`);
      expect((await other.post('/v1/verify/phone', { phone: '+1 650 253 0000' }, { key: k })).status).toBe(200);
      const deliveries = await deliveriesOnce(other, webhookId, k, (d) => d.length > 0, 'the attempt recorded');
      expect(deliveries).toEqual([
        expect.objectContaining({ attempt: 1, outcome: 'delivered', status_code: 200, error: null }),
      ]);
      expect(hook.received).toHaveLength(1);
    } finally {
      await multi.stop();
      await hook.close();
      await dns.close();
    }
  });

  it('records attempts it cannot sign (a worker whose WEBHOOK_SECRET_KEY is not the one that sealed the secret)', async () => {
    const split = await Stack.start({
      label: 'webhooks-other-key',
      env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
      workerEnv: {
        WEBHOOK_SECRET_KEY: 'ab'.repeat(32),
        WEBHOOK_RETRY_BASE_MS: '50',
        ...withFaults({ webhookAttempts: 2 }),
      },
    });
    const hook = await receiver([]);
    try {
      const other = new Api(split.baseUrl);
      const { key: k } = await other.register();
      const webhookId = await other.webhook(k, hook.url);
      expect((await other.post('/v1/verify/phone', { phone: '+1 650 253 0000' }, { key: k })).status).toBe(200);
      const deliveries = await deliveriesOnce(
        other,
        webhookId,
        k,
        (d) => d.some((x) => x.outcome === 'failed'),
        'the unsigned event recorded failed',
      );
      const error = "not sent: this server's WEBHOOK_SECRET_KEY does not open the webhook's signing secret";
      expect(deliveries.map((d) => [d.attempt, d.outcome, d.status_code, d.error])).toEqual([
        [2, 'failed', null, error],
        [1, 'retrying', null, error],
      ]);
      expect(hook.received).toEqual([]);
    } finally {
      await hook.close();
      await split.stop();
    }
  });

  it("records an event failed when its job's payload cannot be read (a later version's), sending nothing", async () => {
    const hook = await receiver([]);
    const queues = new QueueProbe(stack.env['QUEUE_PREFIX']!);
    try {
      const webhookId = await api.webhook(key, hook.url);
      const event = { id: 'evt_0fromALaterVersion', type: 'search.completed', created_at: new Date().toISOString() };
      const jobId = webhookJobId(webhookId, event.id);
      await queues
        .queue(WEBHOOK_QUEUE)
        .add(WEBHOOK_JOB_NAME, { v: 2, webhook_id: webhookId, event: { ...event, data: {} } }, { jobId, attempts: 5 });
      const deliveries = await waitFor(
        async () =>
          (await api.get<{ deliveries: Delivery[] }>(`/v1/webhooks/${webhookId}/deliveries`, { key })).body.deliveries,
        (d) => d.length > 0,
        { timeoutMs: 30_000, what: 'the unreadable event recorded' },
      );
      expect(deliveries).toEqual([
        expect.objectContaining({
          event_id: event.id,
          type: 'search.completed',
          attempt: 1,
          outcome: 'failed',
          status_code: null,
          error: 'the event could not be read (invalid job payload): given up',
        }),
      ]);
      // The row is written before the job ends (its attempt throws after recording it): wait for the queue too.
      const ended = await waitFor(
        () => queues.job(WEBHOOK_QUEUE, jobId),
        (j) => j.state !== 'active',
        { timeoutMs: 30_000, what: 'the job to leave the active state' },
      );
      expect(ended).toMatchObject({ state: 'failed', attemptsMade: 1 });
      expect(hook.received).toEqual([]);
    } finally {
      await queues.close();
      await hook.close();
      await sql(`DELETE FROM webhooks WHERE account_id = $1`, [accountId]);
    }
  });

  it('keeps the secret encrypted: the row holds no plain secret, and opens with WEBHOOK_SECRET_KEY', async () => {
    const created = await api.post<Created>(
      '/v1/webhooks',
      { url: 'http://127.0.0.1:9/x', events: ['search.failed'] },
      { key },
    );
    expect(created.status).toBe(201);
    expect(created.body.webhook.events).toEqual(['search.failed']);
    const [row] = await sql<{ secret_sealed: string }>(`SELECT secret_sealed FROM webhooks WHERE id = $1`, [
      created.body.webhook.id,
    ]);
    expect(row!.secret_sealed).not.toContain(created.body.secret.slice('whsec_'.length));
    expect(openSecret(row!.secret_sealed, Buffer.from(TEST_WEBHOOK_SECRET_KEY, 'hex'))).toBe(created.body.secret);
    const list = await api.get<{ webhooks: Record<string, unknown>[] }>('/v1/webhooks', { key });
    expect(list.status).toBe(200);
    const listed = list.body.webhooks.find((w) => w['id'] === created.body.webhook.id);
    expect(listed).toEqual(created.body.webhook);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
  });

  it.each([
    ['not a URL', { url: 'not a url' }, 'url'],
    ['ftp://', { url: 'ftp://example.com/x' }, 'url'],
    ['an unknown event', { url: 'http://127.0.0.1:9/x', events: ['search.started'] }, 'events.0'],
    ['no events', { url: 'http://127.0.0.1:9/x', events: [] }, 'events'],
    ['an unknown field', { url: 'http://127.0.0.1:9/x', secret: 'mine' }, ''],
  ])('refuses %s with 400', async (_what, body, field) => {
    const res = await api.post<ErrorBody>('/v1/webhooks', body, { key });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    if (field) expect(res.body.error.details?.map((d) => d.field)).toContain(field);
  });

  it('holds the URL as stored (non-ASCII percent-encoded) to 2048 characters, not only the URL as given', async () => {
    const { key: own } = await api.register();
    const base = 'http://127.0.0.1:9/';
    // 2,040 characters as given; each € is stored as %E2%82%AC, 9 characters: 18,208 as stored.
    const euros = await api.post<ErrorBody>('/v1/webhooks', { url: base + '€'.repeat(2021) }, { key: own });
    expect({ status: euros.status, error: euros.body.error }).toEqual({
      status: 400,
      error: expect.objectContaining({
        code: 'validation_error',
        details: [
          {
            field: 'url',
            issue:
              'must be at most 2048 characters as stored, normalised with non-ASCII characters percent-encoded (€ is %E2%82%AC, 9 characters): this one is 18208',
          },
        ],
      }),
    });
    // At the bound, as stored: taken, and listed as it was stored.
    const fits = base + '€'.repeat(10) + 'a'.repeat(2048 - base.length - 90);
    const created = await api.post<Created>('/v1/webhooks', { url: fits }, { key: own });
    expect(created.status).toBe(201);
    expect(created.body.webhook.url).toHaveLength(2048);
    expect((await api.get<{ webhooks: { url: string }[] }>('/v1/webhooks', { key: own })).body.webhooks).toEqual([
      expect.objectContaining({ url: created.body.webhook.url }),
    ]);
  });

  it("answers 503 unavailable on a gateway without WEBHOOK_SECRET_KEY, with a Retry-After past every client's longest sleep (retrying soon cannot help)", async () => {
    const keyless = new Api((await stack.startGateway({ WEBHOOK_SECRET_KEY: '' })).baseUrl);
    const res = await keyless.post<ErrorBody>('/v1/webhooks', { url: 'http://127.0.0.1:9/x' }, { key });
    expect({ status: res.status, code: res.body.error.code, retryAfter: res.headers.get('retry-after') }).toEqual({
      status: 503,
      code: 'unavailable',
      retryAfter: '3600',
    });
  });

  it('takes at most 16 webhooks per account and mode, also when they are created at once, and room again after a delete', async () => {
    const { key: own } = await api.register();
    const create = (n: number, k = own) =>
      api.post<Created | ErrorBody>('/v1/webhooks', { url: `http://127.0.0.1:9/h${n}` }, { key: k });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => create(n)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(16);
    const refused = answers.filter((a) => a.status === 400);
    expect(refused).toHaveLength(4);
    expect((refused[0]!.body as ErrorBody).error).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'url', issue: expect.stringMatching(/has 16 webhooks already/) }],
    });
    // the test mode has its own 16
    const testKey = (await api.post<{ api_key: string }>('/v1/auth/keys', { mode: 'test' }, { key: own })).body.api_key;
    expect((await create(100, testKey)).status).toBe(201);
    const first = (answers.find((a) => a.status === 201)!.body as Created).webhook.id;
    expect((await api.request('DELETE', `/v1/webhooks/${first}`, { key: own })).status).toBe(200);
    expect((await create(101)).status).toBe(201);
    expect((await create(102)).status).toBe(400);
  });

  it('keeps each account to its own webhooks: another cannot list, read the deliveries of, or delete them', async () => {
    const created = await api.post<Created>('/v1/webhooks', { url: 'http://127.0.0.1:9/mine' }, { key });
    const other = await api.register();
    const id = created.body.webhook.id;
    const list = await api.get<{ webhooks: { id: string }[] }>('/v1/webhooks', { key: other.key });
    expect(list.body.webhooks).toEqual([]);
    expect((await api.get(`/v1/webhooks/${id}/deliveries`, { key: other.key })).status).toBe(404);
    expect((await api.request('DELETE', `/v1/webhooks/${id}`, { key: other.key })).status).toBe(404);
    const own = await api.request<{ webhook: { id: string } }>('DELETE', `/v1/webhooks/${id}`, { key });
    expect(own.status).toBe(200);
    expect(own.body.webhook.id).toBe(id);
    expect((await api.request('DELETE', `/v1/webhooks/${id}`, { key })).status).toBe(404);
  });

  describe('without WEBHOOK_ALLOW_PRIVATE', () => {
    let strict: Api;
    beforeAll(async () => {
      strict = new Api((await stack.startGateway({ WEBHOOK_ALLOW_PRIVATE: 'false' })).baseUrl);
    });

    it('registers an https URL on a public address (the refusals below are not blanket ones)', async () => {
      // On an account that runs no lookup: nothing may ever be delivered to a public address from a test.
      const { key: idle } = await strict.register();
      const res = await strict.post<Created>('/v1/webhooks', { url: 'https://203.0.113.10/hook' }, { key: idle });
      expect(res.status).toBe(201);
      expect(res.body.webhook.url).toBe('https://203.0.113.10/hook');
    });

    it.each([
      'https://127.0.0.1/hook',
      'https://10.1.2.3/hook',
      'https://[::1]/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00:ec2::254]/hook',
      'https://100.64.0.1/hook',
      'https://0.0.0.0/hook',
      'https://localhost/hook',
      'http://93.184.215.14/hook',
    ])('refuses %s with 400, storing and charging nothing', async (url) => {
      const before = await ledgerState(accountId);
      const [{ n: stored }] = (await sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhooks WHERE account_id = $1`,
        [accountId],
      )) as [{ n: number }];
      const res = await strict.post<ErrorBody>('/v1/webhooks', { url }, { key });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({
        code: 'validation_error',
        details: [{ field: 'url', issue: expect.any(String) }],
      });
      expect(await ledgerState(accountId)).toEqual(before);
      const [{ n }] = (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM webhooks WHERE account_id = $1`, [
        accountId,
      ])) as [{ n: number }];
      expect(n).toBe(stored);
    });
  });
});
