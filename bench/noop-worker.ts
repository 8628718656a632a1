/**
 * The raw floor's consumer, run by the bench (raw-bullmq.ts) as its own process: a BullMQ Worker whose
 * processor does nothing but return a small pointer (what the real worker returns). Options as in
 * the real worker.
 *
 *   node dist/bench/noop-worker.js --redis-url redis://127.0.0.1:6379 --prefix P --queue Q --concurrency 64 [--health-port N]
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

const { values } = parseArgs({
  options: {
    'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379' },
    prefix: { type: 'string' },
    queue: { type: 'string' },
    concurrency: { type: 'string', default: '64' },
    'health-port': { type: 'string' },
  },
  strict: true,
});

runBenchProcess(async () => {
  if (!values.prefix || !values.queue) throw new Error('--prefix and --queue are required');
  const worker = new Worker(
    values.queue,
    async (job: Job<{ search_id?: string }>) => ({
      v: 1,
      search_id: job.data.search_id ?? String(job.id),
      status: 'succeeded',
    }),
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
  return () => {
    consuming = false;
    health?.closeAllConnections();
    health?.close();
    return worker.close();
  };
});
