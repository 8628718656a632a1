import { connect, type Socket } from 'node:net';
import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib';
import { Api, Stack, ledgerState, settled, sql, waitFor, type LedgerState, withFaults } from '@dossier/testing';

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
        country: 'DE',
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

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** The HTTP/1.1 answers in `received`, in order (each framed by its Content-Length). */
function rawAnswers(received: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = received;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`not an HTTP answer: ${JSON.stringify(rest)}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
    const length = Number(headers['content-length'] ?? 0);
    const text = Buffer.from(rest.slice(end + 4), 'latin1')
      .subarray(0, length)
      .toString('utf8');
    answers.push({
      status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine ?? '')?.[1]),
      headers,
      body: JSON.parse(text),
    });
    rest = rest.slice(end + 4 + length);
  }
  return answers;
}

/** The contract's error envelope with `code`, its request id the same in the body and the X-Request-Id header. */
function expectEnvelope(
  answer: { status: number; requestIdHeader: string | null; body: unknown },
  status: number,
  code: string,
): void {
  expect(answer.requestIdHeader).toMatch(/^[A-Za-z0-9._~:@+=\/-]{1,128}$/);
  expect({ status: answer.status, body: answer.body }).toEqual({
    status,
    body: { status: 'error', error: { code, message: expect.any(String) }, request_id: answer.requestIdHeader },
  });
}

const rawEnvelope = (a: RawAnswer, status: number, code: string) =>
  expectEnvelope({ status: a.status, requestIdHeader: a.headers['x-request-id'] ?? null, body: a.body }, status, code);

/** Sends `bytes` on a fresh connection to the gateway at `port`; the answers until the server closed it. */
async function exchange(port: number, bytes: string | Buffer): Promise<RawAnswer[]> {
  const socket = connect(port, '127.0.0.1');
  const closed = untilClosed(socket, 15_000);
  socket.write(bytes);
  return rawAnswers(await closed);
}

/**
 * One HTTP/1.1 request as exact bytes, which fetch cannot send (a QUERY, two headers of one name, a body
 * that is not UTF-8), asking the server to close the connection after its answer.
 */
function rawRequest(method: string, path: string, headers: [string, string][], body?: string | Buffer): Buffer {
  const bytes = body === undefined ? undefined : typeof body === 'string' ? Buffer.from(body) : body;
  const lines = [
    `${method} ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Connection: close',
    ...headers.map(([name, value]) => `${name}: ${value}`),
    ...(bytes ? [`Content-Length: ${bytes.length}`] : []),
  ];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bytes ?? Buffer.alloc(0)]);
}

