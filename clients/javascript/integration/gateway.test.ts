/**
 * Integration tests against a real Dossier gateway + worker, started with SIGNUP_CREDITS=3.
 * DOSSIER_BASE_URL must point at it: when it is unset the suite FAILS (it never skips).
 *
 * The steps share one fresh account and run in order; the credit arithmetic relies on that.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import {
  AuthenticationError,
  Client,
  ConflictError,
  InsufficientCreditsError,
  NotFoundError,
  SignatureVerificationError,
  ValidationError,
  Webhook,
  type PhoneResult,
} from '../src/index.js';

const baseUrl = process.env['DOSSIER_BASE_URL'];
const PHONE = '+14155552671';
const PASSWORD = 'correct horse battery staple';

const UNSET = 'DOSSIER_BASE_URL is not set: point it at a running gateway (e.g. http://127.0.0.1:3000)';

test('DOSSIER_BASE_URL is set', () => {
  assert.ok(baseUrl, UNSET);
});

describe('Dossier gateway (integration)', () => {
  const email = `js-client-${Date.now()}-${randomBytes(4).toString('hex')}@example.com`;
  let apiKey = '';
  let client: Client;
  /** The balance this suite expects, tracked step by step. */
  let credits = 0;

  before(() => {
    // Without it every step fails (is cancelled) instead of silently talking to localhost:3000.
    if (!baseUrl) throw new Error(UNSET);
  });

  const assertPhoneResult = (result: PhoneResult | undefined) => {
    assert.ok(result, 'one result');
    assert.equal(result.e164, PHONE);
    assert.equal(result.valid, true);
    assert.equal(result.country_code, '1');
  };

  test('register returns an account, a key and the signup credits; the e-mail cannot be reused', async () => {
    const reg = await Client.register({ email, password: PASSWORD, baseUrl });
    assert.equal(reg.status, 'success');
    assert.match(reg.api_key, /^dsk_[0-9A-Za-z]{32,}$/);
    assert.equal(reg.account.email, email);
    assert.match(reg.account.id, /^acct_/);
    assert.equal(reg.credits_remaining, 3, 'the gateway under test must run with SIGNUP_CREDITS=3');
    apiKey = reg.api_key;
    credits = reg.credits_remaining;
    client = new Client({ apiKey, baseUrl });

    await assert.rejects(
      Client.register({ email: email.toUpperCase(), password: PASSWORD, baseUrl }),
      (err: unknown) => {
        assert.ok(err instanceof ConflictError);
        assert.equal(err.status, 409);
        assert.equal(err.code, 'email_taken');
        assert.ok(err.request_id);
        return true;
      },
    );
  });

  test('account() shows the balance', async () => {
    const account = await client.account();
    assert.equal(account.account.email, email);
    assert.equal(account.credits_remaining, credits);
  });

  test('a person search returns results == [] and spends no credit', async () => {
    const result = await client.search({ name: 'John Smith' });
    assert.equal(result.status, 'success');
    assert.deepEqual(result.results, []);
    assert.match(result.search_id, /^srch_/);
    assert.ok(Array.isArray(result.sources));
    assert.equal(result.credits_remaining, credits);

    const generic = await client.search({ query: 'John Smith', type: 'person' });
    assert.deepEqual(generic.results, []);
    assert.equal(generic.credits_remaining, credits);
    // No sanctions list is imported: a screen finds no one, and costs nothing.
    const screened = await client.screen({ name: 'John Smith', birth_year: 1970, country: 'US' });
    assert.equal(screened.status, 'success');
    assert.deepEqual(screened.results, []);
    assert.equal((await client.account()).credits_remaining, credits);
  });

  test('validation errors carry field details and charge nothing', async () => {
    await assert.rejects(client.verifyPhone('abc'), (err: unknown) => {
      assert.ok(err instanceof ValidationError, `got ${String(err)}`);
      assert.equal(err.status, 400);
      assert.equal(err.code, 'validation_error');
      assert.ok(
        err.details.some((d) => d.field === 'phone'),
        JSON.stringify(err.details),
      );
      assert.ok(err.request_id);
      return true;
    });
    // `top` chooses the sites a username is checked on: without a username the gateway refuses it, naming it.
    await assert.rejects(client.searchPerson({ name: 'John Smith', top: 5 }), (err: unknown) => {
      assert.ok(err instanceof ValidationError, `got ${String(err)}`);
      assert.ok(
        err.details.some((d) => d.field === 'top'),
        JSON.stringify(err.details),
      );
      return true;
    });
    await assert.rejects(client.searchPerson({ location: 'Austin, TX' }), (err: unknown) => {
      assert.ok(err instanceof ValidationError);
      assert.ok(
        err.details.some((d) => d.field === 'name'),
        JSON.stringify(err.details),
      );
      return true;
    });
    assert.equal((await client.account()).credits_remaining, credits);
  });

  test('a phone lookup returns one result and costs 1 credit; a replay of its Idempotency-Key costs nothing', async () => {
    const key = `js-it-${randomBytes(8).toString('hex')}`;
    const result = await client.verifyPhone(PHONE, { idempotencyKey: key });
    assert.equal(result.status, 'success');
    assert.equal(result.results.length, 1);
    assertPhoneResult(result.results[0]);
    assert.equal(result.credits_remaining, credits - 1);
    assert.equal(result.creditsSpent, 1);
    // The key's rate limit, as every answer reports it (the gateway's default burst: 100).
    assert.equal(result.rateLimit.limit, 100);
    assert.equal(typeof result.rateLimit.remaining, 'number');
    assert.equal(typeof result.rateLimit.reset, 'number');
    credits -= 1;

    const replay = await client.verifyPhone(PHONE, { idempotencyKey: key });
    assert.equal(replay.search_id, result.search_id);
    assert.equal(replay.replayed, true);
    assert.equal(replay.creditsSpent, 0);
    assert.equal((await client.account()).credits_remaining, credits);

    await assert.rejects(
      client.verifyPhone('+442079460958', { idempotencyKey: key }),
      (err: unknown) => err instanceof ConflictError && err.code === 'idempotency_conflict',
    );
  });

  test('async: { wait: false } returns the pending search, getSearch() follows it to the end', async () => {
    const started = await client.verifyPhone(PHONE, { wait: false });
    assert.match(started.search_id, /^srch_/);
    assert.equal(started.credits_remaining, credits - 1, 'reserved on acceptance');
    credits -= 1;
    if (started.status === 'pending') assert.deepEqual(started.results, []);

    let current = await client.getSearch(started.search_id);
    const deadline = Date.now() + 10_000;
    while (current.status === 'pending' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      current = await client.getSearch(started.search_id);
    }
    assert.equal(current.status, 'success');
    assert.equal(current.search_id, started.search_id);
    assertPhoneResult(current.results[0] as PhoneResult);
    assert.equal(current.credits_remaining, credits);

    const waited = await client.getSearch(started.search_id, { wait: true });
    assert.equal(waited.status, 'success');
  });

  test('the third phone lookup spends the last credit, the next one raises InsufficientCreditsError', async () => {
    const last = await client.verifyPhone({ phone: PHONE });
    assertPhoneResult(last.results[0]);
    assert.equal(last.credits_remaining, credits - 1);
    credits -= 1;
    assert.equal(credits, 0);

    await assert.rejects(client.verifyPhone(PHONE), (err: unknown) => {
      assert.ok(err instanceof InsufficientCreditsError, `got ${String(err)}`);
      assert.equal(err.status, 402);
      assert.equal(err.code, 'insufficient_credits');
      assert.ok(err.message.length > 0);
      assert.ok(err.request_id);
      assert.equal(err.credits_remaining, 0);
      return true;
    });
    assert.equal((await client.account()).credits_remaining, 0);

    // Credits are reserved on acceptance, so even a search that ends up free needs the balance.
    await assert.rejects(client.searchPerson({ name: 'Jane Doe' }), InsufficientCreditsError);
  });

  test('an unknown search id raises NotFoundError', async () => {
    await assert.rejects(
      client.getSearch('srch_doesnotexist0000'),
      (err: unknown) => err instanceof NotFoundError && err.code === 'not_found',
    );
  });

  test("the gateway echoes the caller's requestId, in an answer and in an error", async () => {
    const requestId = `js-it/${randomBytes(8).toString('hex')}`;
    assert.equal((await client.account({ requestId })).requestId, requestId);
    assert.equal((await client.listKeys({ requestId })).requestId, requestId);
    await assert.rejects(
      client.getSearch('srch_doesnotexist0000', { requestId }),
      (err: unknown) => err instanceof NotFoundError && err.requestId === requestId,
    );
    assert.notEqual((await client.account()).requestId, requestId, 'without one, the gateway makes one up');
  });

  test("listSearches pages the account's searches newest first; iterSearches follows next_cursor", async () => {
    const first = await client.listSearches({ kind: 'phone', limit: 2 });
    assert.equal(first.searches.length, 2);
    assert.ok(first.next_cursor);
    const phones: string[] = [];
    const created: string[] = [];
    for await (const s of client.iterSearches({ kind: 'phone', limit: 2 })) {
      assert.equal(s.kind, 'phone');
      assert.equal(s.status, 'succeeded');
      phones.push(s.search_id);
      created.push(s.created_at);
    }
    assert.equal(phones.length, 3, 'the three charged phone lookups');
    assert.deepEqual(
      phones.slice(0, 2),
      first.searches.map((s) => s.search_id),
    );
    assert.deepEqual(created, [...created].sort().reverse());
    // Date filters reach the gateway as RFC 3339 date-times it accepts.
    const dayAgo = new Date(Date.now() - 86_400_000);
    const recent = await client.listSearches({ kind: 'phone', since: dayAgo });
    assert.deepEqual(
      recent.searches.map((s) => s.search_id),
      phones,
    );
    assert.deepEqual((await client.listSearches({ kind: 'phone', until: dayAgo })).searches, []);
    await assert.rejects(client.listSearches({ limit: 0 }), ValidationError);
  });

  test('login returns a new key; createKey/listKeys work; a revoked key raises AuthenticationError', async () => {
    const login = await Client.login({ email, password: PASSWORD, baseUrl });
    assert.equal(login.status, 'success');
    assert.match(login.api_key, /^dsk_/);
    assert.notEqual(login.api_key, apiKey);
    assert.match(login.key_id, /^key_/);
    const viaLogin = new Client({ apiKey: login.api_key, baseUrl });
    assert.equal((await viaLogin.account()).account.email, email);

    await assert.rejects(Client.login({ email, password: 'wrong password!', baseUrl }), (err: unknown) => {
      assert.ok(err instanceof AuthenticationError);
      assert.equal(err.code, 'invalid_credentials');
      assert.equal(err.status, 401);
      return true;
    });

    const created = await client.createKey('js-integration');
    assert.match(created.api_key, /^dsk_/);
    assert.match(created.key_id, /^key_/);
    const unnamed = await client.createKey();
    assert.match(unnamed.key_id, /^key_/);

    const list = await client.listKeys();
    const ids = list.keys.map((k) => k.id);
    assert.ok(ids.includes(created.key_id));
    assert.ok(ids.includes(login.key_id));
    assert.ok(ids.includes(unnamed.key_id));
    const named = list.keys.find((k) => k.id === created.key_id)!;
    assert.equal(named.name, 'js-integration');
    assert.equal(named.revoked_at, null);
    assert.ok(created.api_key.startsWith(named.prefix));

    const doomed = new Client({ apiKey: created.api_key, baseUrl });
    await doomed.account();
    const revoked = await client.revokeKey(created.key_id);
    assert.equal(revoked.key?.id, created.key_id);
    assert.ok(revoked.key?.revoked_at);

    await assert.rejects(doomed.account(), (err: unknown) => {
      assert.ok(err instanceof AuthenticationError, `got ${String(err)}`);
      assert.equal(err.status, 401);
      assert.equal(err.code, 'unauthorized');
      assert.ok(err.request_id);
      return true;
    });
    await assert.rejects(doomed.verifyPhone(PHONE), AuthenticationError);
    await assert.rejects(
      new Client({ apiKey: 'dsk_not_a_real_key_00000000000000000000', baseUrl }).account(),
      AuthenticationError,
    );
  });
});

