/**
 * The raw floor: Queue.add → a no-op Worker in its own process (noop-worker.ts) → completion seen
 * through one QueueEvents listener, with the real job options and payload shape. What BullMQ on this
 * machine can do with nothing else in the path.
 */
import { resolve } from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { blockingRedisOptions, failFastRedisOptions } from '@dossier/config';
import { JOB_NAMES, lookupJobOptions, lookupQueueOptions } from '@dossier/contracts';
import { freePort, REPO_ROOT } from '@dossier/testing';
import type { BenchContext } from './context';
import { procRss, type Rss } from './cpu';
import { failureCount, fmtFailures, fmtRate, latencyOf, rate, tooManyFailures } from './drive';
import type { DriveResult, Outcome } from './drive';
import { bestRun, measureWindow, runSweep, type Phase, type PhaseReport } from './phase';
import { PHONES } from './phones';

const NOOP_WORKER = resolve(REPO_ROOT, 'dist/bench/noop-worker.js');
const QUEUE_NAME = 'bench-floor';
/** A job with no completion event after this long counts as failed. */
const COMPLETION_TIMEOUT_MS = 10_000;
const SWEEP_INTERVAL_MS = 500;

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
  const healthPort = await freePort();
  const worker = ctx.start(
    'noop-worker',
    NOOP_WORKER,
    {},
    {
      args: [
        ...['--redis-url', ctx.config.redisUrl, '--prefix', ctx.prefix, '--queue', QUEUE_NAME],
        ...['--concurrency', String(concurrency), '--health-port', String(healthPort)],
      ],
    },
  );
  const queue = new Queue(QUEUE_NAME, lookupQueueOptions(ctx.prefix, failFastRedisOptions(ctx.config.redisUrl)));
  const events = new QueueEvents(QUEUE_NAME, {
    connection: blockingRedisOptions(ctx.config.redisUrl),
    prefix: ctx.prefix,
  });
  const completions = new Completions();
  events.on('completed', ({ jobId }) => completions.settle(jobId, true));
  events.on('failed', ({ jobId, failedReason }) => completions.settle(jobId, `job failed: ${failedReason}`));
  try {
    await Promise.all([
      queue.waitUntilReady(),
      events.waitUntilReady(),
      worker.waitReady(`http://127.0.0.1:${healthPort}/health/ready`),
    ]);
    const runId = `r${Date.now().toString(36)}c${concurrency}`;
    const jobOptions = lookupJobOptions();
    const op = async (i: number): Promise<Outcome> => {
      const id = `${runId}-${i}`;
      const done = completions.expect(id);
      try {
        await queue.add(JOB_NAMES.phone, lookupJob(id, PHONES[i % PHONES.length]!.phone), {
          ...jobOptions,
          jobId: id,
        });
      } catch (err) {
        completions.forget(id);
        throw err;
      }
      return done;
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
    completions.close();
    await events.close().catch(() => undefined);
    await queue.close().catch(() => undefined);
    await ctx.stop(worker);
  }
}

/** Jobs waiting for their completion event; one sweep fails those that waited too long. */
class Completions {
  private readonly waiting = new Map<string, { done: (o: Outcome) => void; deadline: number }>();
  private readonly sweeper = setInterval(() => {
    const now = Date.now();
    for (const [id, w] of this.waiting) {
      if (w.deadline < now) this.settle(id, `timeout (no completion event in ${COMPLETION_TIMEOUT_MS / 1000} s)`);
    }
  }, SWEEP_INTERVAL_MS);

  expect(jobId: string): Promise<Outcome> {
    return new Promise((done) => this.waiting.set(jobId, { done, deadline: Date.now() + COMPLETION_TIMEOUT_MS }));
  }

  settle(jobId: string, outcome: Outcome): void {
    const w = this.waiting.get(jobId);
    if (!w) return;
    this.waiting.delete(jobId);
    w.done(outcome);
  }

  forget(jobId: string): void {
    this.waiting.delete(jobId);
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

/** A phone lookup job as the gateway enqueues it. */
function lookupJob(id: string, phone: string) {
  return {
    v: 1,
    kind: 'phone',
    search_id: id,
    account_id: 'acct_benchbenchbenchbench',
    request_id: `req_${id}`,
    submitted_at: new Date().toISOString(),
    input: { phone },
  };
}
