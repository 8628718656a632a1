/**
 * End to end through the real gateway and worker processes (bearer auth, rate limit, credit
 * reservation, the job, the providers, settlement in Postgres, the answer), one run per
 * --worker-concurrency value against the same gateway: `POST /v1/verify/phone` (libphonenumber), or
 * `POST /v1/verify/email` with the offline checks (syntax, lists, MX through a DNS server on loopback).
 */
import {
  assertRunning,
  registerAccounts,
  resetWire,
  startGateway,
  startProfiles,
  startWorker,
  stopApp,
  stopProfiles,
  type BenchGateway,
} from './apps';
import type { BenchContext } from './context';
import { procRss } from './cpu';
import {
  failureCount,
  fmtFailures,
  fmtRate,
  latencyOf,
  rate,
  tooManyFailures,
  type DriveResult,
  type Outcome,
} from './drive';
import { jobTimingLine } from './job-timings';
import { loadGenDescription, postOp, poster } from './load';
import { bestRun, measureWindow, runSweep, type Phase, type PhaseReport } from './phase';
import { PHONES } from './phones';
import { wireLines } from './wire-counter';
import { QUEUE_NAMES } from '@dossier/contracts';
import { FakeDns } from '@dossier/testing';

/** What a run sends, and the worker settings it needs (started before the gateway, stopped after). */
interface LookupLoad {
  kind: 'phone' | 'email';
  path: string;
  bodies: Buffer[];
  workerEnv: Record<string, string>;
  close(): Promise<void>;
}

const LOADS: Record<LookupLoad['kind'], () => Promise<LookupLoad>> = {
  phone: async () => ({
    kind: 'phone',
    path: '/v1/verify/phone',
    bodies: PHONES.map((p) =>
      Buffer.from(JSON.stringify(p.country ? { phone: p.phone, country: p.country } : { phone: p.phone })),
    ),
    workerEnv: {},
    close: async () => undefined,
  }),
  email: async () => {
    const dns = await FakeDns.start();
    const domains = Array.from({ length: 50 }, (_, i) => `company${i}.example`);
    for (const [i, domain] of domains.entries()) {
      dns.set(domain, { mx: [[10, `mx${i % 5}.${domain}`]] });
      // The mail host has an address, as a real one does (with none, the domain is undeliverable).
      dns.set(`mx${i % 5}.${domain}`, { a: ['192.0.2.25'] });
    }
    const locals = ['grace.hopper', 'alan.turing', 'info', 'ada', 'x+tag', 'noreply', 'k.johnson'];
    const bodies = domains.flatMap((d) => locals.map((l) => Buffer.from(JSON.stringify({ email: `${l}@${d}` }))));
    return {
      kind: 'email',
      path: '/v1/verify/email',
      bodies,
      workerEnv: { DNS_SERVERS: dns.server },
      close: () => dns.close(),
    };
  },
};

interface E2eRun {
  concurrency: number;
  result: DriveResult;
  lines: string[];
  rss: PhaseReport['rss'];
}

/**
 * End-to-end lookups of one kind as a phase; `inflight` defaults to --inflight. With `sweep`, one
 * window per --worker-concurrency value, the best making the phase's figure; without, the first value.
 */
export function e2eLookups(
  options: { key?: string; kind?: LookupLoad['kind']; inflight?: number; sweep?: boolean } = {},
): Phase {
  return {
    key: options.key ?? 'e2e',
    enabled: () => true,
    run: (ctx) => run(ctx, options.kind ?? 'phone', options.inflight ?? ctx.opts.inflight, options.sweep ?? false),
  };
}

async function run(
  ctx: BenchContext,
  kind: LookupLoad['kind'],
  inflight: number,
  sweep: boolean,
): Promise<PhaseReport> {
  const { opts } = ctx;
  const lookups = await LOADS[kind]();
  const gateway = await startGateway(ctx);
  const load = poster(opts.client, gateway.baseUrl, lookups.path, inflight);
  let runs: E2eRun[];
  try {
    const op = postOp(load, lookups.bodies, await registerAccounts(gateway, opts.accounts));
    runs = await runSweep(ctx, opts.workerConcurrency, sweep, (concurrency) =>
      measure(ctx, gateway, op, inflight, concurrency, lookups),
    );
  } finally {
    load.close();
    await stopApp(ctx, gateway);
    await lookups.close();
  }
  const PATH = lookups.path;
  const CONCURRENCY = `WORKER_CONCURRENCY_${kind.toUpperCase()}`;

  const lines: string[] = [];
  if (opts.profileDir) {
    lines.push(
      `cpu profiles (measured window only) in ${opts.profileDir}: gateway ${gateway.app.pid}.cpuprofile, worker(s) by pid; summarise with node dist/bench/profile-summary.js <file>`,
    );
  }
  lines.push(loadGenDescription(opts.client));
  for (const r of runs) {
    const errors = failureCount(r.result);
    lines.push(
      `end to end POST ${PATH} (${inflight} in flight, ${CONCURRENCY}=${r.concurrency}): ${fmtRate(r.result)}  errors/non-200 ${errors}` +
        (errors ? ` (${fmtFailures(r.result)})` : ''),
      ...r.lines,
    );
  }
  const best = bestRun(runs, 'end-to-end');
  if (runs.length > 1) lines.push(`best end to end: ${CONCURRENCY}=${best.concurrency}`);
  return {
    lines,
    rate: rate(best.result),
    latency: latencyOf(best.result),
    rss: best.rss,
    failed: runs.some((r) => tooManyFailures(r.result)),
  };
}

/** One measured window with a fresh worker at `concurrency`. */
async function measure(
  ctx: BenchContext,
  gateway: BenchGateway,
  op: (i: number) => Promise<Outcome>,
  inflight: number,
  concurrency: number,
  lookups: LookupLoad,
): Promise<E2eRun> {
  const { opts } = ctx;
  const worker = await startWorker(
    ctx,
    { LOOKUP_QUEUES: lookups.kind },
    { ...lookups.workerEnv, [`WORKER_CONCURRENCY_${lookups.kind.toUpperCase()}`]: String(concurrency) },
  );
  const apps = [gateway, worker];
  try {
    if (opts.profileDir || opts.nodeArgs.length)
      console.log(`(e2e pids: gateway ${gateway.app.pid}, worker ${worker.app.pid})`);
    const { result, lines } = await measureWindow(
      ctx,
      {
        warmupMs: opts.e2eWarmupMs,
        inflight,
        procs: { gateway: gateway.app.pid, worker: worker.app.pid },
        selfLabel: `load generator (${opts.client})`,
        atStart: () => {
          resetWire(apps);
          startProfiles(ctx, apps);
        },
        atEnd: () => stopProfiles(ctx, apps),
      },
      op,
    );
    assertRunning(apps);
    if (opts.countWire) lines.push(...wireLines(apps, result.ok));
    lines.push(await jobTimingLine(ctx, QUEUE_NAMES[lookups.kind]));
    const rss = apps.map(({ role, app }) => ({
      label: lookups.kind === 'phone' ? role : `${lookups.kind} ${role}`,
      rss: procRss(app.pid),
    }));
    return { concurrency, result, lines, rss };
  } finally {
    await stopApp(ctx, worker);
  }
}
