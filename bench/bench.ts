/**
 * `npm run bench`: the raw BullMQ round-trip floor and the end-to-end `POST /v1/verify/phone`
 * path, side by side, on this machine; the last line is `ratio=<e2e req/s ÷ raw req/s>`.
 *
 *   node dist/bench/bench.js [--seconds 8] [--warmup 2] [--e2e-warmup 10] [--inflight 64] [--worker-concurrency 64[,32,…]]
 *                            [--raw-concurrency 64] [--client http|fetch] [--accounts 1]
 *                            [--gateway-env K=V …] [--worker-env K=V …] [--profile DIR] [--count-wire]
 *
 * Connections come from DATABASE_URL (the server only: the bench creates and drops its own
 * database) and REDIS_URL (the bench uses its own queue prefix and deletes its keys afterwards).
 * Every phase reports the CPU each process spent in the measured window (from /proc), so a
 * figure can be read against the 2 cores it shares with Postgres, Redis and the load generator.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Queue, QueueEvents } from 'bullmq';
import IORedis, { type Redis } from 'ioredis';
import { isValidPhoneNumber, parsePhoneNumber, type CountryCode } from 'libphonenumber-js/max';
import { Client } from 'pg';
import { blockingRedisOptions, failFastRedisOptions, loadBenchConfig, redisOptionsFromUrl } from '@dossier/config';
import { DEFAULT_LOOKUP_JOB_OPTIONS, EVENTS_MAX_LEN, JOB_NAMES, QUEUE_NAMES } from '@dossier/contracts';
import { countingProxy, type CountingProxy } from './wire-counter';

// ---------------------------------------------------------------------------------------------
// Flags
// ---------------------------------------------------------------------------------------------

const USAGE = `usage: node dist/bench/bench.js [--seconds 8] [--warmup 2] [--e2e-warmup 10] [--inflight 64] [--worker-concurrency 64[,32,…]]
       [--raw-concurrency 64] [--client http|fetch] [--accounts 1] [--gateway-env K=V …] [--worker-env K=V …]
       [--profile DIR] [--count-wire] [--skip-raw] [--pg-set setting=value …] [--node-arg=--opt …]`;

function positive(name: string, raw: string, min = 1): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min} (got ${raw})`);
  return n;
}

function envPairs(name: string, list: string[]): Record<string, string> {
  return Object.fromEntries(
    list.map((kv) => {
      const i = kv.indexOf('=');
      if (i < 1) throw new Error(`--${name} takes KEY=VALUE (got ${kv})`);
      return [kv.slice(0, i), kv.slice(i + 1)];
    }),
  );
}

function parseOptions() {
  const { values: flags } = parseArgs({
    options: {
      seconds: { type: 'string', default: '8' },
      warmup: { type: 'string', default: '2' },
      'e2e-warmup': { type: 'string', default: '10' },
      inflight: { type: 'string', default: '64' },
      'worker-concurrency': { type: 'string', default: '64' },
      'raw-concurrency': { type: 'string', default: '64' },
      client: { type: 'string', default: 'http' },
      accounts: { type: 'string', default: '1' },
      'gateway-env': { type: 'string', multiple: true, default: [] },
      'worker-env': { type: 'string', multiple: true, default: [] },
      profile: { type: 'string' },
      'count-wire': { type: 'boolean', default: false },
      'skip-raw': { type: 'boolean', default: false },
      'pg-set': { type: 'string', multiple: true, default: [] },
      'node-arg': { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (flags.client !== 'http' && flags.client !== 'fetch') throw new Error('--client is http or fetch');
  const pgSet = envPairs('pg-set', flags['pg-set']!);
  for (const [k, v] of Object.entries(pgSet)) {
    if (!/^[a-z_]+$/.test(k) || !/^[A-Za-z0-9_.]+$/.test(v)) throw new Error(`--pg-set ${k}=${v}: not a plain setting`);
  }
  return {
    help: flags.help!,
    measureMs: positive('seconds', flags.seconds!, 0.5) * 1000,
    warmupMs: positive('warmup', flags.warmup!, 0) * 1000,
    /** Longer by default: at a few hundred req/s the apps' JIT is still compiling after 2 s (measured: ~30% more CPU per request than after 10 s). */
    e2eWarmupMs: positive('e2e-warmup', flags['e2e-warmup']!, 0) * 1000,
    inflight: Math.floor(positive('inflight', flags.inflight!)),
    workerConcurrency: flags['worker-concurrency']!.split(',').map((s) =>
      Math.floor(positive('worker-concurrency', s.trim())),
    ),
    rawConcurrency: Math.floor(positive('raw-concurrency', flags['raw-concurrency']!)),
    client: flags.client,
    accounts: Math.floor(positive('accounts', flags.accounts!)),
    gatewayEnv: envPairs('gateway-env', flags['gateway-env']!),
    workerEnv: envPairs('worker-env', flags['worker-env']!),
    profileDir: flags.profile ? resolve(flags.profile) : null,
    countWire: flags['count-wire']!,
    skipRaw: flags['skip-raw']!,
    /** Experiments only: `ALTER DATABASE <bench db> SET k = v` (e.g. synchronous_commit=off); the server is untouched. */
    pgSet,
    /** Extra node options for the gateway and worker processes (e.g. --perf-basic-prof for `perf`). */
    nodeArgs: flags['node-arg']!,
  };
}

