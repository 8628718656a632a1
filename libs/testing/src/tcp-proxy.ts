import { createServer, connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';

/** Called once per proxied connection; the function it returns sees every chunk the client sends, in order. */
export type ClientTap = () => (chunk: Buffer) => void;

/**
 * A loopback TCP proxy in front of Redis or Postgres that a test can cut and restore, to make a
 * backing service "unreachable" without touching the real one other tests use; with a `tap`, also to
 * see what a process sends (the bench's --count-wire).
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private server?: Server;
  private up = true;
  /** Connections accepted while held, each waiting to be joined to the target. */
  private held: (() => void)[] | null = null;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
    private readonly tap?: ClientTap,
  ) {}

  static forUrl(url: string, tap?: ClientTap): TcpProxy {
    const u = new URL(url);
    return new TcpProxy(u.hostname, Number(u.port || (u.protocol.startsWith('redis') ? 6379 : 5432)), tap);
  }

  async start(): Promise<this> {
    this.server = createServer((client) => {
      if (!this.up) {
        client.destroy();
        return;
      }
      if (this.held) {
        this.sockets.add(client);
        this.held.push(() => this.join(client));
        return;
      }
      this.join(client);
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    const address = this.server.address();
    if (typeof address !== 'object' || address === null) throw new Error('proxy has no port');
    this.port = address.port;
    return this;
  }

  private join(client: Socket): void {
    const upstream = connect(this.targetPort, this.targetHost);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    this.sockets.add(client).add(upstream);
    if (this.tap) client.on('data', this.tap());
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.pipe(upstream).pipe(client);
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  }

  /** URL that reaches the target through the proxy. */
  url(original: string): string {
    const u = new URL(original);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** Cut every connection and refuse new ones. */
  cut(): void {
    this.up = false;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.up = true;
  }

  /** Accept new connections but pass nothing on (a service slow to answer) until `release()`. */
  hold(): this {
    this.held ??= [];
    return this;
  }

  /** How many connections wait in a hold. */
  get waiting(): number {
    return this.held?.length ?? 0;
  }

  /** Join the connections held so far to the target, and pass new ones on at once again. */
  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const join of held) join();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((res) => (this.server ? this.server.close(() => res()) : res()));
  }
}
