/**
 * The raw floor's consumer, run by bench.ts as its own process: a BullMQ Worker whose processor does
 * nothing but return a small pointer (what the real worker returns). Options as in the real worker.
 *
 *   node dist/bench/noop-worker.js --redis-url redis://127.0.0.1:6379 --prefix P --queue Q --concurrency 64
 *
 * Prints `ready` once consuming; closes gracefully on SIGTERM/SIGINT.
 */
import { parseArgs } from 'node:util';
import { Worker, type Job } from 'bullmq';
import { blockingRedisOptions } from '@dossier/config';

const { values } = parseArgs({
  options: {
    'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379' },
    prefix: { type: 'string' },
    queue: { type: 'string' },
    concurrency: { type: 'string', default: '64' },
  },
  strict: true,
});

async function main(): Promise<void> {
  if (!values.prefix || !values.queue) throw new Error('--prefix and --queue are required');
  const worker = new Worker(
    values.queue,
    async (job: Job<{ search_id?: string }>) => ({
      v: 1,
      search_id: job.data.search_id ?? String(job.id),
      status: 'succeeded',
    }),
    {
      connection: blockingRedisOptions(values['redis-url']!),
      prefix: values.prefix,
      concurrency: Number(values.concurrency),
      lockDuration: 30_000,
      stalledInterval: 30_000,
      maxStalledCount: 2,
    },
  );
  worker.on('error', (err) => console.error(`noop worker: ${err.message}`));
  await worker.waitUntilReady();
  const stop = () => {
    worker.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  console.log('ready');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
