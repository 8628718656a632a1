import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { probe, untilAborted } from '@dossier/domain';
import type { WorkerConfig } from '@dossier/config';
import { InternalHttpServer, pathOf } from '@dossier/runtime';
import { DATA_SOURCE, METRICS, WORKER_CONFIG } from '../infra/tokens';
import { WorkerHostService } from '../processors/worker-host.service';

const CHECK_TIMEOUT_MS = 1000;

/**
 * `GET /health/live`, `GET /health/ready` and `GET /metrics` (Prometheus) on WORKER_HEALTH_PORT (off
 * when unset), for probes, supervisors and scrapers: ready means every queue's worker is running and
 * connected, jobs waiting in its queues get finished (ADR 0016), and Postgres answers.
 * Plain `node:http`: a worker serves nothing else over HTTP.
 */
@Injectable()
export class WorkerHealthService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('health');
  private server?: InternalHttpServer;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(METRICS) private readonly metrics: Registry,
    private readonly host: WorkerHostService,
  ) {}

  /**
   * Serves from before the queues' workers start (they start once Redis answers): while it waits, a
   * worker is live and not ready.
   */
  async onModuleInit(): Promise<void> {
    if (this.config.healthPort === null) return;
    this.server = await InternalHttpServer.listen(this.config.healthPort, this.config.healthHost, (req, res) => {
      const path = pathOf(req.url);
      const answer = (status: number, body: object) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, { status: 'error' });
      if (path === '/health/live') return answer(200, { status: 'ok' });
      if (path === '/metrics') {
        void this.metrics.metrics().then(
          (text) => {
            res.writeHead(200, { 'content-type': this.metrics.contentType, 'cache-control': 'no-store' });
            res.end(text);
          },
          // A metric whose collection fails answers this scrape 500, not never (and no unhandled rejection).
          (err: unknown) => {
            this.logger.error(`metrics collection failed: ${String(err)}`);
            answer(500, { status: 'error' });
          },
        );
        return;
      }
      if (path !== '/health/ready') return answer(404, { status: 'error' });
      void this.checks().then((checks) => {
        const ok = Object.values(checks).every((c) => c === 'ok');
        answer(ok ? 200 : 503, { status: ok ? 'ok' : 'unavailable', checks });
      });
    });
    this.logger.log(`health on http://${this.config.healthHost}:${this.server.port}/health/ready`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.close();
  }

  /**
   * `queues`: every queue's worker runs and is connected; `jobs`: no consumed queue has had a job
   * waiting past WORKER_READY_STALL_MS while this worker finished none (`stalled`, see ConsumerHealth);
   * `postgres`: answers.
   */
  private async checks(): Promise<Record<'queues' | 'jobs' | 'postgres', 'ok' | 'unavailable' | 'stalled'>> {
    const [consumers, postgres] = await Promise.all([
      untilAborted(this.host.health(), AbortSignal.timeout(CHECK_TIMEOUT_MS)).catch(() => null),
      probe(() => this.db.query('SELECT 1'), CHECK_TIMEOUT_MS),
    ]);
    return {
      queues: consumers?.connected ? 'ok' : 'unavailable',
      jobs: consumers === null ? 'unavailable' : consumers.stalled.length > 0 ? 'stalled' : 'ok',
      postgres,
    };
  }
}
