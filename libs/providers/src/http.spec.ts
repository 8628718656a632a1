import { Blackhole, FakeDns, FakeUpstream } from '@dossier/testing';
import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  REDIRECT_STATUSES,
  reachable,
  request,
  upstreamNetwork,
  useUpstreamNetwork,
} from './http';
import { outcomeOfError } from './provider';

describe('request', () => {
  let api: FakeUpstream;
  let elsewhere: FakeUpstream;
  beforeAll(async () => {
    [api, elsewhere] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
  });
  afterAll(async () => {
    await Promise.all([api.close(), elsewhere.close()]);
  });
  beforeEach(() => {
    api.requests.length = 0;
    elsewhere.requests.length = 0;
  });

  const ask = (path: string) =>
    request('vendor', { url: `${api.url}${path}`, headers: { 'x-api-key': 'the-key' } }, AbortSignal.timeout(5000));

  it('follows a redirect on the configured origin, with its headers', async () => {
    api.reply((req) =>
      req.url === '/v1/thing' ? { status: 301, headers: { location: '/v2/thing?q=1' } } : { body: { ok: true } },
    );
    const res = await ask('/v1/thing');
    expect([res.status, res.text, res.url]).toEqual([200, '{"ok":true}', `${api.url}/v2/thing?q=1`]);
    expect(api.requests.map((r) => [r.url, r.headers['x-api-key']])).toEqual([
      ['/v1/thing', 'the-key'],
      ['/v2/thing?q=1', 'the-key'],
    ]);
  });

  // A redirect off the configured host would carry a key sent in a header of the vendor's own (fetch drops only
  // Authorization across origins) to another host, and take that host's answer for the vendor's.
  it.each([301, 302, 303, 307, 308])(
    'does not follow a %i to another host: malformed, naming no address, and nothing is sent there',
    async (status) => {
      api.reply({ status, headers: { location: `${elsewhere.url}/steal` } });
      elsewhere.reply({ status: 404, body: { status: 404 } });
      const error = await ask('/v5/person/enrich').catch((e: unknown) => e);
      expect(error).toMatchObject({
        name: 'ProviderError',
        code: 'malformed',
        message: `vendor: redirected to another host (${status}), not followed`,
      });
      expect(elsewhere.requests).toEqual([]);
    },
  );

  it.each([300, 304, 305, 306])(
    'keeps a %i as the answer, as fetch does, though it carries a Location',
    async (status) => {
      expect(REDIRECT_STATUSES.has(status)).toBe(false);
      api.reply({ status, headers: { location: '/v2/thing' } });
      const res = await ask('/v1/thing');
      expect([res.status, res.url, res.headers.get('location')]).toEqual([status, `${api.url}/v1/thing`, '/v2/thing']);
      expect(api.requests.map((r) => r.url)).toEqual(['/v1/thing']);
    },
  );

  it.each([301, 302, 303, 307, 308])(
    'keeps a %i without a Location as the answer, as the username checks do',
    async (status) => {
      api.reply({ status, body: 'moved' });
      const res = await request('vendor', { url: `${api.url}/v1/thing` }, AbortSignal.timeout(5000));
      expect([res.status, res.url, res.text]).toEqual([status, `${api.url}/v1/thing`, 'moved']);
    },
  );

  it('calls a redirect with an invalid Location malformed', async () => {
    api.reply({ status: 302, headers: { location: 'http://[::1' } });
    await expect(request('vendor', { url: `${api.url}/v1/thing` }, AbortSignal.timeout(5000))).rejects.toMatchObject({
      code: 'malformed',
      message: 'vendor: a redirect (302) without a valid Location',
    });
  });

  it('reads a Location sent as raw UTF-8 as UTF-8, as fetch does', async () => {
    api.reply((req) =>
      req.url === '/v1/thing'
        ? { status: 301, headers: { location: Buffer.from('/v2/José?q=ü').toString('latin1') } }
        : { body: { ok: true } },
    );
    const res = await ask('/v1/thing');
    expect([res.status, res.url]).toEqual([200, `${api.url}/v2/Jos%C3%A9?q=%C3%BC`]);
  });

  it('stops after five redirects on its origin', async () => {
    api.reply({ status: 302, headers: { location: '/again' } });
    await expect(ask('/start')).rejects.toMatchObject({ code: 'malformed', message: 'vendor: more than 5 redirects' });
    expect(api.requests).toHaveLength(6);
  });

  it('keeps a redirect as the answer when asked to (manual)', async () => {
    api.reply({ status: 302, headers: { location: `${elsewhere.url}/x` } });
    const res = await request('vendor', { url: `${api.url}/a`, redirect: 'manual' }, AbortSignal.timeout(5000));
    expect([res.status, res.headers.get('location')]).toEqual([302, `${elsewhere.url}/x`]);
    expect(elsewhere.requests).toEqual([]);
  });

  // Fetch's HTTP-redirect fetch: a 303 turns any method but GET and HEAD into a GET, a 301 or 302 only a POST;
  // a GET loses the body and its headers. 307 and 308 keep both.
  it.each([
    ['HEAD', 303, 'HEAD'],
    ['HEAD', 301, 'HEAD'],
    ['GET', 303, 'GET'],
    ['POST', 303, 'GET'],
    ['PUT', 303, 'GET'],
    ['POST', 301, 'GET'],
    ['POST', 302, 'GET'],
    ['PUT', 301, 'PUT'],
    ['PUT', 302, 'PUT'],
    ['POST', 307, 'POST'],
    ['POST', 308, 'POST'],
  ] as const)('follows a %s answered %i as a %s', async (method, status, then) => {
    api.reply((req) => (req.url === '/from' ? { status, headers: { location: '/to' } } : { status: 204 }));
    const body = method === 'POST' || method === 'PUT' ? '{"q":1}' : undefined;
    const headers = { 'x-api-key': 'the-key', ...(body ? { 'content-type': 'application/json' } : {}) };
    const res = await request('vendor', { url: `${api.url}/from`, method, headers, body }, AbortSignal.timeout(5000));
    expect(res.status).toBe(204);
    const keeps = then === method && body !== undefined;
    expect(
      api.requests.map((r) => [r.method, r.url, r.body, r.headers['content-type'], r.headers['x-api-key']]),
    ).toEqual([
      [method, '/from', body ?? '', body ? 'application/json' : undefined, 'the-key'],
      [then, '/to', keeps ? body : '', keeps ? 'application/json' : undefined, 'the-key'],
    ]);
  });

  // WHATWG Encoding's decode: a byte-order mark names the encoding whatever the Content-Type or <meta> says, and
  // is not part of the text. A UTF-8 page with a BOM served as ISO-8859-1 (an old Apache default) read garbled.
  it.each([
    ['UTF-8', Buffer.from([0xef, 0xbb, 0xbf]), (text: string) => Buffer.from(text, 'utf8')],
    ['UTF-16LE', Buffer.from([0xff, 0xfe]), (text: string) => Buffer.from(text, 'utf16le')],
    ['UTF-16BE', Buffer.from([0xfe, 0xff]), (text: string) => Buffer.from(text, 'utf16le').swap16()],
  ])(
    'reads a body with a %s byte-order mark in that encoding, whatever charset it declares, without the mark',
    async (_, bom, encode) => {
      const page =
        '<html><head><meta charset="iso-8859-1"></head><body>Пользователь не найден · Profil nicht verfügbar</body></html>';
      for (const type of [
        'text/html; charset=ISO-8859-1',
        'text/html; charset=windows-1251',
        'text/html',
        'application/json',
      ]) {
        api.reply({ status: 200, headers: { 'content-type': type }, body: Buffer.concat([bom, encode(page)]) });
        const res = await ask('/page');
        expect([type, res.text]).toEqual([type, page]);
      }
    },
  );

  it('reads a body whose first bytes are only the start of a byte-order mark in the charset it declares', async () => {
    const page = 'ï» nicht verfügbar'; // EF BB 20 in ISO-8859-1: no UTF-8 BOM
    api.reply({
      status: 200,
      headers: { 'content-type': 'text/html; charset=ISO-8859-1' },
      body: Buffer.from(page, 'latin1'),
    });
    expect((await ask('/page')).text).toBe(page);
  });
});

