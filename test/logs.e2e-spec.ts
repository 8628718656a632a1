import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Api, REPO_ROOT, Stack, TcpProxy, testEnv, waitFor, type AppProcess } from '@dossier/testing';

const run = promisify(execFile);
/** The compiled logger factory both apps start with, logging one line the way a component does. */
const logOneLine = (format: string) =>
  `require(${JSON.stringify(join(REPO_ROOT, 'dist/libs/runtime/src/logger.js'))}).createRootLogger('gateway', 'info', { format: '${format}' }).info({ context: 'probe' }, 'hello from the probe')`;

/** One parsed log line (pino JSON). */
type Line = Record<string, unknown> & { level: string; msg: string; service: string };

const PASSWORD = 'obs: ultramarine-Pelican 7731';
/** Distinctive lookup inputs, in every form a log could carry them (as sent and as normalised). */
const INPUTS = {
  name: 'Zebediah Quillfeather',
  email: 'zeb.quillfeather@obs-logs.example',
  phone: '+44 20 7946 0321',
  phoneE164: '+442079460321',
  company: 'Quillfeather Holdings',
  username: 'quillfeather_zeb',
};

function linesOf(app: AppProcess): Line[] {
  return app.logs
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as Line;
      } catch {
        throw new Error(`${app.name} wrote a line that is not JSON: ${l}`);
      }
    });
}