const opts = (() => {
  try {
    return parseOptions();
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    process.exit(2);
  }
})();

const ROOT = resolve(__dirname, '../..');
const DIST = {
  gateway: resolve(ROOT, 'dist/apps/gateway/src/main.js'),
  worker: resolve(ROOT, 'dist/apps/worker/src/main.js'),
  cli: resolve(ROOT, 'dist/apps/cli/src/main.js'),
  noopWorker: resolve(__dirname, 'noop-worker.js'),
  profileHook: resolve(__dirname, 'cpu-profile-hook.js'),
};

/** Valid numbers from several countries (E.164 and national with `country`); checked at start. */
const BASE_PHONES: { phone: string; country?: CountryCode }[] = [
  { phone: '+12015550123' },
  { phone: '+14155552671' },
  { phone: '+447400123456' },
  { phone: '+442079460018' },
  { phone: '+4915123456789' },
  { phone: '030 12345678', country: 'DE' },
  { phone: '+33612345678' },
  { phone: '+918123456789' },
  { phone: '+5511961234567' },
  { phone: '+819012345678' },
  { phone: '0412 345 678', country: 'AU' },
  { phone: '+15062345678' },
  { phone: '+34612345678' },
  { phone: '+393123456789' },
  { phone: '+31612345678' },
  { phone: '+46701234567' },
  { phone: '+522221234567' },
  { phone: '+27711234567' },
  { phone: '+2348021234567' },
  { phone: '+821020000000' },
  { phone: '+6581234567' },
  { phone: '078 123 45 67', country: 'CH' },
  { phone: '+48512345678' },
];

/**
 * The numbers sent: each base number with its last two digits varied (00–99), the valid ones only —
 * ~2,000 distinct numbers, so a per-number cache anywhere in the path cannot make the figure.
 */
function phoneVariants(): { phone: string; country?: CountryCode }[] {
  const out: { phone: string; country?: CountryCode }[] = [];
  for (const base of BASE_PHONES) {
    if (!isValidPhoneNumber(base.phone, base.country))
      throw new Error(`bench phone list: ${base.phone} (${base.country ?? '-'}) is not valid`);
    const m = /^(.*\d)\s*(\d)\s*(\d)$/.exec(base.phone);
    for (let n = 0; n < 100 && m; n++) {
      const phone = `${m[1]}${Math.floor(n / 10)}${n % 10}`;
      if (isValidPhoneNumber(phone, base.country)) out.push({ ...base, phone });
    }
  }
  // interleave countries: a fixed shuffle (no Math.random: the same sequence every run)
  return out
    .map((p, i) => ({ p, k: (i * 7919) % out.length }))
    .sort((a, b) => a.k - b.k)
    .map(({ p }) => p);
}
const PHONES = phoneVariants();

// ---------------------------------------------------------------------------------------------
// Small helpers: percentiles, /proc, child processes
// ---------------------------------------------------------------------------------------------

const CLK_TCK = 100; // Linux USER_HZ

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** CPU seconds, user and system (kernel: syscalls, and on loopback the peer's TCP receive path). */
interface Cpu {
  u: number;
  s: number;
}
const NO_CPU: Cpu = { u: 0, s: 0 };
const cpuSum = (xs: Cpu[]): Cpu => xs.reduce((a, b) => ({ u: a.u + b.u, s: a.s + b.s }), NO_CPU);
const cpuDiff = (b: Cpu, a: Cpu): Cpu => ({ u: b.u - a.u, s: b.s - a.s });

/** utime and stime of a process, or null when it is gone or unreadable. */
function procCpu(pid: number): Cpu | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { u: Number(fields[11]) / CLK_TCK, s: Number(fields[12]) / CLK_TCK };
  } catch {
    return null;
  }
}

