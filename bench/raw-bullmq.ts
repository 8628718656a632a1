/**
 * The raw floor: Queue.add → a no-op Worker in its own process (noop-worker.ts) → completion seen
 * through one QueueEvents listener, with the real job options and payload shape. What BullMQ on this
 * machine can do with nothing else in the path.
 */
import { resolve } from 'node:path';
import { type AppProcess, freePort, REPO_ROOT } from '@dossier/testing';
import type { BenchContext } from './context';
import { procRss, type Rss } from './cpu';
import { failureCount, fmtFailures, fmtRate, latencyOf, rate, tooManyFailures } from './drive';
import type { DriveResult, Outcome } from './drive';
import { FLOOR_QUEUE, FloorProducer } from './floor-jobs';
import { bestRun, measureWindow, runSweep, type Phase, type PhaseReport } from './phase';
import { PHONES } from './phones';

const NOOP_WORKER = resolve(REPO_ROOT, 'dist/bench/noop-worker.js');

/** Starts the no-op worker on the floor's queue at `concurrency` and waits until it consumes. */
export async function startNoopWorker(
  ctx: BenchContext,
  concurrency: number,
  databaseUrl: string | null = null,
): Promise<AppProcess> {
  const healthPort = await freePort();
  const worker = ctx.start(
    'noop-worker',
    NOOP_WORKER,
    {},
    {
      args: [
        ...['--redis-url', ctx.config.redisUrl, '--prefix', ctx.prefix, '--queue', FLOOR_QUEUE],
        ...['--concurrency', String(concurrency), '--health-port', String(healthPort)],
        ...(databaseUrl === null ? [] : ['--database-url', databaseUrl]),
      ],
    },
  );
  try {
    await worker.waitReady(`http://127.0.0.1:${healthPort}/health/ready`);
  } catch (err) {
    await ctx.stop(worker);
    throw err;
  }
  return worker;
}

/**
 * The raw floor as a phase; `inflight` defaults to --inflight. With `sweep`, one window per
 * --raw-concurrency value, the best making the phase's figure (the ratio's denominator, ADR 0027);
 * without, the first value alone. Skipped with --skip-raw.
 */
export function rawBullmq(options: { key?: string; inflight?: number; sweep?: boolean } = {}): Phase {
  return {
    key: options.key ?? 'raw',
    enabled: (opts) => !opts.skipRaw,
    run: (ctx) => run(ctx, options.inflight ?? ctx.opts.inflight, options.sweep ?? false),
  };
}

interface RawRun {
  concurrency: number;
  result: DriveResult;
  lines: string[];
  rss: Rss | null;
}

async function run(ctx: BenchContext, inflight: number, sweep: boolean): Promise<PhaseReport> {
  const runs = await runSweep(ctx, ctx.opts.rawConcurrency, sweep, (concurrency) =>
    measure(ctx, inflight, concurrency),
  );
  const best = bestRun(runs, 'raw');
  const lines = runs.flatMap((r) => r.lines);
  if (runs.length > 1) lines.push(`best raw round trip: no-op worker concurrency ${best.concurrency}`);
  return {
    lines,
    rate: rate(best.result),
    latency: latencyOf(best.result),
    rss: [{ label: 'no-op worker', rss: best.rss }],
    failed: runs.some((r) => tooManyFailures(r.result)),
  };
}

/** One measured window with a fresh no-op worker at `concurrency`. */
async function measure(ctx: BenchContext, inflight: number, concurrency: number): Promise<RawRun> {
  const { opts } = ctx;
  const producer = new FloorProducer(ctx.config.redisUrl, ctx.prefix);
  let worker: AppProcess | null = null;
  try {
    // One after the other: a worker started beside a producer that failed would outlive this window.
    await producer.waitUntilReady();
    worker = await startNoopWorker(ctx, concurrency);
    const runId = `r${Date.now().toString(36)}c${concurrency}`;
    const op = async (i: number): Promise<Outcome> => {
      const outcome = await producer.roundTrip(`${runId}-${i}`, PHONES[i % PHONES.length]!.phone);
      return typeof outcome === 'string' ? outcome : true;
    };
    const { result, lines: windowLines } = await measureWindow(
      ctx,
      { warmupMs: opts.warmupMs, inflight, procs: { 'noop-worker': worker.pid }, selfLabel: 'bench (producer)' },
      op,
    );
    const lines = [
      `raw bullmq round trip (${inflight} in flight, no-op worker concurrency ${concurrency}, own process): ${fmtRate(result)}`,
      ...windowLines,
    ];
    if (failureCount(result) > 0) lines.push(`  failures: ${fmtFailures(result)}`);
    return { concurrency, result, lines, rss: procRss(worker.pid) };
  } finally {
    await producer.close();
    if (worker) await ctx.stop(worker);
  }
}
