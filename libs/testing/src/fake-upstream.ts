import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { freePort } from './processes';

/**
 * One scripted answer: status, headers and body, after an optional delay or once the test opens a gate
 * (`after` settles); `hang` never answers.
 */
export interface FakeAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** A string (as UTF-8) or a Buffer (its bytes: another charset) is sent as is; anything else as JSON. */
  body?: unknown;
  delayMs?: number;
  after?: Promise<unknown>;
  hang?: boolean;
}

/**
 * 404s that are no vendor's answer — what a proxy, a load balancer or a base URL that reaches no vendor API
 * sends: nginx's page, an empty body, AWS API Gateway's JSON. No provider reads one as "not found".
 */
export const FOREIGN_404S: readonly FakeAnswer[] = [
  {
    status: 404,
    headers: { 'content-type': 'text/html' },
    body: '<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>',
  },
  { status: 404, body: '' },
  { status: 404, body: { message: 'Not Found' } },
];

export interface SeenRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * An upstream on 127.0.0.1 that answers what the test scripts, in the vendor's documented format, and
 * records every request. Providers are pointed at `url` through their `<ID>_BASE_URL` setting.
 */
export class FakeUpstream {
  readonly requests: SeenRequest[] = [];
  private handler: (req: SeenRequest) => FakeAnswer = () => ({ status: 404, body: { error: 'no answer scripted' } });
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly record: boolean,
  ) {}

  /** `record: false` keeps no `requests` (a load of many thousands a second would pile them up). */
  static async start({ record = true }: { record?: boolean } = {}): Promise<FakeUpstream> {
    const handlers: { handle?: FakeUpstream['handle'] } = {};
    const server = createServer((req, res) => void handlers.handle?.(req, res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('fake upstream has no port');
    const fake = new FakeUpstream(server, `http://127.0.0.1:${address.port}`, record);
    handlers.handle = (req, res) => fake.handle(req, res);
    return fake;
  }

  /** Every request gets this answer (or what `answer` returns for it). */
  reply(answer: FakeAnswer | ((req: SeenRequest) => FakeAnswer)): void {
    this.handler = typeof answer === 'function' ? answer : () => answer;
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const seen = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body: Buffer.concat(chunks).toString(),
    };
    if (this.record) this.requests.push(seen);
    const answer = this.handler(seen);
    if (answer.hang) {
      this.hanging.add(res);
      res.on('close', () => this.hanging.delete(res));
      return;
    }
    if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
    if (answer.after) await answer.after;
    const isText = typeof answer.body === 'string' || Buffer.isBuffer(answer.body);
    const body =
      answer.body === undefined ? '' : isText ? (answer.body as string | Buffer) : JSON.stringify(answer.body);
    res.writeHead(answer.status ?? 200, {
      'content-type': isText ? 'text/html; charset=utf-8' : 'application/json',
      ...answer.headers,
    });
    res.end(body);
  }
}

/** A loopback URL where nothing listens: connections are refused. */
export async function refusedUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}