function procRssMiB(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Whole-machine busy and total CPU seconds from /proc/stat. */
function machineCpuS(): { busy: number; total: number } {
  const [cpu] = readFileSync('/proc/stat', 'utf8').split('\n');
  const v = cpu!.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return { busy: (total - idle) / CLK_TCK, total: total / CLK_TCK };
}

class Child {
  private out = '';
  readonly exited: Promise<number | null>;
  readonly proc: ChildProcess;

  constructor(
    readonly name: string,
    args: string[],
    env: Record<string, string>,
    cwd?: string,
  ) {
    this.proc = spawn(process.execPath, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d: Buffer) => {
      this.out += d.toString();
      if (this.out.length > 64_000) this.out = this.out.slice(-32_000);
    };
    this.proc.stdout?.on('data', keep);
    this.proc.stderr?.on('data', keep);
    this.exited = new Promise((res) => this.proc.once('exit', (code) => res(code)));
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }
  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }
  get logs(): string {
    return this.out;
  }

  async waitFor(what: string, ready: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running)
        throw new Error(
          `${this.name} exited early (${String(this.proc.exitCode ?? this.proc.signalCode)}):\n${this.out}`,
        );
      try {
        if (await ready()) return;
      } catch {
        // not yet
      }
      await sleep(50);
    }
    throw new Error(`${this.name}: ${what} not seen within ${timeoutMs} ms:\n${this.out}`);
  }

  signal(sig: NodeJS.Signals): void {
    if (this.running) this.proc.kill(sig);
  }

  async stop(timeoutMs = 15_000): Promise<void> {
    if (!this.running) return;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), timeoutMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The closed-loop driver: N loops, each one request at a time; completions in the window count
// ---------------------------------------------------------------------------------------------

type Outcome = true | string; // true = success, else a reason

/** Set by SIGINT/SIGTERM: the load loops stop issuing and the bench cleans up. */
let interrupted = false;

interface DriveResult {
  ok: number;
  failed: Map<string, number>;
  windowS: number;
  latencies: Float64Array;
}

