/**
 * `npm run bench`: the raw BullMQ round-trip floor, the same round trip behind a bare HTTP endpoint
 * (ADR 0031) and the end-to-end `POST /v1/verify/phone` path, side by side, on this machine (64 in
 * flight, each at every worker concurrency of the sweep, then 1 in flight for latency, then the
 * end-to-end path scaled out to two gateways and two workers); the last two lines are
 * `durable_ratio=<best e2e req/s ÷ best durable floor req/s>` (ADR 0076: the product's own work against a relay
 * that also makes each lookup's money durable) and `ratio=<best e2e req/s ÷ best HTTP floor req/s>` at 64 in
 * flight (issue 43: against the bare relay; raw stays on its own line).
 *
 *   node dist/bench/main.js [--seconds 8] [--warmup 2] [--e2e-warmup 10] [--inflight 64] [--worker-concurrency 16,64]
 *                           [--raw-concurrency 16,64] [--client http|fetch] [--accounts 1]
 *                           [--gateway-env K=V …] [--worker-env K=V …] [--profile DIR] [--count-wire]
 *                           [--skip-raw] [--only raw,e2e,…] [--pg-set setting=value …] [--node-arg=--opt …]
 *
 * Connections come from DATABASE_URL (the server only: the bench creates and drops its own
 * database) and REDIS_URL (the bench uses its own queue prefix and deletes its keys afterwards).
 * Every phase reports the CPU each process spent in the measured window (from /proc), so a
 * figure can be read against the 2 cores it shares with Postgres, Redis and the load generator.
 *
 * The measurements are the PHASES below, run in order; adding one is a module exporting a Phase
 * (see phase.ts) and a line in that list.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { loadBenchConfig } from '@dossier/config';
import { BenchContext } from './context';
import { formatRss } from './cpu';
import { e2eLookups } from './e2e-lookups';
import { parseOptions, USAGE, type BenchOptions } from './options';
import type { Phase, PhaseReport } from './phase';
import { BASE_PHONES, PHONES, phoneCountryCount } from './phones';
import { httpFloor } from './http-floor';
import { rawBullmq } from './raw-bullmq';
import { fanOutParallelism } from './fan-out';
import { latencyPhase } from './latency';
import { localData } from './local-data';
import { scaleOut } from './scale-out';
import { usernamePresence } from './username';

/** The measurements, in the order they run. */
const PHASES: readonly Phase[] = [
  // Each at every --raw-concurrency / --worker-concurrency value: the ratio divides best by best.
  rawBullmq({ sweep: true }),
  // The raw round trip behind a bare HTTP endpoint, next to raw (the ratio's ceiling, ADR 0031).
  httpFloor(),
  // The same with each lookup's reservation and settle made durable (durable_ratio's denominator, ADR 0076).
  httpFloor(true),
  e2eLookups({ sweep: true }),
  // The same pair one at a time: latency, not throughput.
  rawBullmq({ key: 'raw-1', inflight: 1 }),
  e2eLookups({ key: 'e2e-1', inflight: 1 }),
  // Person searches against a 250 ms upstream, 1,000 in flight: how much waiting the defaults overlap.
  latencyPhase(),
  scaleOut(),
  e2eLookups({ key: 'email', kind: 'email' }),
  fanOutParallelism(),
  usernamePresence(),
];

/** The 1-in-flight phases: their latency goes in the summary, their processes' RSS does not. */
const ONE_IN_FLIGHT = ['raw-1', 'e2e-1'];

/** The last line: `ratio=<numerator's rate ÷ denominator's rate>` (NaN when one was skipped). */
const RATIO = { numerator: 'e2e', denominator: 'floor' } as const;
/** The line before it: end to end against the durable floor (ADR 0076: the target, ≥ 0.5). */
const DURABLE_RATIO = { numerator: 'e2e', denominator: 'durable' } as const;

