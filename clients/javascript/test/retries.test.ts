import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  Client,
  NotFoundError,
  RateLimitError,
  UnavailableError,
} from '../src/index.js';
import { SYSTEM_CLOCK } from '../src/transport.js';
import { backoffDelayMs } from '../src/util.js';
import {
  FAST,
  PHONE_RESULT,
  errorBody,
  fakeClock,
  freePort,
  sequence,
  startFake,
  success,
  type FakeServer,
  withFake,
} from './fake-server.js';

const KEY = 'dsk_unit_test_key_0123456789abcdefghij';
const ACCOUNT = { id: 'acc_1', email: 'a@example.com', created_at: '2026-11-24T00:00:00.000Z' };
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const unavailable = {
  status: 503,
  body: errorBody('unavailable', 'a backing service is unavailable; try again shortly'),
};

describe('backoff', () => {
  test('full jitter: a random delay in [0, min(cap, base * 2^attempt)]', () => {
    assert.equal(
      backoffDelayMs(0, 100, 10_000, () => 0.999999),
      99,
    );
    assert.equal(
      backoffDelayMs(1, 100, 10_000, () => 0.999999),
      199,
    );
    assert.equal(
      backoffDelayMs(3, 100, 10_000, () => 0.5),
      400,
    );
    assert.equal(
      backoffDelayMs(10, 100, 1_000, () => 0.999999),
      999,
      'capped',
    );
    assert.equal(
      backoffDelayMs(5, 100, 1_000, () => 0),
      0,
      'jitter reaches zero',
    );
    for (let attempt = 0; attempt < 8; attempt++) {
      const d = backoffDelayMs(attempt, 50, 400);
      assert.ok(d >= 0 && d <= Math.min(400, 50 * 2 ** attempt), `attempt ${attempt}: ${d}`);
    }
  });
});

