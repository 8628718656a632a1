/**
 * The closed-loop driver every phase measures with: N loops, each one operation at a time; the
 * completions inside the measured window count. The window is two timers (start and end), at which
 * the phase's hooks take their snapshots.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as timer } from 'node:timers/promises';

/** `true` = success, else the reason it failed (failures are counted by reason). */
export type Outcome = true | string;

export interface DriveResult {
  ok: number;
  failed: Map<string, number>;
  windowS: number;
  /** Latencies of the successes in the window, ms, sorted. */
  latencies: Float64Array;
}

export interface DriveOptions {
  warmupMs: number;
  measureMs: number;
  inflight: number;
  /** When it aborts, the loops stop issuing (the window's figures are then partial). */
  signal: AbortSignal;
}

export interface WindowHooks {
  atStart: () => Promise<void>;
  atEnd: () => Promise<void>;
}

export async function drive(
  options: DriveOptions,
  op: (i: number) => Promise<Outcome>,
  hooks: WindowHooks,
): Promise<DriveResult> {
  const t0 = performance.now();
  const measureStart = t0 + options.warmupMs;
  const measureEnd = measureStart + options.measureMs;
  const latencies: number[] = [];
  const failed = new Map<string, number>();
  let ok = 0;
  let n = 0;
  const startSnap = timer(options.warmupMs).then(hooks.atStart);
  const endSnap = timer(options.warmupMs + options.measureMs).then(hooks.atEnd);
  const loop = async () => {
    while (performance.now() < measureEnd && !options.signal.aborted) {
      const s = performance.now();
      let outcome: Outcome;
      try {
        outcome = await op(n++);
      } catch (err) {
        outcome = `exception: ${err instanceof Error ? err.message : String(err)}`;
      }
      const e = performance.now();
      if (e < measureStart || e > measureEnd) continue;
      if (outcome === true) {
        ok++;
        latencies.push(e - s);
      } else {
        failed.set(outcome, (failed.get(outcome) ?? 0) + 1);
      }
    }
  };
  await Promise.all([...Array.from({ length: options.inflight }, loop), startSnap, endSnap]);
  return { ok, failed, windowS: options.measureMs / 1000, latencies: Float64Array.from(latencies).sort() };
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** The window's p50 and p99 latency, ms. */
export const latencyOf = (r: DriveResult): { p50: number; p99: number } => ({
  p50: percentile(r.latencies, 50),
  p99: percentile(r.latencies, 99),
});

/** Successes per second of the window. */
export const rate = (r: DriveResult): number => r.ok / r.windowS;

/** `N req/s  p50 … ms  p99 … ms` */
export function fmtRate(r: DriveResult): string {
  return `${rate(r).toFixed(0)} req/s  p50 ${percentile(r.latencies, 50).toFixed(1)} ms  p99 ${percentile(r.latencies, 99).toFixed(1)} ms`;
}

export const failureCount = (r: DriveResult): number => [...r.failed.values()].reduce((a, b) => a + b, 0);

/** `reason ×n, …` */
export const fmtFailures = (r: DriveResult): string => [...r.failed].map(([k, v]) => `${k} ×${v}`).join(', ');

/** More than 1% of the window's operations failed: the bench exits with 1. */
export const tooManyFailures = (r: DriveResult): boolean => {
  const errors = failureCount(r);
  return errors / Math.max(1, errors + r.ok) > 0.01;
};
