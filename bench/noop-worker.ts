/**
 * The raw floor's consumer, run by the bench (raw-bullmq.ts) as its own process: a BullMQ Worker whose
 * processor does nothing but return a small pointer (what the real worker returns). Options as in
 * the real worker. With --database-url it is the durable floor's worker (ADR 0076): each job's search is
 * settled (floor-ledger.ts) before it completes, and its return value carries the balance, as the real
 * worker's does.
 *
 *   node dist/bench/noop-worker.js --redis-url redis://127.0.0.1:6379 --prefix P --queue Q --concurrency 64 [--health-port N] [--database-url U]
 *
 * With --health-port, answers `GET /health/ready` on 127.0.0.1 (200 once consuming, like the real
 * worker's WORKER_HEALTH_PORT); closes gracefully on SIGTERM/SIGINT.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Worker, type Job } from 'bullmq';
import { blockingRedisOptions } from '@dossier/runtime';
import { runBenchProcess } from './bench-process';
import { FloorLedger } from './floor-ledger';

const { values } = parseArgs({
  options: {
    'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379' },
    prefix: { type: 'string' },
    queue: { type: 'string' },
    concurrency: { type: 'string', default: '64' },
    'health-port': { type: 'string' },
    'database-url': { type: 'string' },
  },
  strict: true,
});

runBenchProcess(async () => {
  if (!values.prefix || !values.queue) throw new Error('--prefix and --queue are required');
  const url = values['database-url'];
  const ledger = url === undefined ? null : await FloorLedger.open(url, 'worker');
  const worker = new Worker(
    values.queue,
    async (job: Job<{ search_id?: string }>) => {
      const searchId = job.data.search_id ?? String(job.id);
      const pointer = { v: 1, search_id: searchId, status: 'succeeded' };
      if (!ledger) return pointer;
      const balance = await ledger.settle(searchId);
      return { ...pointer, outcome: { charged: true, balance, results: [], sources: [] } };
    },
    {
      connection: blockingRedisOptions(values['redis-url']),
      prefix: values.prefix,
      concurrency: Number(values.concurrency),
      lockDuration: 30_000,
      stalledInterval: 30_000,
      maxStalledCount: 2,
    },
  );
  worker.on('error', (err) => console.error(`noop worker: ${err.message}`));
  await worker.waitUntilReady();
  let consuming = true;
  const health =
    values['health-port'] === undefined
      ? null
      : createServer((req, res) => {
          const ready = req.url === '/health/ready' && consuming && worker.isRunning();
          res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ok' : 'unavailable');
        });
  if (health) {
    health.listen(Number(values['health-port']), '127.0.0.1');
    await once(health, 'listening');
  }
  return async () => {
    consuming = false;
    health?.closeAllConnections();
    health?.close();
    await worker.close();
    await ledger?.close();
  };
});