describe('errors the router and the HTTP parser raise themselves leave as the envelope, with X-Request-Id', () => {
  let stack: Stack;
  let api: Api;
  let key: string;
  let port: number;

  beforeAll(async () => {
    stack = await Stack.start({
      label: 'fwerrors',
      noWorker: true,
      gatewayEnv: { RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' },
    });
    api = new Api(stack.baseUrl);
    ({ key } = await api.register());
    port = Number(new URL(stack.baseUrl).port);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const answer = async (method: string, path: string, headers: Record<string, string> = {}) => {
    const res = await api.request(method, path, { key, headers });
    return { status: res.status, requestIdHeader: res.headers.get('x-request-id'), body: res.body, res };
  };

  it("a search id that is not valid percent-encoding is 404 not_found (an id that cannot exist), not Fastify's 400", async () => {
    for (const path of [
      '/v1/searches/%zz',
      '/v1/searches/%ff',
      '/v1/batches/%zz',
      '/v1/webhooks/%zz/deliveries',
      '/%zz',
    ]) {
      const res = await answer('GET', path);
      expectEnvelope(res, 404, 'not_found');
      expect([path, res.res.text]).toEqual([path, expect.not.stringContaining('%zz')]);
    }
    // the client's own request id is echoed here too
    const echoed = await answer('GET', '/v1/searches/%zz', { 'x-request-id': 'bad-url-check-1' });
    expect(echoed.requestIdHeader).toBe('bad-url-check-1');
    expectEnvelope(echoed, 404, 'not_found');
    // a known path with the wrong method is 405, as with any id
    const wrongMethod = await answer('DELETE', '/v1/searches/%zz');
    expectEnvelope(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('a path parameter over 100 characters is 404 not_found, not 414, and the message does not echo it', async () => {
    const long = 'x'.repeat(101);
    for (const [method, path] of [
      ['GET', `/v1/searches/srch_${long}`],
      ['GET', `/v1/batches/bat_${long}`],
      ['DELETE', `/v1/auth/keys/key_${long}`],
      ['DELETE', `/v1/webhooks/wh_${long}`],
    ] as const) {
      const res = await answer(method, path);
      expectEnvelope(res, 404, 'not_found');
      expect([path, res.res.text]).toEqual([path, expect.not.stringContaining(long)]);
    }
  });

  it('a trailing slash on a known path is 404 not_found, never a 405 that allows the method it refuses', async () => {
    for (const [method, path] of [
      ['GET', '/v1/account/'],
      ['POST', '/v1/account/'],
      ['GET', '/v1/auth/keys/'],
      ['POST', '/v1/verify/phone/'],
      ['GET', '/health/live/'],
    ] as const) {
      const res = await answer(method, path);
      expectEnvelope(res, 404, 'not_found');
      expect([method, path, res.res.headers.get('allow')]).toEqual([method, path, null]);
    }
    // without the slash the path is known: the wrong method is still 405
    const wrong = await answer('PUT', '/v1/account');
    expectEnvelope(wrong, 405, 'method_not_allowed');
    expect(wrong.res.headers.get('allow')).toBe('GET, HEAD');
  });

  const sendRaw = (bytes: string) => exchange(port, bytes);

  it("a request Node's parser refuses is 400 validation_error in the envelope, then the connection is closed", async () => {
    const cases = {
      'headers over the limit': `GET /v1/account HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      'a control character in a header': 'GET /v1/account HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n',
      'no HTTP at all': 'HELLO\r\n\r\n',
    };
    for (const [label, bytes] of Object.entries(cases)) {
      const answers = await sendRaw(bytes);
      const last = answers.at(-1);
      expect([label, answers.length > 0]).toEqual([label, true]);
      rawEnvelope(last!, 400, 'validation_error');
      expect([label, last!.headers['connection']]).toEqual([label, 'close']);
      expect([label, last!.headers['content-type']]).toEqual([label, 'application/json; charset=utf-8']);
    }
  });

  it('a Content-Length shorter than the body: its request is answered (invalid_json, closing), the rest is not', async () => {
    const answers = await sendRaw(
      'POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n' +
        '{"email":"a@example.com","password":"correct horse battery"}',
    );
    // The 400 for the bytes after it would follow an answer that announced the close: it is not sent.
    expect(answers).toHaveLength(1);
    rawEnvelope(answers[0]!, 400, 'invalid_json');
    expect(answers[0]!.headers['connection']).toBe('close');
  });
});

describe('a body is read as sent or refused, a request no route takes is 404/405, and neither costs anything', () => {
  const JSON_TYPE: [string, string] = ['Content-Type', 'application/json'];
  const PHONE = '{"phone":"+14155552671"}';
  let stack: Stack;
  let api: Api;
  let port: number;
  let account: { email: string; key: string; accountId: string };
  let before: LedgerState;

  beforeAll(async () => {
    stack = await Stack.start({
      label: 'strictbody',
      noWorker: true, // a lookup that got through would stay pending and show in the ledger
      gatewayEnv: { RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' },
    });
    api = new Api(stack.baseUrl);
    port = Number(new URL(stack.baseUrl).port);
    account = await api.register();
    before = await ledgerState(account.accountId);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const auth = (): [string, string] => ['Authorization', `Bearer ${account.key}`];
  /** The one answer to a raw request, as `<status> <code>` (with `Allow` when the server set one). */
  const outcome = async (method: string, path: string, headers: [string, string][], body?: string | Buffer) => {
    const answers = await exchange(port, rawRequest(method, path, headers, body));
    expect(answers).toHaveLength(1);
    const answer = answers[0]!;
    const code = (answer.body as { error?: { code: string } }).error?.code ?? 'success';
    if (answer.status >= 400) rawEnvelope(answer, answer.status, code);
    return `${answer.status} ${code}${answer.headers['allow'] ? ` (Allow: ${answer.headers['allow']})` : ''}`;
  };

  it('answers QUERY, with or without Content-Type, by its path: 405 on a known path, 404 elsewhere, never 500', async () => {
    const cases: [string, [string, string][], string | undefined, string][] = [
      ['/health/live', [], undefined, '405 method_not_allowed (Allow: GET, HEAD)'],
      ['/v1/verify/phone', [auth()], undefined, '405 method_not_allowed (Allow: POST)'],
      ['/v1/searches/srch_x', [auth()], undefined, '405 method_not_allowed (Allow: GET, HEAD)'],
      ['/nowhere', [], undefined, '404 not_found'],
      ['/v1/verify/phone', [auth(), JSON_TYPE], PHONE, '405 method_not_allowed (Allow: POST)'],
      ['/v1/verify/phone', [auth(), JSON_TYPE], '{"phone":', '405 method_not_allowed (Allow: POST)'],
      ['/v1/verify/phone', [auth(), ['Content-Type', 'text/plain']], 'phone', '405 method_not_allowed (Allow: POST)'],
    ];
    for (const [path, headers, body, expected] of cases)
      expect([path, body, await outcome('QUERY', path, headers, body)]).toEqual([path, body, expected]);
    expect(await ledgerState(account.accountId)).toEqual(before);
  });

  it("answers every other refusal Fastify makes of a request's body with its 4xx in the envelope", async () => {
    const login = (headers: [string, string][], body?: string) => outcome('POST', '/v1/auth/login', headers, body);
    const credentials = `{"email":"${account.email}","password":"correct horse battery"}`;
    // FST_ERR_CTP_INVALID_MEDIA_TYPE: a Content-Type that is not a media type, or another one, or none
    expect(await login([['Content-Type', 'garbage']], credentials)).toBe('415 unsupported_media_type');
    expect(await login([['Content-Type', 'text/plain']], credentials)).toBe('415 unsupported_media_type');
    expect(await login([], credentials)).toBe('415 unsupported_media_type');
    // FST_ERR_CTP_BODY_TOO_LARGE: announced over the limit (refused before it is read), or sent over it
    expect(await login([JSON_TYPE, ['Content-Length', '70000']])).toBe('413 payload_too_large');
    expect(await login([JSON_TYPE], `{"pad":"${'x'.repeat(70_000)}"}`)).toBe('413 payload_too_large');
    expect(await login([JSON_TYPE], credentials)).toBe('200 success');
  });

  it('refuses bytes that are not UTF-8 with 400 invalid_json: a Latin-1 password neither registers nor logs in', async () => {
    const latin1 = (text: string) => Buffer.from(text, 'latin1');
    const email = `latin1-${Date.now().toString(36)}@example.com`;
    const register = await outcome(
      'POST',
      '/v1/auth/register',
      [JSON_TYPE],
      latin1(`{"email":"${email}","password":"p\xe4sswort-123"}`),
    );
    expect(register).toBe('400 invalid_json');
    expect(await sql('SELECT id FROM accounts WHERE email = $1', [email])).toEqual([]);

    // What a Latin-1 password used to become: every byte that is not UTF-8 read as U+FFFD.
    const replaced = await api.post('/v1/auth/register', { email, password: 'p\ufffdsswort-123' });
    expect(replaced.status).toBe(201);
    const loginWith = (bytes: Buffer) => outcome('POST', '/v1/auth/login', [JSON_TYPE], bytes);
    expect(await loginWith(latin1(`{"email":"${email}","password":"p\xf6sswort-123"}`))).toBe('400 invalid_json');
    expect(await loginWith(Buffer.from(`{"email":"${email}","password":"p\ufffdsswort-123"}`))).toBe('200 success');

    for (const [path, body] of [
      ['/v1/verify/email', '{"email":"j\xe4ne@example.com"}'],
      ['/v1/search/person', '{"name":"J\xfcrgen M\xfcller","country":"DE"}'],
    ] as const)
      expect([path, await outcome('POST', path, [auth(), JSON_TYPE], latin1(body))]).toEqual([
        path,
        '400 invalid_json',
      ]);
    expect(await ledgerState(account.accountId)).toEqual(before);
  });

  it('refuses a charset other than UTF-8 with 415, and takes utf-8 or UTF8', async () => {
    const key = (contentType: string, body: Buffer) =>
      outcome('POST', '/v1/auth/keys', [auth(), ['Content-Type', contentType]], body);
    const name = '{"name":"Jürgen"}';
    expect(await key('application/json; charset=utf-16', Buffer.from(name, 'utf16le'))).toBe(
      '415 unsupported_media_type',
    );
    expect(await key('application/json; charset=latin1', Buffer.from(name, 'latin1'))).toBe(
      '415 unsupported_media_type',
    );
    expect(await key('application/json; charset=ISO-8859-1', Buffer.from(name, 'latin1'))).toBe(
      '415 unsupported_media_type',
    );
    const lookup = await outcome(
      'POST',
      '/v1/verify/phone',
      [auth(), ['Content-Type', 'application/json; charset=latin1']],
      PHONE,
    );
    expect(lookup).toBe('415 unsupported_media_type');
    expect(await key('application/json; charset=UTF-8', Buffer.from(name))).toBe('201 success');
    expect(await key('application/json;charset="utf8"', Buffer.from(name))).toBe('201 success');
    const keys = await api.get<{ keys: { name: string }[] }>('/v1/auth/keys', { key: account.key });
    expect(keys.body.keys.map((k) => k.name).filter((n) => n === 'Jürgen')).toHaveLength(2);
    expect(await ledgerState(account.accountId)).toEqual(before);
  });

  it('decodes gzip, deflate and br bodies, refuses other codings with 415, and a zip bomb with 413', async () => {
    const lookup = (coding: string, body: Buffer) =>
      outcome('POST', '/v1/verify/phone', [auth(), JSON_TYPE, ['Content-Encoding', coding]], body);
    const phone = Buffer.from(PHONE);
    for (const coding of ['compress', 'zstd', 'gzip, gzip', 'chunked'])
      expect([coding, await lookup(coding, phone)]).toEqual([coding, '415 unsupported_media_type']);
    expect(await lookup('gzip', phone)).toBe('400 invalid_json'); // not gzip data at all
    // br with a window over 4 MiB (its decoder would hold 16 MiB before a byte of output)
    const wide = { params: { [constants.BROTLI_PARAM_LGWIN]: 24 } };
    expect(await lookup('br', brotliCompressSync(phone, wide))).toBe('415 unsupported_media_type');
    // 10 MB of zeros in 10 KB of gzip: refused at 64 KiB decoded, never inflated whole
    const bomb = gzipSync(Buffer.alloc(10_000_000));
    expect(bomb.length).toBeLessThan(64 * 1024);
    expect(await lookup('gzip', bomb)).toBe('413 payload_too_large');
    expect(await lookup('br', brotliCompressSync(Buffer.from(`{"phone":"${' '.repeat(70_000)}"}`)))).toBe(
      '413 payload_too_large',
    );
    expect(await ledgerState(account.accountId)).toEqual(before);

    // Accepted, in each coding: the key's name arrives as sent.
    const name = (coding: string) => `{"name":"${coding} key – ü"}`;
    const encoded: [string, Buffer][] = [
      ['gzip', gzipSync(name('gzip'))],
      ['deflate', deflateSync(name('deflate'))],
      ['br', brotliCompressSync(name('br'))],
    ];
    for (const [coding, body] of encoded)
      expect(await outcome('POST', '/v1/auth/keys', [auth(), JSON_TYPE, ['Content-Encoding', coding]], body)).toBe(
        '201 success',
      );
    const keys = await api.get<{ keys: { name: string }[] }>('/v1/auth/keys', { key: account.key });
    expect(keys.body.keys.map((k) => k.name)).toEqual(
      expect.arrayContaining(['gzip key – ü', 'deflate key – ü', 'br key – ü']),
    );

    // A gzip lookup is taken and charged like any other (another account: this one's ledger stays as it was).
    const other = await api.register();
    const answers = await exchange(
      port,
      rawRequest(
        'POST',
        '/v1/verify/phone',
        [
          ['Authorization', `Bearer ${other.key}`],
          JSON_TYPE,
          ['Content-Encoding', 'gzip'],
          ['Prefer', 'respond-async'],
        ],
        gzipSync(PHONE),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([202]);
    const id = (answers[0]!.body as { search_id: string }).search_id;
    expect(await sql('SELECT input FROM searches WHERE id = $1', [id])).toEqual([
      { input: expect.objectContaining({ phone: '+14155552671' }) },
    ]);
    expect((await ledgerState(other.accountId)).reserves).toBe(1);
  });

  it('refuses two Content-Type headers with 400, whichever comes first', async () => {
    for (const pair of [
      ['application/json', 'text/plain'],
      ['text/plain', 'application/json'],
      ['application/json', 'application/json'],
      ['garbage', 'application/json'],
    ]) {
      const headers: [string, string][] = [auth(), ...pair.map((type): [string, string] => ['Content-Type', type])];
      expect([pair, await outcome('POST', '/v1/verify/phone', headers, PHONE)]).toEqual([pair, '400 validation_error']);
    }
    expect(await ledgerState(account.accountId)).toEqual(before);
    expect(await sql('SELECT id FROM searches WHERE account_id = $1', [account.accountId])).toEqual([]);
  });
});

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
  /** Closed without a word, or answered 408 request_timeout in the envelope. */
  const answeredOrClosed = (received: string) => {
    if (received === '') return;
    const answers = rawAnswers(received);
    expect(answers).toHaveLength(1);
    rawEnvelope(answers[0]!, 408, 'request_timeout');
  };

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

describe('a lookup pipelined ahead of a request Node cannot parse is answered before the 400 that closes the connection', () => {
  const SIGNUP = 10;
  const PHONE_BODY = JSON.stringify({ phone: '+1 650 253 0000' });
  let stack: Stack;
  let port: number;
  let api: Api;

  beforeAll(async () => {
    // Each job held 500 ms before it settles: the malformed request is read while the lookup is under way.
    stack = await Stack.start({
      label: 'pipelined',
      env: { SIGNUP_CREDITS: String(SIGNUP) },
      workerEnv: { LOOKUP_QUEUES: 'phone', ...withFaults({ holdLookups: { at: 'before', ms: 500 } }) },
    });
    port = Number(new URL(stack.baseUrl).port);
    api = new Api(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const lookup = (key: string, headers = '') =>
    `POST /v1/verify/phone HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n${headers}` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(PHONE_BODY)}\r\n\r\n${PHONE_BODY}`;
  const GARBAGE = 'GARBAGE\r\n\r\n';

  /** Writes each chunk in turn, `gapMs` apart, on one connection; the answers until the server closed it. */
  const pipeline = async (chunks: string[], gapMs = 0): Promise<RawAnswer[]> => {
    const socket = connect(port, '127.0.0.1');
    const closed = untilClosed(socket, 20_000);
    for (const [i, chunk] of chunks.entries()) {
      if (i > 0 && gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      socket.write(chunk);
    }
    return rawAnswers(await closed);
  };

  /** A charged phone answer; `remaining`, the balance it reports (one of these, for lookups that run together). */
  const expectPhoneAnswer = (a: RawAnswer | undefined, ...remaining: number[]) => {
    expect(a).toMatchObject({
      status: 200,
      headers: { 'x-credits-spent': '1' },
      body: { status: 'success', results: [{ e164: '+16502530000' }] },
    });
    const body = a!.body as { credits_remaining: number };
    expect(remaining).toContain(body.credits_remaining);
    expect(a!.headers['x-credits-remaining']).toBe(String(body.credits_remaining));
  };
  const expectClosingError = (a: RawAnswer | undefined) => {
    rawEnvelope(a!, 400, 'validation_error');
    expect(a!.headers['connection']).toBe('close');
  };

  it('in the same packet: the lookup answer, then the 400 — charged once', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const answers = await pipeline([lookup(key) + GARBAGE]);
    expect(answers.map((a) => a.status)).toEqual([200, 400]);
    expectPhoneAnswer(answers[0], SIGNUP - 1);
    expectClosingError(answers[1]);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('sent while the lookup waits, and behind two lookups: every answer in order, then the 400', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const late = await pipeline([lookup(key), GARBAGE], 200);
    expect(late.map((a) => a.status)).toEqual([200, 400]);
    expectPhoneAnswer(late[0], SIGNUP - 1);
    expectClosingError(late[1]);

    const two = await pipeline([lookup(key) + lookup(key) + GARBAGE]);
    expect(two.map((a) => a.status)).toEqual([200, 200, 400]);
    // Both reserved before either settles, most likely: the first may report the second's reservation too.
    expectPhoneAnswer(two[0], SIGNUP - 2, SIGNUP - 3);
    expectPhoneAnswer(two[1], SIGNUP - 3);
    expectClosingError(two[2]);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 3, { reserves: 3, captures: 3, releases: 0 }));
  });

  it('an asynchronous lookup is answered 202 before the 400, and its search goes on', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const answers = await pipeline([lookup(key, 'Prefer: respond-async\r\n') + GARBAGE]);
    expect(answers.map((a) => a.status)).toEqual([202, 400]);
    expectClosingError(answers[1]);
    const id = (answers[0]!.body as { search_id: string }).search_id;
    const done = await waitFor(
      () => api.get<{ status: string; credits_remaining: number }>(`/v1/searches/${id}`, { key }),
      (r) => r.status !== 202,
      { timeoutMs: 20_000, what: `search ${id} to finish` },
    );
    expect(done.body).toMatchObject({ status: 'success', credits_remaining: SIGNUP - 1 });
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });
});
