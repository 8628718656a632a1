/**
 * End to end: `POST /v1/verify/phone` through the real gateway and worker processes (bearer auth,
 * rate limit, credit reservation, the job, libphonenumber, settlement in Postgres, the answer), one
 * run per --worker-concurrency value against the same gateway.
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
import { procRssMiB } from './cpu';
import { failureCount, fmtFailures, fmtRate, rate, tooManyFailures, type DriveResult, type Outcome } from './drive';
import { loadGenDescription, postOp, poster } from './load';
import { measureWindow, type Phase, type PhaseReport } from './phase';
import { PHONES } from './phones';
import { wireLines } from './wire-counter';

const PATH = '/v1/verify/phone';

interface E2eRun {
  concurrency: number;
  result: DriveResult;
  lines: string[];
  rss: PhaseReport['rss'];
}

/** The end-to-end phone lookups as a phase; `inflight` defaults to --inflight. */
export function e2eLookups(options: { key?: string; inflight?: number } = {}): Phase {
  return {
    key: options.key ?? 'e2e',
    enabled: () => true,
    run: (ctx) => run(ctx, options.inflight ?? ctx.opts.inflight),
  };
}

async function run(ctx: BenchContext, inflight: number): Promise<PhaseReport> {
  const { opts } = ctx;
  const gateway = await startGateway(ctx);
  const load = poster(opts.client, gateway.baseUrl, PATH, inflight);
  const runs: E2eRun[] = [];
  try {
    const bodies = PHONES.map((p) =>
      Buffer.from(JSON.stringify(p.country ? { phone: p.phone, country: p.country } : { phone: p.phone })),
    );
    const op = postOp(load, bodies, await registerAccounts(gateway, opts.accounts));
    for (const concurrency of opts.workerConcurrency) {
      if (ctx.signal.aborted) break;
      runs.push(await measure(ctx, gateway, op, inflight, concurrency));
    }
  } finally {
    load.close();
    await stopApp(ctx, gateway);
  }

  const lines: string[] = [];
  if (opts.profileDir) {
    lines.push(
      `cpu profiles (measured window only) in ${opts.profileDir}: gateway ${gateway.app.pid}.cpuprofile, worker(s) by pid; summarise with node dist/bench/profile-summary.js <file>`,
    );
  }
  lines.push(loadGenDescription(opts.client));
  let best: E2eRun | null = null;
  for (const r of runs) {
    const errors = failureCount(r.result);
    lines.push(
      `end to end POST ${PATH} (${inflight} in flight, WORKER_CONCURRENCY_PHONE=${r.concurrency}): ${fmtRate(r.result)}  errors/non-200 ${errors}` +
        (errors ? ` (${fmtFailures(r.result)})` : ''),
      ...r.lines,
    );
    if (!best || r.result.ok > best.result.ok) best = r;
  }
  if (!best) throw new Error('no end-to-end run');
  if (runs.length > 1) lines.push(`best end to end: WORKER_CONCURRENCY_PHONE=${best.concurrency}`);
  return {
    lines,
    rate: rate(best.result),
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
): Promise<E2eRun> {
  const { opts } = ctx;
  const worker = await startWorker(ctx, { LOOKUP_QUEUES: 'phone' }, { WORKER_CONCURRENCY_PHONE: String(concurrency) });
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
    const rss = apps.map(({ role, app }) => ({ label: role, mib: procRssMiB(app.pid) }));
    return { concurrency, result, lines, rss };
  } finally {
    await stopApp(ctx, worker);
  }
}
