import { Gauge, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import type { WorkerConfig } from '@dossier/config';
import type { WorkerHostService } from '../processors/worker-host.service';
import { WorkerHealthService } from './worker-health.service';

describe('WorkerHealthService', () => {
  it('answers a scrape whose collection fails with 500, and goes on serving', async () => {
    const registry = new Registry();
    let failing = true;
    new Gauge({
      name: 'dossier_test_collected',
      help: 'a gauge whose collection can fail',
      registers: [registry],
      collect() {
        if (failing) throw new Error('collection failed');
        this.set(1);
      },
    });
    const config = { healthPort: 0, healthHost: '127.0.0.1' } as WorkerConfig;
    const service = new WorkerHealthService(config, {} as DataSource, registry, {} as WorkerHostService);
    await service.onModuleInit();
    try {
      const { port } = (service as unknown as { server: { port: number } }).server;
      const scrape = () => fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) });
      const failed = await scrape();
      expect([failed.status, await failed.json()]).toEqual([500, { status: 'error' }]);
      failing = false;
      const served = await scrape();
      expect([served.status, await served.text()]).toEqual([200, expect.stringContaining('dossier_test_collected 1')]);
    } finally {
      await service.onApplicationShutdown();
    }
  });
});
