/**
 * A measurement phase: one module exporting a `Phase` (or a function making one), and one entry in
 * main.ts's PHASES. Phases run in that order against one BenchContext; each returns its report
 * lines (printed as soon as it ends) and its headline figures for the summary.
 */
import type { BenchContext } from './context';
import type { BenchOptions } from './options';

export interface PhaseReport {
  /** Printed right after the phase, in order. */
  lines: string[];
  /** Its headline throughput, operations per second of the measured window (the ratio reads these). */
  rate: number;
  /** RSS of its processes after the run, by label, for the summary line. */
  rss: { label: string; mib: number | null }[];
  /** More than 1% of its operations failed: the bench exits with 1. */
  failed: boolean;
}

export interface Phase {
  /** Its name in the summary (the final `ratio=` line divides `e2e` by `raw`). */
  readonly key: string;
  /** Whether this run measures it (flags such as --skip-raw). */
  enabled(opts: BenchOptions): boolean;
  run(ctx: BenchContext): Promise<PhaseReport>;
}
