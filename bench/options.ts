/**
 * The bench's command line: every flag, its default and its check. A phase that needs a flag of its
 * own adds it here (one option and one field).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

export const USAGE = `usage: node dist/bench/main.js [--seconds 8] [--warmup 2] [--e2e-warmup 10] [--inflight 64] [--worker-concurrency 16,64]
       [--raw-concurrency 16,64] [--client http|fetch] [--accounts 1] [--gateway-env K=V …] [--worker-env K=V …]
       [--profile DIR] [--count-wire] [--skip-raw] [--only raw,e2e,…] [--pg-set setting=value …] [--node-arg=--opt …]
       [--latency-inflight 1000] [--latency-seconds 20] [--latency-concurrency default,64,…]
       [--latency-kind person|company]
       [--data [--data-people 1000000]]   (only the local index at scale: import, search latency, index size)`;

export interface BenchOptions {
  help: boolean;
  /** The measured window of every phase. */
  measureMs: number;
  /** Warm-up before the raw window. */
  warmupMs: number;
  /** Longer by default: at a few hundred req/s the apps' JIT is still compiling after 2 s (measured: ~30% more CPU per request than after 10 s). */
  e2eWarmupMs: number;
  inflight: number;
  /**
   * The end-to-end phase at --inflight runs once per value (a sweep) and its best run makes the ratio's
   * numerator; the other end-to-end phases use the first value. The default starts with the worker's
   * own default (WORKER_CONCURRENCY, 16).
   */
  workerConcurrency: number[];
  /** The same for the raw round trip's no-op worker: its best run is the ratio's denominator (ADR 0027). */
  rawConcurrency: number[];
  client: 'http' | 'fetch';
  accounts: number;
  gatewayEnv: Record<string, string>;
  workerEnv: Record<string, string>;
  profileDir: string | null;
  countWire: boolean;
  skipRaw: boolean;
  /** `--only`: run just these phases, by key (A/B experiments); empty runs them all. */
  only: string[];
  /** Experiments only: `ALTER DATABASE <bench db> SET k = v` (e.g. synchronous_commit=off); the server is untouched. */
  pgSet: Record<string, string>;
  /** Extra node options for the gateway and worker processes (e.g. --perf-basic-prof for `perf`). */
  nodeArgs: string[];
  /** The latency phase: person searches in flight, and its measured window (never shorter than --seconds). */
  latencyInflight: number;
  latencyMeasureMs: number;
  /**
   * The latency phase runs once per value: WORKER_CONCURRENCY_PERSON pinned to it, or null for the
   * worker's shipped default (`default`); the first run is the phase's figure.
   */
  latencyConcurrency: (number | null)[];
  /** The latency phase's searches: person (against PDL, its figure) or company (against GLEIF). */
  latencyKind: 'person' | 'company';
  /** `--data [N]`: only the local-index phase, with N demo people (0: not run). */
  dataPeople: number;
}

function positive(name: string, raw: string, min = 1): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min} (got ${raw})`);
  return n;
}

/** A comma-separated list of whole numbers >= 1. */
function positiveList(name: string, raw: string): number[] {
  return raw.split(',').map((s) => Math.floor(positive(name, s.trim())));
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

/** Parses `args` (default: the process's); throws with a message naming the flag. */
export function parseOptions(args: string[] = process.argv.slice(2)): BenchOptions {
  const { values: flags } = parseArgs({
    args,
    options: {
      seconds: { type: 'string', default: '8' },
      warmup: { type: 'string', default: '2' },
      'e2e-warmup': { type: 'string', default: '10' },
      inflight: { type: 'string', default: '64' },
      'worker-concurrency': { type: 'string', default: '16,64' },
      'raw-concurrency': { type: 'string', default: '16,64' },
      client: { type: 'string', default: 'http' },
      accounts: { type: 'string', default: '1' },
      'gateway-env': { type: 'string', multiple: true, default: [] },
      'worker-env': { type: 'string', multiple: true, default: [] },
      profile: { type: 'string' },
      data: { type: 'boolean', default: false },
      'data-people': { type: 'string', default: '1000000' },
      'latency-inflight': { type: 'string', default: '1000' },
      'latency-seconds': { type: 'string', default: '20' },
      'latency-concurrency': { type: 'string', default: 'default' },
      'latency-kind': { type: 'string', default: 'person' },
      'count-wire': { type: 'boolean', default: false },
      'skip-raw': { type: 'boolean', default: false },
      only: { type: 'string', default: '' },
      'pg-set': { type: 'string', multiple: true, default: [] },
      'node-arg': { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const client = flags.client;
  if (client !== 'http' && client !== 'fetch') throw new Error('--client is http or fetch');
  const latencyKind = flags['latency-kind'];
  if (latencyKind !== 'person' && latencyKind !== 'company') throw new Error('--latency-kind is person or company');
  const pgSet = envPairs('pg-set', flags['pg-set']);
  for (const [k, v] of Object.entries(pgSet)) {
    if (!/^[a-z_]+$/.test(k) || !/^[A-Za-z0-9_.]+$/.test(v)) throw new Error(`--pg-set ${k}=${v}: not a plain setting`);
  }
  return {
    help: flags.help,
    measureMs: positive('seconds', flags.seconds, 0.5) * 1000,
    warmupMs: positive('warmup', flags.warmup, 0) * 1000,
    e2eWarmupMs: positive('e2e-warmup', flags['e2e-warmup'], 0) * 1000,
    inflight: Math.floor(positive('inflight', flags.inflight)),
    workerConcurrency: positiveList('worker-concurrency', flags['worker-concurrency']),
    rawConcurrency: positiveList('raw-concurrency', flags['raw-concurrency']),
    client,
    accounts: Math.floor(positive('accounts', flags.accounts)),
    gatewayEnv: envPairs('gateway-env', flags['gateway-env']),
    workerEnv: envPairs('worker-env', flags['worker-env']),
    profileDir: flags.profile ? resolve(flags.profile) : null,
    countWire: flags['count-wire'],
    skipRaw: flags['skip-raw'],
    only: flags.only
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean),
    pgSet,
    nodeArgs: flags['node-arg'],
    latencyInflight: Math.floor(positive('latency-inflight', flags['latency-inflight'])),
    latencyMeasureMs:
      Math.max(positive('latency-seconds', flags['latency-seconds'], 0.5), Number(flags.seconds)) * 1000,
    latencyConcurrency: flags['latency-concurrency']
      .split(',')
      .map((s) => (s.trim() === 'default' ? null : Math.floor(positive('latency-concurrency', s.trim())))),
    latencyKind,
    dataPeople: flags.data ? Math.floor(positive('data-people', flags['data-people'], 100)) : 0,
  };
}