async function main(): Promise<number> {
  let opts: BenchOptions;
  try {
    opts = parseOptions();
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    return 2;
  }
  if (opts.help) {
    console.log(USAGE);
    return 0;
  }
  const ctx = new BenchContext(opts, loadBenchConfig());
  console.log(machineLine());
  console.log(settingsLine(opts));
  const onSignal = () => {
    console.error('interrupted: cleaning up');
    ctx.interrupt();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const started = performance.now();
  let exitCode = 0;
  try {
    await ctx.open();
    const reports = new Map<string, PhaseReport>();
    // --data measures the local index alone (it takes minutes); every other run measures the PHASES.
    for (const phase of opts.dataPeople > 0 ? [localData()] : PHASES) {
      if (!phase.enabled(opts) || (opts.only.length > 0 && !opts.only.includes(phase.key))) continue;
      if (ctx.signal.aborted) throw new Error('interrupted');
      const report = await phase.run(ctx);
      for (const line of report.lines) console.log(line);
      if (report.failed) exitCode = 1;
      reports.set(phase.key, report);
    }
    for (const line of summaryLines(reports, started, opts.inflight)) console.log(line);
  } catch (err) {
    console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    exitCode = 2;
  } finally {
    await ctx.close();
  }
  return exitCode;
}

function machineLine(): string {
  const cpus = os.cpus();
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return `machine: ${cpus.length} cpu(s) (${cpus[0]?.model.trim() ?? '?'}), node ${process.version}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, load average ${load}`;
}

function settingsLine(opts: BenchOptions): string {
  return (
    `settings: ${opts.inflight} in flight, measured ${opts.measureMs / 1000} s after a warm-up of ${opts.warmupMs / 1000} s (raw) / ${opts.e2eWarmupMs / 1000} s (e2e); raw worker concurrency ${opts.rawConcurrency.join(', ')}; e2e worker concurrency ${opts.workerConcurrency.join(', ')}; ${opts.accounts} account(s); ${PHONES.length} distinct valid numbers from ${BASE_PHONES.length} bases in ${phoneCountryCount()} countries` +
    (opts.countWire ? '; COUNTING WIRE (proxies in the path: round trips only, throughput not comparable)' : '') +
    (opts.profileDir ? '; PROFILING (throughput not comparable)' : '') +
    (Object.keys(opts.pgSet).length ? `; EXPERIMENT: bench database SET ${JSON.stringify(opts.pgSet)}` : '')
  );
}

/**
 * RSS (the ratio's numerator's processes first), the duration, `durable_ratio=`, and the `ratio=` line last; a phase
 * that did not run (--only, --skip-raw) reads "not run", and a ratio without one of its rates is NaN.
 */
function summaryLines(reports: Map<string, PhaseReport>, started: number, inflight: number): string[] {
  const took = `bench took ${((performance.now() - started) / 1000).toFixed(1)} s`;
  const data = reports.get('data');
  if (data && !reports.has(RATIO.numerator)) {
    // --data: no ratio to print (the raw and end-to-end phases did not run).
    return [`${data.rss.map(({ label, rss }) => `${label} rss ${formatRss(rss)}`).join(', ')}`, took];
  }
  const rss = [...reports]
    .filter(([key]) => !ONE_IN_FLIGHT.includes(key))
    .sort(([a], [b]) => Number(b === RATIO.numerator) - Number(a === RATIO.numerator))
    .flatMap(([, r]) => r.rss);
  const rateOf = (key: string) => reports.get(key)?.rate ?? NaN;
  const reqs = (key: string) => (reports.has(key) ? `${rateOf(key).toFixed(0)} req/s` : 'not run');
  const one = (key: string) => {
    const l = reports.get(key)?.latency;
    return l ? `p50 ${l.p50.toFixed(2)} ms  p99 ${l.p99.toFixed(2)} ms` : 'not run';
  };
  const [e2e, floor, raw, durable] = [
    rateOf(RATIO.numerator),
    rateOf(RATIO.denominator),
    rateOf('raw'),
    rateOf(DURABLE_RATIO.denominator),
  ];
  return [
    `at ${inflight} in flight, each its sweep's best: raw ${reqs('raw')} — http floor ${reqs(RATIO.denominator)} — durable floor ${reqs(DURABLE_RATIO.denominator)} — end to end ${reqs(RATIO.numerator)}`,
    `http floor (the raw round trip behind a bare HTTP endpoint) = ${(floor / raw).toFixed(2)} of raw; durable floor (the same with each lookup's reservation and settle) = ${(durable / floor).toFixed(2)} of the http floor; end to end = ${(e2e / raw).toFixed(2)} of raw`,
    `at 1 in flight: raw ${one('raw-1')} — end to end ${one('e2e-1')}`,
    ...(reports.has('latency') ? [latencyLine(reports.get('latency')!, rateOf(RATIO.numerator))] : []),
    ...(reports.has('scale-out')
      ? [
          `scale-out (2 gateways, 2 workers, same machine): ${reqs('scale-out')} against ${reqs(RATIO.numerator)} for one of each`,
        ]
      : []),
    ...(rss.length > 0
      ? [
          `${rss.map(({ label, rss }) => `${label} rss ${formatRss(rss)}`).join(', ')} (after the run; /proc/<pid>/status VmRSS, RssAnon, RssFile)`,
        ]
      : []),
    took,
    `durable_ratio=${(e2e / durable).toFixed(2)}`,
    `ratio=${(e2e / floor).toFixed(2)}`,
  ];
}

/**
 * `latency_ratio = its req/s ÷ min(the same searches' req/s with the upstream answering at once, in flight ÷
 * upstream latency)` (issue 43, ADR 0073): the share of what this machine's CPU, or the upstream's latency,
 * allows those searches that the defaults reach. The phone lookups' end-to-end rate is shown beside it.
 */
function latencyLine(latency: PhaseReport, e2e: number): string {
  const ceiling = latency.ceiling ?? NaN;
  const reference = latency.reference ?? NaN;
  const bound = Math.min(reference, ceiling);
  const p = latency.latency;
  return (
    `latency (searches against a 250 ms upstream, defaults as shipped): ${latency.rate.toFixed(0)} req/s` +
    (p ? `  p50 ${p.p50.toFixed(0)} ms  p99 ${p.p99.toFixed(0)} ms` : '') +
    ` ÷ min(the same with the upstream at once ${reference.toFixed(0)}, in flight ÷ upstream ${ceiling.toFixed(0)})` +
    ` → latency_ratio=${(latency.rate / bound).toFixed(2)} (phone lookups end to end: ${e2e.toFixed(0)} req/s)`
  );
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  },
);