async function drive(
  warmupMs: number,
  inflight: number,
  op: (i: number) => Promise<Outcome>,
  hooks: { atStart: () => Promise<void>; atEnd: () => Promise<void> },
): Promise<DriveResult> {
  const t0 = performance.now();
  const measureStart = t0 + warmupMs;
  const measureEnd = measureStart + opts.measureMs;
  const latencies: number[] = [];
  const failed = new Map<string, number>();
  let ok = 0;
  let n = 0;
  const startSnap = sleep(warmupMs).then(hooks.atStart);
  const endSnap = sleep(warmupMs + opts.measureMs).then(hooks.atEnd);
  const loop = async () => {
    while (performance.now() < measureEnd && !interrupted) {
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
  await Promise.all([...Array.from({ length: inflight }, loop), startSnap, endSnap]);
  const sorted = Float64Array.from(latencies).sort();
  return { ok, failed, windowS: opts.measureMs / 1000, latencies: sorted };
}

function fmtRate(r: DriveResult): string {
  return `${(r.ok / r.windowS).toFixed(0)} req/s  p50 ${percentile(r.latencies, 50).toFixed(1)} ms  p99 ${percentile(r.latencies, 99).toFixed(1)} ms`;
}

// ---------------------------------------------------------------------------------------------
// CPU and round-trip accounting over the measured window
// ---------------------------------------------------------------------------------------------

interface Snapshot {
  at: number;
  procs: Map<string, Cpu | null>;
  self: Cpu;
  pg: Map<number, { kind: 'backend' | 'aux'; cpu: Cpu }>;
  redisCpu: Cpu;
  redisCmds: Map<string, number>;
  pgDb: Record<string, number>;
  machine: { busy: number; total: number };
}

class Accounting {
  constructor(
    private readonly admin: Client,
    private readonly redis: Redis,
    private readonly dbName: string,
  ) {}

  async snapshot(procs: Record<string, number>): Promise<Snapshot> {
    const at = performance.now();
    const machine = machineCpuS();
    const cu = process.cpuUsage();
    const procCpus = new Map<string, Cpu | null>();
    for (const [label, pid] of Object.entries(procs)) procCpus.set(label, procCpu(pid));
    const [activity, dbStats, info] = await Promise.all([
      this.admin.query<{ pid: number; datname: string | null; backend_type: string }>(
        `SELECT pid, datname, backend_type FROM pg_stat_activity
          WHERE datname = $1 OR backend_type IN ('walwriter', 'background writer', 'checkpointer')`,
        [this.dbName],
      ),
      this.admin.query<Record<string, string>>(
        `SELECT xact_commit, xact_rollback, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted
           FROM pg_stat_database WHERE datname = $1`,
        [this.dbName],
      ),
      this.redis.info('all'),
    ]);
    const pg = new Map<number, { kind: 'backend' | 'aux'; cpu: Cpu }>();
    for (const row of activity.rows) {
      const cpu = procCpu(row.pid);
      if (cpu !== null) pg.set(row.pid, { kind: row.datname === this.dbName ? 'backend' : 'aux', cpu });
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
    return {
      at,
      procs: procCpus,
      self: { u: cu.user / 1e6, s: cu.system / 1e6 },
      pg,
      redisCpu,
      redisCmds,
      pgDb,
      machine,
    };
  }

  /** Lines describing the window between two snapshots, for `done` completions. */
  report(a: Snapshot, b: Snapshot, done: number, loadGenLabel: string): string[] {
    const wallS = (b.at - a.at) / 1000;
    const pct = (s: number) => `${((100 * s) / wallS).toFixed(0)}%`;
    const perReq = (s: number) => (done > 0 ? `${((s * 1e6) / done).toFixed(0)} µs` : '-');
    const parts: [string, Cpu | null][] = [];
    parts.push([loadGenLabel, cpuDiff(b.self, a.self)]);
    for (const [label, cpu] of b.procs) {
      const before = a.procs.get(label);
      parts.push([label, cpu && before ? cpuDiff(cpu, before) : null]);
    }
    const backends: Cpu[] = [];
    const aux: Cpu[] = [];
    for (const [pid, v] of b.pg)
      (v.kind === 'backend' ? backends : aux).push(cpuDiff(v.cpu, a.pg.get(pid)?.cpu ?? NO_CPU));
    const pgBackends = cpuSum(backends);
    const pgAux = cpuSum(aux);
    parts.push(['postgres', cpuSum([pgBackends, pgAux])]);
    parts.push(['redis', cpuDiff(b.redisCpu, a.redisCpu)]);
    const known = parts.map(([, c]) => c).filter((c): c is Cpu => c !== null);
    const accounted = cpuSum(known);
    const busy = b.machine.busy - a.machine.busy;
    const capacity = b.machine.total - a.machine.total;
    const tot = (c: Cpu) => c.u + c.s;
    const lines: string[] = [];
    const other = Math.max(0, busy - tot(accounted));
    if (other / wallS > 0.2) {
      lines.push(
        `  WARNING: other processes used ${pct(other)} of a core during this window: the machine was shared, figures are low and noisy`,
      );
    }
    lines.push(
      `  cpu in window (100% = one core; machine ${pct(capacity)}; "sys" = kernel): ` +
        parts.map(([l, c]) => (c ? `${l} ${pct(tot(c))} (sys ${pct(c.s)})` : `${l} ?`)).join(', ') +
        `, other processes ${pct(other)}, idle ${pct(Math.max(0, capacity - busy))}`,
    );
    lines.push(
      `  cpu per request: ` +
        parts.map(([l, c]) => (c ? `${l} ${perReq(tot(c))}` : `${l} ?`)).join(', ') +
        ` — total ${perReq(tot(accounted))} (postgres: backends ${perReq(tot(pgBackends))}, wal/bg writers ${perReq(tot(pgAux))})`,
    );
    if (done > 0) {
      const cmdDelta = [...b.redisCmds]
        .map(([k, v]) => [k, v - (a.redisCmds.get(k) ?? 0)] as const)
        .filter(([k, v]) => v > 0 && k !== 'info')
        .sort((x, y) => y[1] - x[1]);
      const totalCmds = cmdDelta.reduce((s, [, v]) => s + v, 0);
      lines.push(
        `  redis commands per request (INFO commandstats deltas, incl. calls made inside Lua scripts; server-wide, so others' traffic on the shared Redis counts too): ${(totalCmds / done).toFixed(1)} — ` +
          cmdDelta
            .slice(0, 8)
            .map(([k, v]) => `${k} ${(v / done).toFixed(2)}`)
            .join(', '),
      );
      const d = (k: string) => (b.pgDb[k] ?? 0) - (a.pgDb[k] ?? 0);
      lines.push(
        `  postgres per request (pg_stat_database, flushed ≤1 s late): transactions ${((d('xact_commit') + d('xact_rollback')) / done).toFixed(2)}, ` +
          `rows inserted ${(d('tup_inserted') / done).toFixed(2)}, updated ${(d('tup_updated') / done).toFixed(2)}, fetched ${(d('tup_fetched') / done).toFixed(2)}`,
      );
    }
    return lines;
  }
}

// ---------------------------------------------------------------------------------------------
// Load generators for the HTTP phase
// ---------------------------------------------------------------------------------------------

/** The gateway answers 202 after SYNC_WAIT_DEFAULT_S (10 s) at the latest: anything slower is broken. */
const REQUEST_TIMEOUT_MS = 30_000;

type Poster = (body: Buffer, apiKey: string) => Promise<{ status: number; text: string }>;

function httpPoster(baseUrl: string, path: string, inflight: number): { post: Poster; close: () => void } {
  const u = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: inflight, maxFreeSockets: inflight });
  const post: Poster = (body, apiKey) =>
    new Promise((resolvePost, reject) => {
      const req = http.request(
        {
          host: u.hostname,
          port: u.port,
          path,
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            authorization: `Bearer ${apiKey}`,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolvePost({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', reject);
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  return { post, close: () => agent.destroy() };
}

function fetchPoster(baseUrl: string, path: string): { post: Poster; close: () => void } {
  const url = `${baseUrl}${path}`;
  const post: Poster = async (body, apiKey) => {
    const res = await fetch(url, {
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body,
    });
    return { status: res.status, text: await res.text() };
  };
  return { post, close: () => undefined };
}

async function httpJson(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = { raw: text };
  }
  return { status: res.status, json };
}

// ---------------------------------------------------------------------------------------------
// Phases
// ---------------------------------------------------------------------------------------------

interface Ctx {
  config: ReturnType<typeof loadBenchConfig>;
  admin: Client;
  redis: Redis;
  dbName: string;
  dbUrl: string;
  prefix: string;
  acct: Accounting;
  children: Set<Child>;
  proxies: CountingProxy[];
}

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

/** (a) Queue.add → no-op Worker in its own process → completion via one QueueEvents listener. */
async function rawPhase(ctx: Ctx): Promise<{ result: DriveResult; lines: string[]; rss: number | null }> {
  const queueName = 'bench-floor';
  const worker = new Child(
    'noop-worker',
    [
      DIST.noopWorker,
      '--redis-url',
      ctx.config.redisUrl,
      '--prefix',
      ctx.prefix,
      '--queue',
      queueName,
      '--concurrency',
      String(opts.rawConcurrency),
    ],
    {},
  );
  ctx.children.add(worker);
  const queue = new Queue(queueName, {
    connection: failFastRedisOptions(ctx.config.redisUrl),
    prefix: ctx.prefix,
    streams: { events: { maxLen: EVENTS_MAX_LEN } },
  });
  const events = new QueueEvents(queueName, {
    connection: blockingRedisOptions(ctx.config.redisUrl),
    prefix: ctx.prefix,
  });
  const waiters = new Map<string, { done: (o: Outcome) => void; deadline: number }>();
  events.on('completed', ({ jobId }) => {
    const w = waiters.get(jobId);
    if (w) {
      waiters.delete(jobId);
      w.done(true);
    }
  });
  events.on('failed', ({ jobId, failedReason }) => {
    const w = waiters.get(jobId);
    if (w) {
      waiters.delete(jobId);
      w.done(`job failed: ${failedReason}`);
    }
  });
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [id, w] of waiters) {
      if (w.deadline < now) {
        waiters.delete(id);
        w.done('timeout (no completion event in 10 s)');
      }
    }
  }, 500);
  try {
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    await worker.waitFor('ready', () => worker.logs.includes('ready'));
    const run = `r${Date.now().toString(36)}`;
    const op = async (i: number): Promise<Outcome> => {
      const id = `${run}-${i}`;
      const done = new Promise<Outcome>((res) => waiters.set(id, { done: res, deadline: Date.now() + 10_000 }));
      try {
        await queue.add(JOB_NAMES.phone, lookupJob(id, PHONES[i % PHONES.length]!.phone), {
          ...DEFAULT_LOOKUP_JOB_OPTIONS,
          jobId: id,
        });
      } catch (err) {
        waiters.delete(id);
        throw err;
      }
      return done;
    };
    let a: Snapshot | undefined;
    let b: Snapshot | undefined;
    const procs = { 'noop-worker': worker.pid };
    const result = await drive(opts.warmupMs, opts.inflight, op, {
      atStart: async () => void (a = await ctx.acct.snapshot(procs)),
      atEnd: async () => void (b = await ctx.acct.snapshot(procs)),
    });
    const rss = procRssMiB(worker.pid);
    return { result, lines: ctx.acct.report(a!, b!, result.ok, 'bench (producer)'), rss };
  } finally {
    clearInterval(sweeper);
    await events.close().catch(() => undefined);
    await queue.close().catch(() => undefined);
    await worker.stop();
    ctx.children.delete(worker);
  }
}

interface E2eRun {
  concurrency: number;
  result: DriveResult;
  lines: string[];
  gatewayRss: number | null;
  workerRss: number | null;
}

/** (b) POST /v1/verify/phone through the real gateway and worker processes. */
async function e2ePhase(ctx: Ctx): Promise<{ runs: E2eRun[]; loadGen: string }> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const proxiesOf: Partial<Record<'gateway' | 'worker', { pg: CountingProxy; redis: CountingProxy }>> = {};
  const appEnv = async (role: 'gateway' | 'worker'): Promise<Record<string, string>> => {
    let dbUrl = ctx.dbUrl;
    let redisUrl = ctx.config.redisUrl;
    if (opts.countWire) {
      const pgTarget = new URL(ctx.dbUrl);
      const redisTarget = redisOptionsFromUrl(ctx.config.redisUrl);
      const pgProxy = await countingProxy('postgres', { host: pgTarget.hostname, port: Number(pgTarget.port || 5432) });
      const redisProxy = await countingProxy('redis', { host: redisTarget.host!, port: redisTarget.port! });
      ctx.proxies.push(pgProxy, redisProxy);
      proxiesOf[role] = { pg: pgProxy, redis: redisProxy };
      const p = new URL(ctx.dbUrl);
      p.hostname = '127.0.0.1';
      p.port = String(pgProxy.port);
      dbUrl = p.toString();
      const r = new URL(ctx.config.redisUrl);
      r.hostname = '127.0.0.1';
      r.port = String(redisProxy.port);
      redisUrl = r.toString();
    }
    return {
      DATABASE_URL: dbUrl,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: ctx.prefix,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
    };
  };
  const nodeArgs = (script: string) => [...opts.nodeArgs, ...(opts.profileDir ? ['-r', DIST.profileHook] : []), script];
  if (opts.profileDir) mkdirSync(opts.profileDir, { recursive: true });

  const gateway = new Child(
    'gateway',
    nodeArgs(DIST.gateway),
    {
      ...(await appEnv('gateway')),
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMIT_RPS: '1000000',
      RATE_LIMIT_BURST: '10000000',
      SIGNUP_CREDITS: '100000000',
      ...opts.gatewayEnv,
    },
    opts.profileDir ?? undefined,
  );
  ctx.children.add(gateway);
  const workerEnv = { ...(await appEnv('worker')), LOOKUP_QUEUES: 'phone', ...opts.workerEnv };
  const phoneQueue = new Queue(QUEUE_NAMES.phone, {
    connection: failFastRedisOptions(ctx.config.redisUrl),
    prefix: ctx.prefix,
  });
  const poster =
    opts.client === 'http'
      ? httpPoster(baseUrl, '/v1/verify/phone', opts.inflight)
      : fetchPoster(baseUrl, '/v1/verify/phone');
  const runs: E2eRun[] = [];
  try {
    await gateway.waitFor('ready', async () => (await httpJson(baseUrl, 'GET', '/health/ready')).status === 200);
    await phoneQueue.waitUntilReady();

    const keys: string[] = [];
    for (let i = 0; i < opts.accounts; i++) {
      const reg = await httpJson(baseUrl, 'POST', '/v1/auth/register', {
        email: `bench-${process.pid}-${i}@example.com`,
        password: 'bench-password-1234',
      });
      if (reg.status !== 201 || typeof reg.json['api_key'] !== 'string') {
        throw new Error(`register failed: ${reg.status} ${JSON.stringify(reg.json)}`);
      }
      keys.push(reg.json['api_key']);
    }
    const bodies = PHONES.map((p) =>
      Buffer.from(JSON.stringify(p.country ? { phone: p.phone, country: p.country } : { phone: p.phone })),
    );
    const op = async (i: number): Promise<Outcome> => {
      const res = await poster.post(bodies[i % bodies.length]!, keys[i % keys.length]!);
      if (res.status !== 200) {
        let code = '';
        try {
          code = String(
            (JSON.parse(res.text) as { error?: { code?: string } }).error?.code ??
              (JSON.parse(res.text) as { status?: string }).status,
          );
        } catch {
          code = res.text.slice(0, 60);
        }
        return `HTTP ${res.status} ${code}`;
      }
      // cheaper than JSON.parse on every answer, and exact for this envelope (status is the first key)
      return res.text.startsWith('{"status":"success"') ? true : `HTTP 200 but ${res.text.slice(0, 40)}`;
    };

    for (const concurrency of opts.workerConcurrency) {
      const worker = new Child(
        'worker',
        nodeArgs(DIST.worker),
        { ...workerEnv, WORKER_CONCURRENCY_PHONE: String(concurrency) },
        opts.profileDir ?? undefined,
      );
      ctx.children.add(worker);
      try {
        await worker.waitFor('consuming', async () => (await phoneQueue.getWorkersCount()) > 0);
        let a: Snapshot | undefined;
        let b: Snapshot | undefined;
        const procs = { gateway: gateway.pid, worker: worker.pid };
        if (opts.profileDir || opts.nodeArgs.length)
          console.log(`(e2e pids: gateway ${gateway.pid}, worker ${worker.pid})`);
        const result = await drive(opts.e2eWarmupMs, opts.inflight, op, {
          atStart: async () => {
            for (const p of Object.values(proxiesOf)) {
              p.pg.counts.reset();
              p.redis.counts.reset();
            }
            if (opts.profileDir) [gateway, worker].forEach((c) => c.signal('SIGWINCH'));
            a = await ctx.acct.snapshot(procs);
          },
          atEnd: async () => {
            b = await ctx.acct.snapshot(procs);
            if (opts.profileDir) [gateway, worker].forEach((c) => c.signal('SIGWINCH'));
          },
        });
        for (const c of [gateway, worker]) {
          if (!c.running)
            throw new Error(
              `${c.name} exited during the run (${String(c.proc.exitCode ?? c.proc.signalCode)}):\n${c.logs}`,
            );
        }
        const lines = ctx.acct.report(a!, b!, result.ok, `load generator (${opts.client})`);
        if (opts.countWire) lines.push(...wireLines(proxiesOf, result.ok));
        runs.push({
          concurrency,
          result,
          lines,
          gatewayRss: procRssMiB(gateway.pid),
          workerRss: procRssMiB(worker.pid),
        });
        if (opts.profileDir) await sleep(1500); // let the profiles be written
      } finally {
        await worker.stop();
        ctx.children.delete(worker);
      }
    }
  } finally {
    poster.close();
    await phoneQueue.close().catch(() => undefined);
    await gateway.stop();
    ctx.children.delete(gateway);
  }
  if (opts.profileDir) {
    console.log(
      `cpu profiles (measured window only) in ${opts.profileDir}: gateway ${gateway.pid}.cpuprofile, worker(s) by pid; summarise with node dist/bench/profile-summary.js <file>`,
    );
  }
  const loadGen =
    opts.client === 'http'
      ? 'load generator: node:http request() with a keep-alive Agent (maxSockets = in-flight), in the bench process'
      : 'load generator: global fetch (undici), in the bench process';
  return { runs, loadGen };
}

function wireLines(
  proxiesOf: Partial<Record<'gateway' | 'worker', { pg: CountingProxy; redis: CountingProxy }>>,
  done: number,
): string[] {
  const lines: string[] = [];
  for (const role of ['gateway', 'worker'] as const) {
    const p = proxiesOf[role];
    if (!p || done === 0) continue;
    const pg = p.pg.counts;
    const stmts = pg.total((k) => k.startsWith('statement'));
    const syncs = pg.total((k) => k.startsWith('sync'));
    const redisCmds = [...p.redis.counts.snapshot()].sort((x, y) => y[1] - x[1]);
    const redisTotal = redisCmds.reduce((s, [, v]) => s + v, 0);
    lines.push(
      `  wire (${role}): postgres statements/request ${(stmts / done).toFixed(2)} (syncs ${(syncs / done).toFixed(2)}); redis commands/request ${(redisTotal / done).toFixed(2)}`,
    );
    lines.push(`    redis (${role}): ${redisCmds.map(([k, v]) => `${k} ${(v / done).toFixed(2)}`).join(', ')}`);
  }
  return lines;
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (typeof address !== 'object' || address === null) throw new Error('no free port');
  return address.port;
}

// ---------------------------------------------------------------------------------------------
// Setup and teardown
// ---------------------------------------------------------------------------------------------

async function runCli(args: string[], env: Record<string, string>): Promise<void> {
  const child = new Child('cli', [DIST.cli, ...args], env);
  const code = await child.exited;
  if (code !== 0) throw new Error(`cli ${args.join(' ')} exited with ${String(code)}:\n${child.logs}`);
}

async function deleteKeys(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

async function main(): Promise<number> {
  if (opts.help) {
    console.log(USAGE);
    return 0;
  }
  const config = loadBenchConfig();
  const cpus = os.cpus();
  console.log(
    `machine: ${cpus.length} cpu(s) (${cpus[0]?.model.trim() ?? '?'}), node ${process.version}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `settings: ${opts.inflight} in flight, measured ${opts.measureMs / 1000} s after a warm-up of ${opts.warmupMs / 1000} s (raw) / ${opts.e2eWarmupMs / 1000} s (e2e); raw worker concurrency ${opts.rawConcurrency}; e2e worker concurrency ${opts.workerConcurrency.join(', ')}; ${opts.accounts} account(s); ${PHONES.length} distinct valid numbers from ${BASE_PHONES.length} bases in ${new Set(BASE_PHONES.map((p) => parsePhoneNumber(p.phone, p.country).country)).size} countries` +
      (opts.countWire ? '; COUNTING WIRE (proxies in the path: round trips only, throughput not comparable)' : '') +
      (opts.profileDir ? '; PROFILING (throughput not comparable)' : '') +
      (Object.keys(opts.pgSet).length ? `; EXPERIMENT: bench database SET ${JSON.stringify(opts.pgSet)}` : ''),
  );

  const dbName = `dossier_bench_${process.pid}`;
  const prefix = `bench-${process.pid}-${Date.now().toString(36)}`;
  const serverUrl = new URL(config.databaseUrl);
  const adminUrl = new URL(serverUrl);
  adminUrl.pathname = '/postgres';
  const dbUrlObj = new URL(serverUrl);
  dbUrlObj.pathname = `/${dbName}`;
  const admin = new Client({ connectionString: adminUrl.toString(), application_name: 'dossier-bench' });
  const redis = new IORedis({ ...redisOptionsFromUrl(config.redisUrl), maxRetriesPerRequest: 2, lazyConnect: true });
  const ctx: Ctx = {
    config,
    admin,
    redis,
    dbName,
    dbUrl: dbUrlObj.toString(),
    prefix,
    acct: new Accounting(admin, redis, dbName),
    children: new Set(),
    proxies: [],
  };
  let dbCreated = false;
  const onSignal = () => {
    interrupted = true;
    console.error('interrupted: cleaning up');
    for (const c of ctx.children) c.signal('SIGTERM');
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const started = performance.now();
  let exitCode = 0;
  try {
    await admin.connect();
    await redis.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    dbCreated = true;
    for (const [k, v] of Object.entries(opts.pgSet)) await admin.query(`ALTER DATABASE ${dbName} SET ${k} = ${v}`);
    await runCli(['db:migrate'], { DATABASE_URL: ctx.dbUrl });

    let raw: Awaited<ReturnType<typeof rawPhase>> | null = null;
    if (!opts.skipRaw) {
      raw = await rawPhase(ctx);
      console.log(
        `raw bullmq round trip (${opts.inflight} in flight, no-op worker concurrency ${opts.rawConcurrency}, own process): ${fmtRate(raw.result)}`,
      );
      for (const l of raw.lines) console.log(l);
      const rawErrors = [...raw.result.failed.values()].reduce((a, b) => a + b, 0);
      if (rawErrors > 0) console.log(`  failures: ${[...raw.result.failed].map(([k, v]) => `${k} ×${v}`).join(', ')}`);
      if (rawErrors / Math.max(1, rawErrors + raw.result.ok) > 0.01) exitCode = 1;
    }
    if (interrupted) throw new Error('interrupted');

    const e2e = await e2ePhase(ctx);
    console.log(e2e.loadGen);
    let best: E2eRun | null = null;
    for (const run of e2e.runs) {
      const errors = [...run.result.failed.values()].reduce((a, b) => a + b, 0);
      console.log(
        `end to end POST /v1/verify/phone (${opts.inflight} in flight, WORKER_CONCURRENCY_PHONE=${run.concurrency}): ${fmtRate(run.result)}  errors/non-200 ${errors}` +
          (errors ? ` (${[...run.result.failed].map(([k, v]) => `${k} ×${v}`).join(', ')})` : ''),
      );
      for (const l of run.lines) console.log(l);
      if (!best || run.result.ok > best.result.ok) best = run;
      if (errors / Math.max(1, errors + run.result.ok) > 0.01) exitCode = 1;
    }
    if (!best) throw new Error('no end-to-end run');
    if (e2e.runs.length > 1) console.log(`best end to end: WORKER_CONCURRENCY_PHONE=${best.concurrency}`);
    const fmt = (v: number | null) => (v === null ? '?' : `${v.toFixed(1)} MiB`);
    console.log(
      `gateway rss ${fmt(best.gatewayRss)}, worker rss ${fmt(best.workerRss)}${raw ? `, no-op worker rss ${fmt(raw.rss)}` : ''} (after the run; /proc/<pid>/status VmRSS)`,
    );
    console.log(`bench took ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const rawRate = raw ? raw.result.ok / raw.result.windowS : NaN;
    const e2eRate = best.result.ok / best.result.windowS;
    console.log(`ratio=${(e2eRate / rawRate).toFixed(2)}`);
  } catch (err) {
    console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    exitCode = 2;
  } finally {
    await Promise.all([...ctx.children].map((c) => c.stop()));
    await Promise.all(ctx.proxies.map((p) => p.close()));
    if (dbCreated) {
      await admin
        .query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
        .catch((e: unknown) => console.error(`could not drop ${dbName}: ${String(e)}`));
    }
    if (redis.status === 'ready') {
      await deleteKeys(redis, prefix).catch((e: unknown) =>
        console.error(`could not delete ${prefix}:* keys: ${String(e)}`),
      );
    }
    await admin.end().catch(() => undefined);
    redis.disconnect();
  }
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  },
);
