/**
 * What Postgres and Redis did in a window: the CPU of the bench database's backends and of the WAL and
 * background writers, pg_stat_database counters, Redis CPU and INFO commandstats.
 */
import type { Redis } from 'ioredis';
import type { Client } from 'pg';
import { cpuDiff, cpuSum, NO_CPU, procCpu, type Cpu } from './cpu';

export interface ServerStats {
  /** Postgres processes by pid: the bench database's backends, and the writers every database shares. */
  pg: Map<number, { kind: 'backend' | 'aux'; cpu: Cpu }>;
  /** pg_stat_database counters of the bench database. */
  pgDb: Record<string, number>;
  redisCpu: Cpu;
  /** INFO commandstats calls by command (calls inside Lua scripts included). */
  redisCmds: Map<string, number>;
}

export async function readServerStats(admin: Client, redis: Redis, dbName: string): Promise<ServerStats> {
  const [activity, dbStats, info] = await Promise.all([
    admin.query<{ pid: number; datname: string | null; backend_type: string }>(
      `SELECT pid, datname, backend_type FROM pg_stat_activity
        WHERE datname = $1 OR backend_type IN ('walwriter', 'background writer', 'checkpointer')`,
      [dbName],
    ),
    admin.query<Record<string, string>>(
      `SELECT xact_commit, xact_rollback, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted
         FROM pg_stat_database WHERE datname = $1`,
      [dbName],
    ),
    redis.info('all'),
  ]);
  const pg = new Map<number, { kind: 'backend' | 'aux'; cpu: Cpu }>();
  for (const row of activity.rows) {
    const cpu = procCpu(row.pid);
    if (cpu !== null) pg.set(row.pid, { kind: row.datname === dbName ? 'backend' : 'aux', cpu });
  }
  const redisCmds = new Map<string, number>();
  const redisCpu = { u: 0, s: 0 };
  for (const line of info.split('\r\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (m) redisCmds.set(m[1]!, Number(m[2]));
    const c = /^used_cpu_(sys|user):([\d.]+)/.exec(line);
    if (c) redisCpu[c[1] === 'sys' ? 's' : 'u'] += Number(c[2]);
  }
  const pgDb = Object.fromEntries(Object.entries(dbStats.rows[0] ?? {}).map(([k, v]) => [k, Number(v)]));
  return { pg, pgDb, redisCpu, redisCmds };
}

/** Postgres CPU between two reads: the bench database's backends, and the shared writers. */
export function pgCpuDelta(a: ServerStats, b: ServerStats): { backends: Cpu; aux: Cpu } {
  const backends: Cpu[] = [];
  const aux: Cpu[] = [];
  for (const [pid, v] of b.pg)
    (v.kind === 'backend' ? backends : aux).push(cpuDiff(v.cpu, a.pg.get(pid)?.cpu ?? NO_CPU));
  return { backends: cpuSum(backends), aux: cpuSum(aux) };
}

/** Redis commands and Postgres work per completed operation between two reads. */
export function serverStatLines(a: ServerStats, b: ServerStats, done: number): string[] {
  if (done <= 0) return [];
  const cmdDelta = [...b.redisCmds]
    .map(([k, v]) => [k, v - (a.redisCmds.get(k) ?? 0)] as const)
    .filter(([k, v]) => v > 0 && k !== 'info')
    .sort((x, y) => y[1] - x[1]);
  const totalCmds = cmdDelta.reduce((s, [, v]) => s + v, 0);
  const d = (k: string) => (b.pgDb[k] ?? 0) - (a.pgDb[k] ?? 0);
  return [
    `  redis commands per request (INFO commandstats deltas, incl. calls made inside Lua scripts; server-wide, so others' traffic on the shared Redis counts too): ${(totalCmds / done).toFixed(1)} — ` +
      cmdDelta
        .slice(0, 8)
        .map(([k, v]) => `${k} ${(v / done).toFixed(2)}`)
        .join(', '),
    `  postgres per request (pg_stat_database, flushed ≤1 s late): transactions ${((d('xact_commit') + d('xact_rollback')) / done).toFixed(2)}, ` +
      `rows inserted ${(d('tup_inserted') / done).toFixed(2)}, updated ${(d('tup_updated') / done).toFixed(2)}, fetched ${(d('tup_fetched') / done).toFixed(2)}`,
  ];
}
