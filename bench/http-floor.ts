/**
 * The HTTP floor: the raw round trip (floor-jobs.ts) behind a bare Fastify endpoint in its own
 * process (http-floor-front.ts), driven by the end-to-end phase's load generator — the raw phase with
 * an HTTP request in front of each job and nothing else. Every end-to-end lookup does at least this
 * much work, so its rate divided by the raw rate is a ceiling for the ratio on this machine: the
 * summary prints both. One window per --raw-concurrency value (like the raw phase), the best making
 * the figure; skipped with --skip-raw.
 *
 * `durable`: the durable floor (ADR 0076), the same with each lookup's money made durable as the
 * product must (floor-ledger.ts: its reservation before the job is queued, its settle before it
 * completes, through the credits module): the floor of a metered lookup, `durable_ratio`'s denominator.
 */
import { resolve } from 'node:path';
import { type AppProcess, freePort, REPO_ROOT } from '@dossier/testing';
import type { BenchContext } from './context';
import { failureCount, fmtFailures, fmtRate, latencyOf, rate, tooManyFailures } from './drive';
import type { DriveResult, Outcome } from './drive';
import { loadGenDescription, postOp, poster } from './load';
import { bestRun, measureWindow, runSweep, type Phase, type PhaseReport } from './phase';
import { PHONES } from './phones';
import { startNoopWorker } from './raw-bullmq';

const FRONT = resolve(REPO_ROOT, 'dist/bench/http-floor-front.js');
const PATH = '/v1/verify/phone';

export function httpFloor(durable = false): Phase {
  return {
    key: durable ? 'durable' : 'floor',
    enabled: (opts) => !opts.skipRaw,
    run: (ctx) => run(ctx, durable ? ctx.dbUrl : null),
  };
}

interface FloorRun {
  concurrency: number;
  result: DriveResult;
  lines: string[];
}

async function run(ctx: BenchContext, databaseUrl: string | null): Promise<PhaseReport> {
  const { opts } = ctx;
  const [name, does] =
    databaseUrl === null
      ? ['http floor', 'the raw round trip']
      : ['durable floor', 'reserve, the raw round trip, settle'];
  const ledger = databaseUrl === null ? [] : ['--database-url', databaseUrl];
  const port = await freePort();
  const front = ctx.start(
    databaseUrl === null ? 'http-floor-front' : 'durable-floor-front',
    FRONT,
    {},
    { args: ['--redis-url', ctx.config.redisUrl, '--prefix', ctx.prefix, '--port', String(port), ...ledger] },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  const load = poster(opts.client, baseUrl, PATH, opts.inflight);
  let runs: FloorRun[];
  try {
    await front.waitReady(`${baseUrl}/health/ready`);
    const bodies = PHONES.map((p) => Buffer.from(JSON.stringify({ phone: p.phone })));
    const op = postOp(load, bodies, ['floor']);
    runs = await runSweep(ctx, opts.rawConcurrency, true, async (concurrency) => {
      const worker = await startNoopWorker(ctx, concurrency, databaseUrl);
      try {
        return await measure(ctx, `${name}: POST ${PATH} → ${does}`, front, worker, op, concurrency);
      } finally {
        await ctx.stop(worker);
      }
    });
  } finally {
    load.close();
    await ctx.stop(front);
  }
  const best = bestRun(runs, name);
  const lines = [loadGenDescription(opts.client), ...runs.flatMap((r) => r.lines)];
  if (runs.length > 1) lines.push(`best ${name}: no-op worker concurrency ${best.concurrency}`);
  return {
    lines,
    rate: rate(best.result),
    latency: latencyOf(best.result),
    rss: [],
    failed: runs.some((r) => tooManyFailures(r.result)),
  };
}

async function measure(
  ctx: BenchContext,
  /** What the window's line starts with: which floor, and what each request does. */
  title: string,
  front: AppProcess,
  worker: AppProcess,
  op: (i: number) => Promise<Outcome>,
  concurrency: number,
): Promise<FloorRun> {
  const { opts } = ctx;
  const { result, lines } = await measureWindow(
    ctx,
    {
      // The front is a fresh HTTP app, as the gateway is: the end-to-end warm-up.
      warmupMs: opts.e2eWarmupMs,
      inflight: opts.inflight,
      procs: { 'http front': front.pid, 'noop-worker': worker.pid },
      selfLabel: `load generator (${opts.client})`,
    },
    op,
  );
  return {
    concurrency,
    result,
    lines: [
      `${title} (${opts.inflight} in flight, no-op worker concurrency ${concurrency}): ${fmtRate(result)}` +
        (failureCount(result) ? `  failures: ${fmtFailures(result)}` : ''),
      ...lines,
    ],
  };
}
