/**
 * CPU and round-trip accounting over a measured window: a snapshot at each end, and the lines that
 * describe the window per process and per completed operation.
 */
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import type { Client } from 'pg';
import { cpuDiff, cpuSum, cpuTotal, machineCpuS, procCpu, selfCpu, type Cpu } from './cpu';
import { pgCpuDelta, readServerStats, serverStatLines, type ServerStats } from './server-stats';

export interface Snapshot {
  at: number;
  machine: { busy: number; total: number };
  /** The bench process (the load generator or producer). */
  self: Cpu;
  procs: Map<string, Cpu | null>;
  server: ServerStats;
}

/** Other processes using more than this share of a core make the window "shared": a warning. */
const SHARED_MACHINE_CORES = 0.2;

export class Accounting {
  constructor(
    private readonly admin: Client,
    private readonly redis: Redis,
    private readonly dbName: string,
  ) {}

  /** Everything's CPU and the servers' counters now; `procs` are the measured processes by label. */
  async snapshot(procs: Record<string, number>): Promise<Snapshot> {
    const at = performance.now();
    const machine = machineCpuS();
    const self = selfCpu();
    const procCpus = new Map<string, Cpu | null>();
    for (const [label, pid] of Object.entries(procs)) procCpus.set(label, procCpu(pid));
    const server = await readServerStats(this.admin, this.redis, this.dbName);
    return { at, machine, self, procs: procCpus, server };
  }

  /** Lines describing the window between two snapshots, for `done` completions. */
  report(a: Snapshot, b: Snapshot, done: number, loadGenLabel: string): string[] {
    const wallS = (b.at - a.at) / 1000;
    const pct = (s: number) => `${((100 * s) / wallS).toFixed(0)}%`;
    const perReq = (s: number) => (done > 0 ? `${((s * 1e6) / done).toFixed(0)} µs` : '-');
    const parts: [string, Cpu | null][] = [[loadGenLabel, cpuDiff(b.self, a.self)]];
    for (const [label, cpu] of b.procs) {
      const before = a.procs.get(label);
      parts.push([label, cpu && before ? cpuDiff(cpu, before) : null]);
    }
    const pg = pgCpuDelta(a.server, b.server);
    parts.push(['postgres', cpuSum([pg.backends, pg.aux])]);
    parts.push(['redis', cpuDiff(b.server.redisCpu, a.server.redisCpu)]);
    const accounted = cpuSum(parts.map(([, c]) => c).filter((c): c is Cpu => c !== null));
    const busy = b.machine.busy - a.machine.busy;
    const capacity = b.machine.total - a.machine.total;
    const other = Math.max(0, busy - cpuTotal(accounted));
    const lines: string[] = [];
    if (other / wallS > SHARED_MACHINE_CORES) {
      lines.push(
        `  WARNING: other processes used ${pct(other)} of a core during this window: the machine was shared, figures are low and noisy`,
      );
    }
    lines.push(
      `  cpu in window (100% = one core; machine ${pct(capacity)}; "sys" = kernel): ` +
        parts.map(([l, c]) => (c ? `${l} ${pct(cpuTotal(c))} (sys ${pct(c.s)})` : `${l} ?`)).join(', ') +
        `, other processes ${pct(other)}, idle ${pct(Math.max(0, capacity - busy))}`,
    );
    lines.push(
      `  cpu per request: ` +
        parts.map(([l, c]) => (c ? `${l} ${perReq(cpuTotal(c))}` : `${l} ?`)).join(', ') +
        ` — total ${perReq(cpuTotal(accounted))} (postgres: backends ${perReq(cpuTotal(pg.backends))}, wal/bg writers ${perReq(cpuTotal(pg.aux))})`,
    );
    lines.push(...serverStatLines(a.server, b.server, done));
    return lines;
  }
}