/** Batch, webhooks and test keys: each test on a fresh account of its own (3 signup credits). */
describe('Dossier gateway (integration): batch, webhooks, test keys', () => {
  before(() => {
    if (!baseUrl) throw new Error(UNSET);
  });

  const freshClient = async (tag: string): Promise<Client> => {
    const email = `js-${tag}-${Date.now()}-${randomBytes(4).toString('hex')}@example.com`;
    const reg = await Client.register({ email, password: PASSWORD, baseUrl });
    assert.equal(reg.credits_remaining, 3);
    return new Client({ apiKey: reg.api_key, baseUrl });
  };

  test('a batch of a valid phone and an invalid item: a result for one, its error for the other, one credit', async () => {
    const client = await freshClient('batch');
    const batch = await client.batch([
      { kind: 'phone', input: { phone: PHONE } },
      { kind: 'phone', input: { phone: 'abc' } },
    ]);
    assert.equal(batch.status, 'success');
    assert.match(batch.batch_id, /^bat_/);
    assert.equal(batch.items.length, 2);
    const [phone, invalid] = batch.items;
    assert.ok(phone?.ok, `item 0: ${JSON.stringify(phone)}`);
    assert.match(phone.search_id ?? '', /^srch_/);
    assert.equal((phone.results[0] as PhoneResult).e164, PHONE);
    assert.ok(invalid?.failed, `item 1: ${JSON.stringify(invalid)}`);
    assert.ok(invalid.error instanceof ValidationError);
    assert.equal(invalid.error.code, 'validation_error');
    assert.equal(batch.credits_remaining, 2, 'only the valid item is charged');
    assert.equal((await client.account()).credits_remaining, 2);

    const again = await client.getBatch(batch.batch_id);
    assert.equal(again.status, 'success');
    assert.equal(again.batch_id, batch.batch_id);
    assert.deepEqual(
      again.items.map((i) => i.status),
      ['success', 'error'],
    );
    const first = again.items[0];
    assert.ok(first?.ok);
    assert.equal(first.search_id, phone.search_id);

    const many = Array.from({ length: 101 }, () => ({ kind: 'phone' as const, input: { phone: PHONE } }));
    await assert.rejects(client.batch(many), (err: unknown) => err instanceof ValidationError && err.status === 400);
    await assert.rejects(client.getBatch('bat_doesnotexist'), NotFoundError);
    assert.equal((await client.account()).credits_remaining, 2);
  });

  test('webhooks: create (secret once), list, deliveries, delete; a refused URL is a ValidationError', async () => {
    const client = await freshClient('hooks');
    // An address literal from a documentation range: public-looking, and it resolves without DNS.
    const url = 'https://203.0.113.10/dossier';
    const created = await client.createWebhook({ url, events: ['search.completed', 'batch.completed'] });
    assert.match(created.secret, /^whsec_/);
    assert.match(created.webhook.id, /^wh_/);
    assert.equal(created.webhook.url, url);
    assert.deepEqual([...created.webhook.events].sort(), ['batch.completed', 'search.completed']);
    const listed = await client.listWebhooks();
    assert.deepEqual(
      listed.webhooks.map((w) => w.id),
      [created.webhook.id],
    );
    assert.ok(!('secret' in listed.webhooks[0]!), 'no secret in the list');
    assert.deepEqual((await client.webhookDeliveries(created.webhook.id)).deliveries, []);
    assert.equal((await client.deleteWebhook(created.webhook.id)).webhook?.id, created.webhook.id);
    assert.deepEqual((await client.listWebhooks()).webhooks, []);
    await assert.rejects(client.deleteWebhook(created.webhook.id), NotFoundError);
    await assert.rejects(
      client.createWebhook({ url: 'ftp://example.com/hook' }),
      (err: unknown) => err instanceof ValidationError && err.details.some((d) => d.field === 'url'),
    );
    assert.equal((await client.account()).credits_remaining, 3);
  });

  test('Webhook.verify accepts a signature computed as the server does with a real secret', async () => {
    const client = await freshClient('sign');
    const { secret, webhook } = await client.createWebhook({ url: 'https://203.0.113.10/verify' });
    await client.deleteWebhook(webhook.id);
    const body = JSON.stringify({
      id: 'evt_x',
      type: 'search.completed',
      created_at: new Date().toISOString(),
      data: { status: 'success', search_id: 'srch_x', results: [] },
    });
    const t = Math.floor(Date.now() / 1000);
    const mac = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    const event = await Webhook.verify(body, `t=${t},v1=${mac}`, secret);
    assert.equal(event.id, 'evt_x');
    assert.equal(event.type, 'search.completed');
    await assert.rejects(
      Webhook.verify(body, `t=${t},v1=${mac}`, `whsec_${'A'.repeat(43)}`),
      SignatureVerificationError,
    );
  });

  test("a test key (mode: 'test') is listed with its mode and looks up for free", async () => {
    const client = await freshClient('sandbox');
    const issued = await client.createKey({ name: 'sandbox', mode: 'test' });
    assert.match(issued.api_key, /^dsk_test_/);
    const { keys } = await client.listKeys();
    assert.equal(keys.find((k) => k.id === issued.key_id)?.mode, 'test');
    assert.deepEqual(keys.map((k) => k.mode).sort(), ['live', 'test']);

    const sandbox = new Client({ apiKey: issued.api_key, baseUrl });
    const result = await sandbox.verifyPhone('+15555550100');
    assert.equal(result.status, 'success');
    assert.equal(result.results[0]?.line_type, 'mobile');
    assert.equal(result.results[0]?.valid, true);
    assert.equal(result.creditsSpent, 0);
    assert.equal(result.credits_remaining, 3);
    assert.equal((await client.account()).credits_remaining, 3);
  });
});
