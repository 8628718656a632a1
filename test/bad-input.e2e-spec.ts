import { connect, type Socket } from 'node:net';
import { Api, Stack, ledgerState, sql, type LedgerState } from '@dossier/testing';

type ErrorBody = { status: string; error: { code: string; details?: { field: string; issue: string }[] } };

/** The escapes exactly as a client writes them in the JSON text; JSON.parse turns them into the raw code units. */
const BAD = [
  ['NUL', '\\u0000'],
  ['an unpaired high surrogate', '\\ud800'],
  ['an unpaired low surrogate', '\\udfff'],
] as const;

const PLACEHOLDER = '@@bad@@';

/** The JSON text of `body` with `field`'s value replaced by a string carrying the raw escape. */
function withBadText(body: Record<string, unknown>, field: string, escape: string): string {
  const text = JSON.stringify({ ...body, [field]: PLACEHOLDER });
  return text.replace(`"${PLACEHOLDER}"`, `"a${escape}b"`);
}

describe('text Postgres cannot store is a 400 naming the field, and costs nothing', () => {
  let stack: Stack;
  let api: Api;
  let account: { email: string; key: string; accountId: string };
  let before: LedgerState;

  beforeAll(async () => {
    stack = await Stack.start({
      label: 'badtext',
      noWorker: true, // nothing here may reach the queue: a lookup that did would stay pending and show in the ledger
      gatewayEnv: { RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' },
    });
    api = new Api(stack.baseUrl);
    account = await api.register();
    before = await ledgerState(account.accountId);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** Every body of the API with a valid value in each string field; the bad text replaces one field at a time. */
  const bodies = (): { path: string; auth: boolean; body: Record<string, unknown> }[] => [
    {
      path: '/v1/search',
      auth: true,
      body: { query: 'Jane Doe', type: 'person', country: 'US', permissible_purpose: 'employment' },
    },
    {
      path: '/v1/search/person',
      auth: true,
      body: {
        name: 'Jane Doe',
        email: 'jane@example.com',
        phone: '+14155552671',
        username: 'janedoe',
        location: 'Berlin',
        age_range: '30-40',
        permissible_purpose: 'employment',
      },
    },
    {
      path: '/v1/search/company',
      auth: true,
      body: {
        company_name: 'Acme GmbH',
        domain: 'acme.example',
        registration_number: 'HRB 12345',
        country: 'DE',
        permissible_purpose: 'employment',
      },
    },
    { path: '/v1/verify/email', auth: true, body: { email: 'jane@example.com', permissible_purpose: 'employment' } },
    {
      path: '/v1/verify/phone',
      auth: true,
      body: { phone: '4155552671', country: 'US', permissible_purpose: 'employment' },
    },
    { path: '/v1/auth/keys', auth: true, body: { name: 'ci key' } },
    {
      path: '/v1/auth/register',
      auth: false,
      body: {
        email: 'fresh-badtext@example.com',
        password: 'correct horse battery',
        passwort: 'correct horse battery',
      },
    },
    { path: '/v1/auth/login', auth: false, body: { email: account.email, password: 'correct horse battery' } },
  ];

  it('refuses NUL, \\ud800 and \\udfff in every string field of every body', async () => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const { path, auth, body } of bodies()) {
      for (const field of Object.keys(body)) {
        for (const [label, escape] of BAD) {
          const raw = withBadText(body, field, escape);
          const res = await api.request<ErrorBody>('POST', path, {
            raw,
            contentType: 'application/json',
            key: auth ? account.key : undefined,
          });
          const fields = res.body?.error?.details?.map((d) => d.field);
          outcomes.push(`${path} ${field} ${label}: ${res.status} ${res.body?.error?.code} ${JSON.stringify(fields)}`);
          expected.push(`${path} ${field} ${label}: 400 validation_error ${JSON.stringify([field])}`);
        }
      }
    }
    expect(outcomes).toEqual(expected);

    // Nothing was charged, reserved, created or issued.
    expect(await ledgerState(account.accountId)).toEqual(before);
    expect(await sql('SELECT id FROM searches WHERE account_id = $1', [account.accountId])).toEqual([]);
    const keys = await api.get<{ keys: unknown[] }>('/v1/auth/keys', { key: account.key });
    expect(keys.body.keys).toHaveLength(1);
    expect(await sql(`SELECT id FROM accounts WHERE email LIKE 'fresh-badtext%'`)).toEqual([]);
  });

  it('names nested fields and bad field names, and still takes paired surrogates', async () => {
    const nested = await api.request<ErrorBody>('POST', '/v1/search', {
      raw: '{"query":"Jane","type":"person","extra":{"list":["ok","\\ud800"]}}',
      contentType: 'application/json',
      key: account.key,
    });
    expect(nested.status).toBe(400);
    expect(nested.body.error.details?.map((d) => d.field)).toEqual(['extra.list.1']);

    const badName = await api.request<ErrorBody>('POST', '/v1/search', {
      raw: '{"query":"Jane","type":"person","qu\\u0000ery":"x"}',
      contentType: 'application/json',
      key: account.key,
    });
    expect(badName.status).toBe(400);
    expect(badName.body.error.details).toEqual([{ field: 'qu\u0000ery', issue: expect.stringMatching(/field name/) }]);
    expect(await ledgerState(account.accountId)).toEqual(before);

    const emoji = await api.request<{ key_id: string }>('POST', '/v1/auth/keys', {
      raw: '{"name":"ci \\ud83d\\ude00"}',
      contentType: 'application/json',
      key: account.key,
    });
    expect(emoji.status).toBe(201);
    const [row] = await sql<{ name: string }>('SELECT name FROM api_keys WHERE id = $1', [emoji.body.key_id]);
    expect(row?.name).toBe('ci \u{1F600}');
  });

  it("answers a batch item nested 30,000 levels deep as that item's error, Idempotency-Key or not", async () => {
    const depth = 30_000;
    const raw = `{"requests":[${'['.repeat(depth)}1${']'.repeat(depth)}]}`;
    for (const headers of [{}, { 'idempotency-key': 'deep-batch' }] as Record<string, string>[]) {
      const res = await api.request<{ items: { status: string; error: { code: string } }[] }>('POST', '/v1/batch', {
        raw,
        contentType: 'application/json',
        key: account.key,
        headers,
      });
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([
        expect.objectContaining({ status: 'error', error: expect.objectContaining({ code: 'validation_error' }) }),
      ]);
    }
    expect(await ledgerState(account.accountId)).toEqual(before);
  });
});

/** Everything the server sent until it closed the connection; rejects if it is still open after `boundMs`. */
function untilClosed(socket: Socket, boundMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the connection was still open after ${boundMs} ms; received ${JSON.stringify(received)}`));
    }, boundMs);
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    socket.on('error', () => undefined); // a reset is a close too
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

describe('HTTP receive timeouts', () => {
  const HEADERS_TIMEOUT_MS = 500;
  const REQUEST_TIMEOUT_MS = 1000;
  /** Generous: the server checks deadlines at least every second; the rest is slack for a loaded machine. */
  const BOUND_MS = REQUEST_TIMEOUT_MS + 15_000;
  let stack: Stack;
  let port: number;

  beforeAll(async () => {
    stack = await Stack.start({
      label: 'timeouts',
      noWorker: true,
      gatewayEnv: {
        HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      },
    });
    port = Number(new URL(stack.baseUrl).port);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const open = (): Socket => connect(port, '127.0.0.1');
  const answeredOrClosed = (received: string) =>
    expect(received === '' || /^HTTP\/1\.1 408 /.test(received)).toBe(true);

  it('ends a request whose body never arrives in full (Content-Length: 100, body {})', async () => {
    const socket = open();
    const closed = untilClosed(socket, BOUND_MS);
    socket.write(
      'POST /v1/auth/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{}',
    );
    answeredOrClosed(await closed);
  });

  it('ends a client that trickles its headers and never finishes them', async () => {
    const socket = open();
    const closed = untilClosed(socket, BOUND_MS);
    socket.write('POST /v1/auth/register HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const trickle = setInterval(() => {
      if (socket.writable) socket.write('X-Slow: y\r\n');
    }, 100);
    try {
      answeredOrClosed(await closed);
    } finally {
      clearInterval(trickle);
    }
  });

  it('ends a connection that never sends a byte', async () => {
    answeredOrClosed(await untilClosed(open(), BOUND_MS));
  });

  it('does not cut a lookup that waits longer than the request timeout for its answer', async () => {
    const api = new Api(stack.baseUrl);
    const { key } = await api.register();
    // No worker: the lookup cannot finish, so the gateway waits the full 3 s (three request timeouts) and answers 202.
    const res = await api.post('/v1/verify/phone', { phone: '+14155552671' }, { key, headers: { prefer: 'wait=3' } });
    expect(res.status).toBe(202);
    expect(res.body['status']).toBe('pending');
  });
});
