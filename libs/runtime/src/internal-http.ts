import { createServer, type RequestListener, type Server } from 'node:http';
import { once } from 'node:events';

/**
 * A plain `node:http` server on an internal port (metrics, health): such a port serves a handful of
 * fixed paths to probes and scrapers, so it needs no framework.
 */
export class InternalHttpServer {
  private constructor(
    private readonly server: Server,
    /** The port it listens on (the one the OS chose when asked for 0). */
    readonly port: number,
  ) {}

  static async listen(port: number, host: string, handler: RequestListener): Promise<InternalHttpServer> {
    const server = createServer(handler);
    server.listen(port, host);
    await once(server, 'listening');
    const address = server.address();
    return new InternalHttpServer(server, typeof address === 'object' && address !== null ? address.port : port);
  }

  /** Closes it, cutting the keep-alive connections a scraper holds open. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The path of a request, without its query string. */
export function pathOf(url: string | undefined): string {
  return (url ?? '').split('?')[0] ?? '';
}