describe('retries', () => {
  test('503 is retried with backoff, with the same Idempotency-Key, then succeeds', async () => {
    await withFake(sequence(unavailable, unavailable, { status: 200, body: success([PHONE_RESULT]) }), async (fake) => {
      const client = new Client({
        apiKey: KEY,
        baseUrl: fake.url,
        maxRetries: 2,
        retryBaseDelayMs: 40,
        retryMaxDelayMs: 40,
      });
      const clock = fakeClock(client);
      const result = await client.verifyPhone('+14155552671');
      assert.equal(result.status, 'success');
      assert.equal(fake.requests.length, 3);
      const keys = fake.requests.map((r) => r.headers['idempotency-key']);
      assert.match(String(keys[0]), UUID_V4, 'a generated UUID v4');
      assert.deepEqual(keys, [keys[0], keys[0], keys[0]], 'the same key on every retry');
      assert.equal(result.idempotencyKey, keys[0]);
      // The bodies are identical on every attempt.
      assert.deepEqual(new Set(fake.requests.map((r) => r.rawBody)).size, 1);
      assert.equal(clock.sleeps.length, 2, 'a backoff before each retry');
      for (const ms of clock.sleeps) assert.ok(ms >= 0 && ms <= 40, `a backoff of ${ms} ms, within retryMaxDelayMs`);
    });
  });

  test('503 after maxRetries retries throws UnavailableError (maxRetries + 1 attempts)', async () => {
    await withFake(sequence({ ...unavailable, headers: { 'Retry-After': '0' } }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, maxRetries: 3, ...FAST });
      await assert.rejects(client.account(), (err: unknown) => {
        assert.ok(err instanceof UnavailableError);
        assert.equal(err.status, 503);
        assert.equal(err.code, 'unavailable');
        assert.equal(err.retry_after, 0);
        return true;
      });
      assert.equal(fake.requests.length, 4);
    });
  });

  test('maxRetries defaults to 2 and can be overridden per call', async () => {
    await withFake(sequence(unavailable), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      await assert.rejects(client.listKeys(), UnavailableError);
      assert.equal(fake.requests.length, 3);
      await assert.rejects(client.listKeys({ maxRetries: 0 }), UnavailableError);
      assert.equal(fake.requests.length, 4);
    });
  });

  test('429 honours Retry-After (seconds) instead of the backoff', async () => {
    const limited = {
      status: 429,
      body: errorBody('rate_limited', 'too many requests'),
      headers: { 'Retry-After': '1' },
    };
    await withFake(sequence(limited, { status: 200, body: success() }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      const clock = fakeClock(client);
      const result = await client.searchPerson({ name: 'John Smith' });
      assert.equal(result.status, 'success');
      assert.equal(fake.requests.length, 2);
      assert.deepEqual(clock.sleeps, [1_000], 'waited Retry-After: 1, not the backoff');
      assert.equal(fake.requests[0]!.headers['idempotency-key'], fake.requests[1]!.headers['idempotency-key']);
    });
  });

  test('429 after the retries throws RateLimitError with retry_after', async () => {
    const limited = {
      status: 429,
      body: errorBody('rate_limited', 'too many requests'),
      headers: { 'Retry-After': '0.01' },
    };
    await withFake(sequence(limited), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, maxRetries: 1, ...FAST });
      await assert.rejects(client.account(), (err: unknown) => {
        assert.ok(err instanceof RateLimitError);
        assert.equal(err.retry_after, 0.01);
        assert.equal(err.retryAfter, 0.01);
        return true;
      });
      assert.equal(fake.requests.length, 2);
    });
  });

  test('a Retry-After longer than maxRetryAfterMs is not slept through: the error is thrown at once', async () => {
    const limited = {
      status: 429,
      body: errorBody('rate_limited', 'too many requests'),
      headers: { 'Retry-After': '120' },
    };
    await withFake(sequence(limited), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      const clock = fakeClock(client);
      await assert.rejects(
        client.account(),
        (err: unknown) => err instanceof RateLimitError && err.retry_after === 120,
      );
      assert.equal(fake.requests.length, 1);
      assert.deepEqual(clock.sleeps, [], 'no wait at all');
    });
  });

  test('a caller-given Idempotency-Key is sent as is, on every retry', async () => {
    await withFake(sequence(unavailable, { status: 200, body: success() }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      const result = await client.verifyEmail('a@example.com', { idempotencyKey: 'order-1234' });
      assert.deepEqual(
        fake.requests.map((r) => r.headers['idempotency-key']),
        ['order-1234', 'order-1234'],
      );
      assert.equal(result.idempotencyKey, 'order-1234');
    });
  });

  test('an Idempotency-Key the gateway would refuse is a TypeError before anything is sent', async () => {
    // 1–255 printable ASCII characters (API.md); a CR/LF must never reach the request's headers.
    await withFake(sequence({ status: 200, body: success() }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      const bad = ['k\r\nX-Injected: 1', 'k\n', '', 'has space', 'x'.repeat(256), 'clé', 'k\u0000'];
      for (const idempotencyKey of bad) {
        await assert.rejects(
          client.verifyEmail('a@example.com', { idempotencyKey }),
          TypeError,
          JSON.stringify(idempotencyKey),
        );
        await assert.rejects(
          client.batch([{ kind: 'email', input: { email: 'a@example.com' } }], { idempotencyKey }),
          TypeError,
        );
      }
      assert.equal(fake.requests.length, 0, 'nothing sent, nothing retried');
      await client.verifyEmail('a@example.com', { idempotencyKey: '~' + 'x'.repeat(254) });
      assert.equal(fake.requests[0]!.headers['idempotency-key'], '~' + 'x'.repeat(254));
    });
  });

  test('every lookup gets a fresh generated key; non-lookups send none', async () => {
    await withFake(sequence({ status: 200, body: success() }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      await client.search({ query: 'Acme', type: 'company' });
      await client.searchPerson({ name: 'John' });
      await client.searchCompany({ company_name: 'Acme' });
      await client.verifyEmail('a@example.com');
      await client.verifyPhone('+14155552671');
      await client.screen('Rustam Karimov');
      const keys = fake.requests.map((r) => r.headers['idempotency-key']);
      for (const key of keys) assert.match(String(key), UUID_V4);
      assert.equal(new Set(keys).size, 6, 'distinct calls, distinct keys');
      await client.getSearch('srch_ok1');
      assert.equal(fake.requests.at(-1)!.headers['idempotency-key'], undefined);
    });
  });

  test('connection refused is retried, then APIConnectionError (with the cause)', async () => {
    const port = await freePort();
    let attempts = 0;
    const counting = (url: string, init?: RequestInit) => {
      attempts++;
      return fetch(url, init);
    };
    const client = new Client({
      apiKey: KEY,
      baseUrl: `http://127.0.0.1:${port}`,
      maxRetries: 2,
      fetch: counting,
      ...FAST,
    });
    await assert.rejects(client.verifyPhone('+14155552671'), (err: unknown) => {
      assert.ok(err instanceof APIConnectionError);
      assert.ok(!(err instanceof APITimeoutError));
      assert.match(err.message, /ECONNREFUSED/);
      assert.ok(err.cause);
      return true;
    });
    assert.equal(attempts, 3);
  });

  test('connection refused, then the server comes up: the retry succeeds with the same key', async () => {
    const port = await freePort();
    let fake: FakeServer | undefined;
    const keys: string[] = [];
    const startsServerAfterFirstFailure = async (url: string, init?: RequestInit) => {
      keys.push(String((init?.headers as Record<string, string>)['Idempotency-Key']));
      try {
        return await fetch(url, init);
      } catch (err) {
        fake ??= await startFake(sequence({ status: 200, body: success([PHONE_RESULT]) }), port);
        throw err;
      }
    };
    try {
      const client = new Client({
        apiKey: KEY,
        baseUrl: `http://127.0.0.1:${port}`,
        fetch: startsServerAfterFirstFailure,
        ...FAST,
      });
      const result = await client.verifyPhone('+14155552671');
      assert.equal(result.results.length, 1);
      assert.equal(keys.length, 2);
      assert.equal(keys[0], keys[1]);
      assert.equal(fake!.requests[0]!.headers['idempotency-key'], keys[0]);
    } finally {
      await fake?.close();
    }
  });

  test('a dropped connection is retried for lookups (idempotent) but not for createKey', async () => {
    await withFake(sequence({ status: 0, destroy: true }, { status: 200, body: success() }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      await client.verifyEmail('a@example.com');
      assert.equal(fake.requests.length, 2);
    });
    await withFake(
      sequence(
        { status: 0, destroy: true },
        { status: 201, body: { status: 'success', api_key: 'dsk_x', key_id: 'key_x' } },
      ),
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        await assert.rejects(client.createKey('ci'), APIConnectionError);
        assert.equal(fake.requests.length, 1, 'a non-idempotent POST that may have arrived is not re-sent');
      },
    );
  });

  test('a TLS certificate error is not retried, for a GET or a lookup, as in the other clients', async () => {
    // A certificate no client trusts (self-signed, made here with the openssl command). Not transient: asking
    // again meets the same certificate, so Python, Ruby and PHP give up at once too.
    const dir = mkdtempSync(join(tmpdir(), 'dossier-js-tls-'));
    const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
    let connections = 0;
    const server = createTlsServer({ key: readFileSync(key), cert: readFileSync(cert) });
    server.on('connection', () => connections++);
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const { port } = server.address() as AddressInfo;
      const client = new Client({ apiKey: KEY, baseUrl: `https://127.0.0.1:${port}`, maxRetries: 2, ...FAST });
      await assert.rejects(client.account(), (err: unknown) => {
        assert.ok(err instanceof APIConnectionError, String(err));
        assert.match(err.message, /SELF_SIGNED/);
        return true;
      });
      assert.equal(connections, 1, 'a GET is not retried');
      await assert.rejects(client.verifyPhone('+14155552671'), APIConnectionError);
      assert.equal(connections, 2, 'nor a lookup POST');
    } finally {
      await new Promise((done) => server.close(done));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a request over timeoutMs throws APITimeoutError after the retries', async () => {
    await withFake(sequence({ status: 200, body: success(), delayMs: 300 }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, timeoutMs: 50, maxRetries: 1, ...FAST });
      // The server answers 200 after 300 ms: only the client's own 50 ms timeout can make this an error.
      await assert.rejects(client.verifyPhone('+14155552671'), APITimeoutError);
      assert.equal(fake.requests.length, 2);
    });
  });

  test('timeoutMs bounds the whole attempt, even when the server trickles its answer', async () => {
    // Every byte of the answer comes within 50 ms, the whole answer takes 5 s: with timeoutMs 500 the
    // attempt gives up (as in the Python, Ruby and PHP clients) instead of reading on.
    const payload = JSON.stringify({ status: 'success', account: { id: 'acc_1' }, credits_remaining: 5 }).padEnd(100);
    const sockets = new Set<Socket>();
    let connections = 0;
    const server = createNetServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('data', () => {
        connections++;
        socket.write(
          `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\nConnection: close\r\n\r\n`,
        );
        let sent = 0;
        const timer = setInterval(() => {
          if (socket.destroyed || sent >= payload.length) {
            clearInterval(timer);
            socket.end();
            return;
          }
          socket.write(payload[sent++]!);
        }, 50);
        socket.on('close', () => clearInterval(timer));
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const { port } = server.address() as AddressInfo;
      const client = new Client({ apiKey: KEY, baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 500, maxRetries: 1, ...FAST });
      await assert.rejects(client.account(), APITimeoutError);
      assert.equal(connections, 2);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => server.close(done));
    }
  });

  test('408 request_timeout is retried when the request is safe to repeat (a lookup, a GET, a DELETE)', async () => {
    // The gateway's 408: the request did not arrive in time, so it was not acted on; sent again as after a 429 or 503.
    const timeout = {
      status: 408,
      body: errorBody('request_timeout', 'the request did not arrive in time; the connection is closed'),
    };
    await withFake(
      (req, index) =>
        index % 2 === 0
          ? timeout
          : req.method === 'POST'
            ? { status: 200, body: success([], 9, 'srch_after_408') }
            : req.method === 'GET'
              ? { status: 200, body: { status: 'success', account: ACCOUNT, credits_remaining: 1 } }
              : { status: 200, body: { status: 'success', key: { id: 'key_1' } } },
      async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        const result = await client.verifyPhone('+14155552671', { idempotencyKey: 'k-408' });
        assert.equal(result.search_id, 'srch_after_408');
        assert.deepEqual(
          fake.requests.map((r) => r.headers['idempotency-key']),
          ['k-408', 'k-408'],
        );
        assert.equal((await client.account()).credits_remaining, 1);
        assert.equal((await client.revokeKey('key_1')).key?.id, 'key_1');
        assert.equal(fake.requests.length, 6);
      },
    );
  });

  test('502 and 504 are retried when the request is safe to repeat (a lookup, a GET, a DELETE), as a 408', async () => {
    // A load balancer's answer while a gateway pod restarts: a page of its own, not the API's envelope.
    for (const status of [502, 504]) {
      const gateway = { status, body: `<html><body>${status} from the load balancer</body></html>` };
      await withFake(
        (req, index) =>
          index % 2 === 0
            ? gateway
            : req.method === 'POST'
              ? { status: 200, body: success([], 9, `srch_after_${status}`) }
              : req.method === 'GET'
                ? { status: 200, body: { status: 'success', account: ACCOUNT, credits_remaining: 1 } }
                : { status: 200, body: { status: 'success', key: { id: 'key_1' } } },
        async (fake) => {
          const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
          const result = await client.verifyPhone('+14155552671', { idempotencyKey: `k-${status}` });
          assert.equal(result.search_id, `srch_after_${status}`);
          assert.deepEqual(
            fake.requests.map((r) => r.headers['idempotency-key']),
            [`k-${status}`, `k-${status}`],
          );
          assert.equal((await client.account()).credits_remaining, 1);
          assert.equal((await client.revokeKey('key_1')).key?.id, 'key_1');
          assert.equal(fake.requests.length, 6);
        },
      );
    }
  });

  test('a DELETE whose retry finds the resource gone (404) succeeds: the lost first answer had done it', async () => {
    const notFound = { status: 404, body: errorBody('not_found', 'no such key') };
    for (const lost of [{ status: 0, destroy: true }, { status: 502, text: '<html>502</html>' }]) {
      await withFake((_req, index) => (index % 2 === 0 ? lost : notFound), async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        const revoked = await client.revokeKey('key_1');
        assert.equal(revoked.status, 'success');
        assert.equal(revoked.key, null);
        assert.equal(revoked.requestId, 'req_fake2');
        const deleted = await client.deleteWebhook('wh_1');
        assert.equal(deleted.status, 'success');
        assert.equal(deleted.webhook, null);
        assert.deepEqual(
          fake.requests.map((r) => `${r.method} ${r.path}`),
          ['DELETE /v1/auth/keys/key_1', 'DELETE /v1/auth/keys/key_1', 'DELETE /v1/webhooks/wh_1', 'DELETE /v1/webhooks/wh_1'],
        );
      });
    }
  });

  test('a 404 on the first attempt of a DELETE is still NotFoundError', async () => {
    await withFake(sequence({ status: 404, body: errorBody('not_found', 'no such key') }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      await assert.rejects(client.revokeKey('key_1'), NotFoundError);
      await assert.rejects(client.deleteWebhook('wh_1'), NotFoundError);
      assert.equal(fake.requests.length, 2);
    });
  });

  test('502 and 504 are not retried for a POST without an Idempotency-Key, and after maxRetries are thrown', async () => {
    for (const status of [502, 504]) {
      const gateway = { status, body: `<html>${status}</html>` };
      await withFake(sequence(gateway, { status: 201, body: { status: 'success', api_key: 'dsk_x', key_id: 'key_x' } }), async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
        await assert.rejects(client.createKey('ci'), (err: unknown) => err instanceof APIError && err.status === status);
        assert.equal(fake.requests.length, 1, 'a POST the gateway may have acted on is not re-sent');
      });
      await withFake(sequence(gateway), async (fake) => {
        const client = new Client({ apiKey: KEY, baseUrl: fake.url, maxRetries: 2, ...FAST });
        await assert.rejects(client.account(), (err: unknown) => err instanceof APIError && err.code === null);
        assert.equal(fake.requests.length, 3);
      });
    }
  });

  test('408 is not retried for a POST without an Idempotency-Key (createKey), and after maxRetries is thrown', async () => {
    const timeout = { status: 408, body: errorBody('request_timeout', 'the request did not arrive in time') };
    await withFake(sequence(timeout, { status: 201, body: { status: 'success', api_key: 'dsk_x', key_id: 'key_x' } }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      await assert.rejects(client.createKey('ci'), (err: unknown) => (err as { status?: number }).status === 408);
      assert.equal(fake.requests.length, 1, 'a POST a proxy may have passed on in part is not re-sent');
    });
    await withFake(sequence(timeout), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, maxRetries: 2, ...FAST });
      await assert.rejects(client.account(), (err: unknown) => (err as { code?: string }).code === 'request_timeout');
      assert.equal(fake.requests.length, 3);
    });
  });

  test('errors other than 429/503 are not retried', async () => {
    await withFake(sequence({ status: 500, body: errorBody('internal_error', 'boom') }), async (fake) => {
      const client = new Client({ apiKey: KEY, baseUrl: fake.url, ...FAST });
      await assert.rejects(client.account(), (err: unknown) => (err as { code?: string }).code === 'internal_error');
      assert.equal(fake.requests.length, 1);
    });
  });

  test('register retries a 503 (nothing was done) and sends no Idempotency-Key', async () => {
    const registered = {
      status: 'success',
      account: { id: 'acct_1', email: 'a@example.com', created_at: 'x' },
      api_key: 'dsk_1',
      credits_remaining: 3,
    };
    await withFake(sequence(unavailable, { status: 201, body: registered }), async (fake) => {
      const reg = await Client.register({
        email: 'a@example.com',
        password: 'password123',
        baseUrl: fake.url,
        ...FAST,
      });
      assert.equal(reg.api_key, 'dsk_1');
      assert.equal(fake.requests.length, 2);
      assert.equal(fake.requests[0]!.headers['idempotency-key'], undefined);
    });
  });

  test('an aborted signal stops the retries and rejects with its reason', async () => {
    await withFake(sequence(unavailable), async (fake) => {
      const client = new Client({
        apiKey: KEY,
        baseUrl: fake.url,
        maxRetries: 5,
        retryBaseDelayMs: 1_000,
        retryMaxDelayMs: 1_000,
      });
      const controller = new AbortController();
      // The caller aborts while the client sleeps before its first retry: the sleep (a real one, a minute
      // long) must end at once with the abort's reason, and nothing more is sent.
      const clock = fakeClock(client, async (_ms, signal) => {
        const slept = SYSTEM_CLOCK.sleep(60_000, signal);
        controller.abort(new Error('stop'));
        const next = new Promise((settle) => setImmediate(() => settle('still sleeping')));
        if ((await Promise.race([slept.catch(() => 'cut short'), next])) !== 'cut short') {
          throw new Error('the abort did not end the sleep');
        }
        await slept;
      });
      await assert.rejects(client.account({ signal: controller.signal }), /stop/);
      assert.deepEqual(clock.signals, [controller.signal], 'the backoff sleep is given the caller\'s signal');
      assert.equal(fake.requests.length, 1);
    });
  });
});