describe('upstream connections (useUpstreamNetwork)', () => {
  let hole: Blackhole;
  let api: FakeUpstream;
  let sane: FakeDns;
  let lying: FakeDns;
  let port: string;
  beforeAll(async () => {
    [hole, api, lying] = await Promise.all([Blackhole.start(), FakeUpstream.start(), FakeDns.lying()]);
    port = new URL(api.url).port;
    sane = await FakeDns.start({ 'api.vendor.test': { a: ['127.0.0.1'] }, 'broken.vendor.test': 'servfail' });
  });
  afterAll(async () => {
    useUpstreamNetwork({ connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS, dnsServers: null });
    await Promise.all([hole?.close(), api?.close(), sane?.close(), lying?.close()]);
  });
  beforeEach(() => {
    api.reply({ body: { ok: true } });
    api.requests.length = 0;
  });

  const ask = (url: string, signal = AbortSignal.timeout(5000)) => request('vendor', { url }, signal);
  /** What `work` failed with, and how long it took to. */
  const timed = async (work: Promise<unknown>) => {
    const started = Date.now();
    const error = await work.then(
      () => undefined,
      (e: unknown) => e,
    );
    return { error, ms: Date.now() - started };
  };

  it('connects with a 3 s connect timeout unless told otherwise', () => {
    expect(upstreamNetwork()).toEqual({ connectTimeoutMs: 3000, dnsServers: null });
  });

  it('ends a call to an upstream that never accepts at the connect timeout, as a timeout naming the setting', async () => {
    useUpstreamNetwork({ connectTimeoutMs: 300, dnsServers: null });
    const { error, ms } = await timed(ask(`${hole.url}/v1/records`));
    expect(error).toMatchObject({
      name: 'ProviderError',
      code: 'timeout',
      message: 'vendor: no connection to 127.0.0.1 within 300 ms (UPSTREAM_CONNECT_TIMEOUT_MS)',
    });
    // Not the 5 s of the call's own deadline.
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(2000);
  });

  it('leaves the wait for the answer to the call: a slow answer after a quick connection is read', async () => {
    useUpstreamNetwork({ connectTimeoutMs: 300, dnsServers: null });
    api.reply({ body: { ok: true }, delayMs: 800 });
    const res = await ask(`${api.url}/v1/slow`);
    expect([res.status, res.text]).toEqual([200, '{"ok":true}']);
  });

  it('resolves upstream hosts through the resolvers it is given', async () => {
    useUpstreamNetwork({ connectTimeoutMs: 1000, dnsServers: [sane.server] });
    const res = await ask(`http://api.vendor.test:${port}/v1/ok`);
    expect([res.status, res.text]).toEqual([200, '{"ok":true}']);
  });

  it('calls a host that a sane resolver says does not exist unavailable: host not found', async () => {
    useUpstreamNetwork({ connectTimeoutMs: 1000, dnsServers: [sane.server] });
    await expect(ask(`http://typo.vendor.test:${port}/v1/ok`)).rejects.toMatchObject({
      code: 'unavailable',
      message: 'vendor: host not found',
    });
  });

  it('calls a host the resolver could not resolve (SERVFAIL) unresolved: unknown, not error', async () => {
    useUpstreamNetwork({ connectTimeoutMs: 1000, dnsServers: [sane.server] });
    const error = await ask(`http://broken.vendor.test:${port}/v1/ok`).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'unresolved',
      message: 'vendor: the DNS resolver could not resolve broken.vendor.test (EAI_AGAIN)',
    });
    expect(outcomeOfError((error as { code: 'unresolved' }).code)).toBe('unknown');
  });

  it('calls a host that a lying resolver says does not exist unresolved, saying the resolver cannot be trusted', async () => {
    useUpstreamNetwork({ connectTimeoutMs: 1000, dnsServers: [lying.server] });
    await expect(ask(`http://api.vendor.test:${port}/v1/ok`)).rejects.toMatchObject({
      code: 'unresolved',
      message:
        'vendor: the resolver answers NXDOMAIN for api.vendor.test, and it answers NXDOMAIN for com, a top-level domain that always exists: this resolver cannot be trusted',
    });
    expect(api.requests).toEqual([]);
  });

  it('checks reachability with one HEAD, any status: reachable, or why not', async () => {
    useUpstreamNetwork({ connectTimeoutMs: 300, dnsServers: null });
    api.reply({ status: 404, body: '' });
    await expect(reachable('vendor', `${api.url}/api/v1`, AbortSignal.timeout(5000))).resolves.toBe(true);
    expect(api.requests.map((r) => [r.method, r.url])).toEqual([['HEAD', '/api/v1']]);
    await expect(reachable('vendor', hole.url, AbortSignal.timeout(5000))).resolves.toBe(
      'no connection to 127.0.0.1 within 300 ms (UPSTREAM_CONNECT_TIMEOUT_MS)',
    );
  });
});
