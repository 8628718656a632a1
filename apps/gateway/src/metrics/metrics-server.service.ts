import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { GatewayConfig } from '@dossier/config';
import { InternalHttpServer, pathOf } from '@dossier/runtime';
import { GATEWAY_CONFIG } from '../infra/tokens';
import { MetricsService } from './metrics.service';

/**
 * With METRICS_PORT set, `GET /metrics` is served here, on its own port and interface (METRICS_HOST),
 * and not on the public port (the controller is not mounted): scrapers reach it on the internal
 * network, clients of the API never do. Plain `node:http`: this port serves nothing else.
 */
@Injectable()
export class MetricsServerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('metrics');
  private server?: InternalHttpServer;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly metrics: MetricsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const where = this.config.metrics;
    if (!where) return;
    this.server = await InternalHttpServer.listen(where.port, where.host, (req, res) => {
      if (pathOf(req.url) !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end();
        return;
      }
      this.metrics.scrape().then(
        (text) =>
          res.writeHead(200, { 'content-type': this.metrics.contentType, 'cache-control': 'no-store' }).end(text),
        (err: unknown) => {
          this.logger.error(`scrape failed: ${String(err)}`);
          res.writeHead(500).end();
        },
      );
    });
    this.logger.log(`metrics on http://${where.host}:${this.server.port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.close();
  }
}
