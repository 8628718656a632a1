import http from 'node:http';
import { getDefaultAutoSelectFamily, setDefaultAutoSelectFamily, type AddressInfo } from 'node:net';
import { postPinned } from './webhook-post';

/** The receivers' address: each listens on 127.0.0.1 alone. */
const LOOPBACK = [{ address: '127.0.0.1', family: 4 as const }];

describe('postPinned', () => {
  let server: http.Server;
  let port: number;
  const seen: { host: string | undefined; body: string }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ host: req.headers.host, body });
        if (req.url === '/moved') res.writeHead(308, { Location: `/in` }).end();
        else res.writeHead(req.url === '/fail' ? 503 : 204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('connects to the checked address, never resolving the name again, and sends the name as Host', async () => {
    // `.invalid` never resolves (RFC 6761): the request can only have gone to the pinned address
    const url = new URL(`http://hooks.invalid:${port}/in`);
    const result = await postPinned({ url, addresses: LOOPBACK }, '{"id":"evt_1"}', {}, 5000);
    expect(result).toEqual({ statusCode: 204, error: null });
    expect(seen.at(-1)).toEqual({ host: `hooks.invalid:${port}`, body: '{"id":"evt_1"}' });
  });

  it('tries the checked addresses one after another when one refuses the connection, and no other', async () => {
    const url = new URL(`http://hooks.invalid:${port}/in`);
    // Nothing listens on the receiver's port at 127.0.0.2 or ::1: both refuse (or, without IPv6, cannot connect).
    const dead = [
      { address: '127.0.0.2', family: 4 as const },
      { address: '::1', family: 6 as const },
    ];
    // Also where the runtime's default is not to (--no-network-family-autoselection): the request asks for it.
    const runtimeDefault = getDefaultAutoSelectFamily();
    setDefaultAutoSelectFamily(false);
    try {
      expect(await postPinned({ url, addresses: [...dead, ...LOOPBACK] }, '{"id":"evt_2"}', {}, 5000)).toEqual({
        statusCode: 204,
        error: null,
      });
    } finally {
      setDefaultAutoSelectFamily(runtimeDefault);
    }
    expect(seen.at(-1)).toEqual({ host: `hooks.invalid:${port}`, body: '{"id":"evt_2"}' });
    const before = seen.length;
    expect(await postPinned({ url, addresses: dead }, '{}', {}, 5000)).toMatchObject({ statusCode: null });
    expect(seen.length).toBe(before);
  });

  it('lets go of the connection once the status is in, even when the receiver never ends its body', async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    // Answers 200 at once, then keeps the body open for ever: only the sender can end the connection.
    const endless = http.createServer((_req, res) => {
      res.on('close', closed);
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('still going');
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      const url = new URL(`http://hooks.invalid:${(endless.address() as AddressInfo).port}/in`);
      // A deadline that never comes: only the sender's own choice can close the connection.
      const never = new AbortController().signal;
      const result = await postPinned({ url, addresses: LOOPBACK }, '{}', {}, 500, never);
      expect(result).toEqual({ statusCode: 200, error: null });
      await connectionClosed;
    } finally {
      endless.closeAllConnections();
      await new Promise<void>((resolve) => endless.close(() => resolve()));
    }
  });

  it('reads none of a huge answer: the status decides, and the connection ends while the receiver still streams', async () => {
    let closed!: (sent: number) => void;
    const connectionClosed = new Promise<number>((resolve) => (closed = resolve));
    // Answers 200, then streams as fast as it is read, for ever: reading it would hold the worker's CPU.
    const flood = http.createServer((_req, res) => {
      const chunk = Buffer.alloc(16 * 1024, 97);
      let sent = 0;
      res.on('close', () => closed(sent));
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    await new Promise<void>((resolve) => flood.listen(0, '127.0.0.1', resolve));
    try {
      const url = new URL(`http://hooks.invalid:${(flood.address() as AddressInfo).port}/in`);
      const never = new AbortController().signal;
      const result = await postPinned({ url, addresses: LOOPBACK }, '{}', {}, 500, never);
      expect(result).toEqual({ statusCode: 200, error: null });
      // Read to its end, the stream would never close; what was written is what the socket buffers held.
      expect(await connectionClosed).toBeLessThan(64 * 1024 * 1024);
    } finally {
      flood.closeAllConnections();
      await new Promise<void>((resolve) => flood.close(() => resolve()));
    }
  });

  it("ends at the deadline it is given (the attempt's, which began before the lookup), and sends nothing past it", async () => {
    const before = seen.length;
    const url = new URL(`http://hooks.invalid:${port}/in`);
    const target = { url, addresses: LOOPBACK };
    // The attempt's time went on resolving the host: nothing is left to send in.
    expect(await postPinned(target, '{}', {}, 500, AbortSignal.abort())).toEqual({
      statusCode: null,
      error: 'no answer within 500 ms',
    });
    expect(seen.length).toBe(before);

    // A receiver that never answers is given up on when the shared deadline ends, not timeoutMs after the POST.
    let arrived!: () => void;
    const requested = new Promise<void>((resolve) => (arrived = resolve));
    const silent = http.createServer(() => arrived());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const hung = new URL(`http://hooks.invalid:${(silent.address() as AddressInfo).port}/in`);
      const deadline = new AbortController();
      const posting = postPinned({ url: hung, addresses: LOOPBACK }, '{}', {}, 60_000, deadline.signal);
      await requested;
      deadline.abort();
      expect(await posting).toEqual({ statusCode: null, error: 'no answer within 60000 ms' });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('reports a non-2xx answer (a redirect among them, not followed) and a refused connection as errors', async () => {
    const url = new URL(`http://hooks.invalid:${port}/fail`);
    expect(await postPinned({ url, addresses: LOOPBACK }, '{}', {}, 5000)).toEqual({
      statusCode: 503,
      error: 'answered 503',
    });
    // A redirect is an answer like any other that is not 2xx: the recorded error says why it was not followed.
    const before = seen.length;
    const moved = new URL(`http://hooks.invalid:${port}/moved`);
    expect(await postPinned({ url: moved, addresses: LOOPBACK }, '{}', {}, 5000)).toEqual({
      statusCode: 308,
      error: 'answered 308 (redirects are not followed)',
    });
    expect(seen.slice(before).map((r) => r.body)).toEqual(['{}']);
    const closed = new URL('http://hooks.invalid:1/x');
    expect(await postPinned({ url: closed, addresses: LOOPBACK }, '{}', {}, 5000)).toEqual({
      statusCode: null,
      error: 'ECONNREFUSED',
    });
  });

  it('says, when every checked address fails, that all were tried and how each failed, naming at most four', async () => {
    // Nothing listens on port 1 of the loopback addresses: each refuses, one after another.
    const closed = new URL('http://hooks.invalid:1/x');
    const at = (n: number) => ({ address: `127.0.0.${n}`, family: 4 as const });
    expect(await postPinned({ url: closed, addresses: [at(2), at(3), at(1)] }, '{}', {}, 5000)).toEqual({
      statusCode: null,
      error:
        'ECONNREFUSED (all 3 addresses failed: 127.0.0.2 ECONNREFUSED, 127.0.0.3 ECONNREFUSED, 127.0.0.1 ECONNREFUSED)',
    });
    const many = [2, 3, 4, 5, 6, 7, 8, 9].map(at);
    expect(await postPinned({ url: closed, addresses: many }, '{}', {}, 5000)).toEqual({
      statusCode: null,
      error:
        'ECONNREFUSED (all 8 addresses failed: 127.0.0.2 ECONNREFUSED, 127.0.0.3 ECONNREFUSED, ' +
        '127.0.0.4 ECONNREFUSED, 127.0.0.5 ECONNREFUSED and 4 more)',
    });
  });
});
