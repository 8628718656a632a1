/**
 * A measurement phase: one module exporting a `Phase` (or a function making one), and one entry in
 * main.ts's PHASES. Phases run in that order against one BenchContext; each returns its report
 * lines (printed as soon as it ends) and its headline figures for the summary. `measureWindow` is
 * how a phase measures: the closed-loop driver with the CPU and server accounting of its window.
 */
import type { Snapshot } from './accounting';
import type { BenchContext } from './context';
import type { Rss } from './cpu';
import { drive, type DriveResult, type Outcome } from './drive';
import type { BenchOptions } from './options';

export interface PhaseReport {
  /** Printed right after the phase, in order. */
  lines: string[];
  /** Its headline throughput, operations per second of the measured window (the ratio reads these). */
  rate: number;
  /** Its successes' latency in the window, ms (phases that drive one operation at a time report it). */
  latency?: { p50: number; p99: number };
  /**
   * The most its rate could be if nothing but its upstream's latency bounded it (in flight ÷ the upstream's
   * latency): the latency phase's ratio divides by the lower of this and `reference`.
   */
  ceiling?: number;
  /**
   * The rate of the same operations with the upstream answering at once, in the same run: what this machine's
   * CPU allows them (the latency phase, ADR 0073).
   */
  reference?: number;
  /** RSS of its processes after the run, by label, for the summary line. */
  rss: { label: string; rss: Rss | null }[];
  /** More than 1% of its operations failed: the bench exits with 1. */
  failed: boolean;
}

export interface Phase {
  /** Its name in the summary (the final `ratio=` line divides `e2e` by `floor`). */
  readonly key: string;
  /** Whether this run measures it (flags such as --skip-raw). */
  enabled(opts: BenchOptions): boolean;
  run(ctx: BenchContext): Promise<PhaseReport>;
}

/**
 * Measures a phase at every value of a sweep (`sweep`), or at the first alone, one after another; an
 * interrupted bench stops between runs.
 */
export async function runSweep<V, R>(
  ctx: BenchContext,
  values: readonly V[],
  sweep: boolean,
  measure: (value: V) => Promise<R>,
): Promise<R[]> {
  const runs: R[] = [];
  for (const value of sweep ? values : values.slice(0, 1)) {
    if (ctx.signal.aborted) break;
    runs.push(await measure(value));
  }
  return runs;
}

/** The run of a sweep with the most successes (its figure is the phase's); throws on an empty sweep. */
export function bestRun<R extends { result: DriveResult }>(runs: readonly R[], what: string): R {
  const best = runs.reduce<R | null>((b, r) => (!b || r.result.ok > b.result.ok ? r : b), null);
  if (!best) throw new Error(`no ${what} run`);
  return best;
}

export interface WindowOptions {
  warmupMs: number;
  /** The measured window, when not --seconds. */
  measureMs?: number;
  inflight: number;
  /** The processes whose CPU the report shows, by label. */
  procs: Record<string, number>;
  /** The bench process's label in the CPU lines (it is the load generator or producer). */
  selfLabel: string;
  /** Runs at the window's start, before the snapshot (e.g. zero counters, start profilers). */
  atStart?: () => void;
  /** Runs at the window's end, after the snapshot (e.g. stop profilers and wait for their files). */
  atEnd?: () => Promise<void>;
}

/** Drives `op` for a warm-up and --seconds (or `measureMs`); returns the result and the CPU and server lines of the window. */
export async function measureWindow(
  ctx: BenchContext,
  options: WindowOptions,
  op: (i: number) => Promise<Outcome>,
): Promise<{ result: DriveResult; lines: string[] }> {
  let a: Snapshot | undefined;
  let b: Snapshot | undefined;
  const result = await drive(
    {
      warmupMs: options.warmupMs,
      measureMs: options.measureMs ?? ctx.opts.measureMs,
      inflight: options.inflight,
      signal: ctx.signal,
    },
    op,
    {
      atStart: async () => {
        options.atStart?.();
        a = await ctx.acct.snapshot(options.procs);
      },
      atEnd: async () => {
        b = await ctx.acct.snapshot(options.procs);
        await options.atEnd?.();
      },
    },
  );
  return { result, lines: ctx.acct.report(a!, b!, result.ok, options.selfLabel) };
}