describe('structured logs (gateway + worker processes writing JSON lines)', () => {
  let stack: Stack;
  let api: Api;
  /** Every answer of the flow, with the request id it carried. */
  const answers: { method: string; route: string; status: number; requestId: string; searchId?: string }[] = [];
  const secrets: string[] = [];
  let accountId: string;
  /** A loopback receiver for the webhook the flow registers: the worker signs each delivery with its secret. */
  let receiver: Server;
  let deliveries = 0;

  async function call(
    method: 'GET' | 'POST',
    path: string,
    route: string,
    options: { key?: string; json?: unknown; headers?: Record<string, string> } = {},
  ) {
    const res = await api.request<Record<string, unknown>>(method, path, options);
    const searchId = typeof res.body?.['search_id'] === 'string' ? res.body['search_id'] : undefined;
    answers.push({ method, route, status: res.status, requestId: res.headers.get('x-request-id')!, searchId });
    return res;
  }

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        deliveries += 1;
        res.writeHead(204).end();
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const receiverPort = (receiver.address() as { port: number }).port;
    stack = await Stack.start({
      label: 'logs',
      env: { LOG_LEVEL: 'info', SIGNUP_CREDITS: '100', WEBHOOK_ALLOW_PRIVATE: 'true' },
      gatewayEnv: { LOG_LEVEL: 'info' },
    });
    api = new Api(stack.baseUrl);
    const email = `obs${Date.now().toString(36)}@example.com`;
    const registered = await call('POST', '/v1/auth/register', '/v1/auth/register', {
      json: { email, password: PASSWORD },
    });
    expect(registered.status).toBe(201);
    const key = registered.body['api_key'] as string;
    accountId = (registered.body['account'] as { id: string }).id;
    const created = await call('POST', '/v1/auth/keys', '/v1/auth/keys', { key, json: { name: 'second' } });
    expect(created.status).toBe(201);
    const login = await call('POST', '/v1/auth/login', '/v1/auth/login', { json: { email, password: PASSWORD } });
    expect(login.status).toBe(200);
    const wrong = await call('POST', '/v1/auth/login', '/v1/auth/login', {
      json: { email, password: `${PASSWORD}!` },
    });
    expect(wrong.status).toBe(401);
    secrets.push(key, created.body['api_key'] as string, login.body['api_key'] as string);
    expect((await call('GET', '/v1/auth/keys', '/v1/auth/keys', { key })).status).toBe(200);
    const webhook = await call('POST', '/v1/webhooks', '/v1/webhooks', {
      key,
      json: { url: `http://127.0.0.1:${receiverPort}/hook` },
    });
    expect(webhook.status).toBe(201);
    secrets.push(webhook.body['secret'] as string);

    const lookups: [string, unknown][] = [
      ['/v1/search/person', { name: INPUTS.name, email: INPUTS.email, username: INPUTS.username }],
      ['/v1/search/company', { company_name: INPUTS.company, country: 'GB' }],
      ['/v1/verify/email', { email: INPUTS.email }],
      ['/v1/verify/phone', { phone: INPUTS.phone }],
      ['/v1/search', { query: INPUTS.name, type: 'person' }],
    ];
    for (const [path, json] of lookups) {
      const res = await call('POST', path, path, { key: secrets[1], json });
      expect({ path, status: res.status }).toEqual({ path, status: res.status === 202 ? 202 : 200 });
    }
    const pending = await call('POST', '/v1/verify/phone', '/v1/verify/phone', {
      key: secrets[2],
      json: { phone: INPUTS.phone },
      headers: { prefer: 'respond-async' },
    });
    expect(pending.status).toBe(202);
    const searchId = pending.body['search_id'] as string;
    await waitFor(
      () => call('GET', `/v1/searches/${searchId}`, '/v1/searches/:id', { key: secrets[2] }).then((r) => r.status),
      (status) => status === 200,
      { timeoutMs: 20_000, stallMs: 10_000, what: 'the async search' },
    );
    // A request's line is written as its answer finishes, and reaches the pipe a moment after the client
    // has it; the worker writes a job's line as it settles it. Wait until every line is out.
    const requestIds = new Set(answers.map((a) => a.requestId));
    await waitFor(
      () => Promise.resolve(linesOf(stack.gateway).filter((l) => requestIds.has(l['request_id'] as string)).length),
      (n) => n >= requestIds.size,
      { timeoutMs: 20_000, stallMs: 10_000, what: 'a line per request' },
    );
    // Deliveries signed with the webhook's secret: the worker has decrypted and used it.
    await waitFor(
      () => Promise.resolve(deliveries),
      (n) => n > 0,
      { timeoutMs: 20_000, stallMs: 10_000, what: 'a webhook delivery' },
    );
    const searchIds = new Set(answers.flatMap((a) => (a.searchId ? [a.searchId] : [])));
    await waitFor(
      () => Promise.resolve(linesOf(stack.workers[0]!).filter((l) => l.msg === 'job').length),
      (n) => n >= searchIds.size,
      { timeoutMs: 20_000, stallMs: 10_000, what: 'a job line per search' },
    );
  });
  afterAll(async () => {
    await stack?.stop();
    receiver?.close();
  });

  it('writes a 5xx answer at error: its request line and the failure, under the same request id', async () => {
    // A second gateway whose Postgres goes through a proxy the test cuts: the key lookup fails, 503.
    const pg = await TcpProxy.forUrl(testEnv.databaseUrl).start();
    try {
      const { app, baseUrl } = await stack.startGateway({
        DATABASE_URL: pg.url(testEnv.databaseUrl),
        LOG_LEVEL: 'info',
      });
      pg.cut();
      // A POST: its body is parsed before the guard runs, and the request's logging context survives that.
      const res = await new Api(baseUrl).post('/v1/verify/phone', { phone: INPUTS.phone }, { key: secrets[0] });
      expect(res.status).toBe(503);
      const requestId = res.headers.get('x-request-id')!;
      const mine = await waitFor(
        () => Promise.resolve(linesOf(app).filter((l) => l['request_id'] === requestId)),
        (lines) => lines.some((l) => l.msg === 'request'),
        { timeoutMs: 10_000, what: 'the 503 request line' },
      );
      expect(mine.filter((l) => l.msg === 'request')).toEqual([
        expect.objectContaining({ level: 'error', method: 'POST', route: '/v1/verify/phone', status: 503 }),
      ]);
      // The error filter's line names the failure, with the same request id.
      expect(mine.some((l) => l.msg !== 'request' && l.level === 'error' && l['context'] === 'http')).toBe(true);
    } finally {
      pg.restore();
      await pg.close();
    }
  });

  it('never writes the password, an API key, a webhook secret or a lookup input, in any process, at any level', () => {
    const everything = stack.logs;
    expect(everything.length).toBeGreaterThan(0);
    for (const secret of [PASSWORD, ...secrets, ...Object.values(INPUTS)]) {
      expect(everything).not.toContain(secret);
    }
    // The secret part alone, in case something logged it without its dsk_ or whsec_ prefix.
    for (const secret of secrets) expect(everything).not.toContain(secret.slice(secret.indexOf('_') + 1));
  });

  it('writes JSON lines only, each with a level, a time, the service and a message', () => {
    for (const [app, service] of [
      [stack.gateway, 'gateway'],
      [stack.workers[0]!, 'worker'],
    ] as const) {
      const lines = linesOf(app);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        expect(line).toMatchObject({ service, level: expect.any(String), msg: expect.any(String) });
        expect(Date.parse(line['time'] as string)).not.toBeNaN();
      }
    }
  });

  it('writes exactly one line per request: method, route pattern, status, duration, request id, account, search', () => {
    const lines = linesOf(stack.gateway).filter((l) => l.msg === 'request');
    for (const answer of answers) {
      const mine = lines.filter((l) => l['request_id'] === answer.requestId);
      expect(mine).toHaveLength(1);
      const line = mine[0]!;
      expect(line).toMatchObject({
        level: answer.status >= 500 ? 'error' : 'info',
        method: answer.method,
        route: answer.route,
        status: answer.status,
        duration_ms: expect.any(Number),
      });
      const authenticated = !['/v1/auth/register', '/v1/auth/login'].includes(answer.route);
      expect(line['account_id']).toBe(authenticated ? accountId : undefined);
      expect(line['search_id']).toBe(answer.searchId);
    }
    // The raw URL of a search read never stands in for its route pattern.
    expect(lines.some((l) => String(l['route']).includes('srch_'))).toBe(false);
  });

  it('writes one line per job: queue, job id, search id, the request id that queued it, each provider with outcome and duration, the outcome', () => {
    const jobs = linesOf(stack.workers[0]!).filter((l) => l.msg === 'job');
    const searchIds = [...new Set(answers.flatMap((a) => (a.searchId ? [a.searchId] : [])))];
    expect(searchIds.length).toBeGreaterThanOrEqual(6);
    for (const searchId of searchIds) {
      const mine = jobs.filter((l) => l['search_id'] === searchId);
      expect(mine).toHaveLength(1);
      const line = mine[0]!;
      // The request that made the search (its first answer naming it; a later read names it too).
      const made = answers.find((a) => a.searchId === searchId && a.method === 'POST')!;
      expect(line).toMatchObject({
        level: 'info',
        queue: expect.stringMatching(/^(person|company|email|phone)-lookup$/),
        job_id: searchId,
        request_id: made.requestId,
        outcome: expect.stringMatching(/^(charged|free)$/),
        duration_ms: expect.any(Number),
      });
      const providers = line['providers'] as { provider: string; outcome: string; took_ms: number }[];
      expect(providers.length).toBeGreaterThan(0);
      for (const p of providers) {
        expect(p).toEqual({ provider: expect.any(String), outcome: expect.any(String), took_ms: expect.any(Number) });
      }
    }
    const phone = jobs.find((l) => l['queue'] === 'phone-lookup')!;
    expect(phone['providers']).toContainEqual({
      provider: 'libphonenumber',
      outcome: 'found',
      took_ms: expect.any(Number),
    });
    expect(phone['outcome']).toBe('charged');
  });
});

describe('log format by where stdout goes', () => {
  it('writes a JSON line to a pipe', async () => {
    const { stdout } = await run(process.execPath, ['-e', logOneLine('auto')]);
    expect(JSON.parse(stdout)).toMatchObject({
      level: 'info',
      service: 'gateway',
      context: 'probe',
      msg: 'hello from the probe',
    });
  });

  it('writes a coloured, readable line to a terminal (a pseudo-terminal from script(1))', async () => {
    const command = `${JSON.stringify(process.execPath)} -e ${JSON.stringify(logOneLine('auto'))}`;
    const { stdout } = await run('script', ['-qfec', command, '/dev/null']);
    expect(stdout).toContain('hello from the probe');
    expect(stdout).toContain('\u001b['); // ANSI colour
    expect(stdout).toMatch(/INFO/);
    expect(stdout.trim().startsWith('{')).toBe(false);
  });

  it('writes readable lines to a pipe when LOG_FORMAT=pretty asks for them (npm start on a terminal)', async () => {
    const { stdout } = await run(process.execPath, ['-e', logOneLine('pretty')]);
    expect(stdout).toContain('hello from the probe');
    expect(stdout.trim().startsWith('{')).toBe(false);
  });
});
