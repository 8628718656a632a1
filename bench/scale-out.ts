/**
 * Scale-out: two gateways and two phone workers on the same queues, the load split evenly over the
 * gateways (64 in flight in all). On a two-core machine more processes cannot add cores: the figure
 * shows what running several of each costs (more processes sharing the cores, each completion routed
 * to its gateway), not the gain a deployment with more machines would see.
 */
import os from 'node:os';
import {
  assertRunning,
  registerAccounts,
  startGateway,
  startWorker,
  stopApp,
  type BenchApp,
  type BenchGateway,
} from './apps';
import type { BenchContext } from './context';
import { failureCount, fmtFailures, fmtRate, rate, tooManyFailures } from './drive';
import { postOp, poster, type Poster } from './load';
import { measureWindow, type Phase, type PhaseReport } from './phase';
import { PHONES } from './phones';

const GATEWAYS = 2;
const WORKERS = 2;
const PATH = '/v1/verify/phone';

export function scaleOut(): Phase {
  return { key: 'scale-out', enabled: () => true, run };
}

async function run(ctx: BenchContext): Promise<PhaseReport> {
  const { opts } = ctx;
  const gateways: BenchGateway[] = [];
  const workers: BenchApp[] = [];
  const loads: Poster[] = [];
  try {
    const concurrency = String(opts.workerConcurrency[0] ?? opts.inflight);
    for (let i = 0; i < WORKERS; i++) {
      workers.push(await startWorker(ctx, { LOOKUP_QUEUES: 'phone' }, { WORKER_CONCURRENCY_PHONE: concurrency }));
    }
    for (let i = 0; i < GATEWAYS; i++) gateways.push(await startGateway(ctx));
    const keys = await registerAccounts(gateways[0]!, opts.accounts);
    const bodies = PHONES.map((p) =>
      Buffer.from(JSON.stringify(p.country ? { phone: p.phone, country: p.country } : { phone: p.phone })),
    );
    const ops = gateways.map((g) => {
      const load = poster(opts.client, g.baseUrl, PATH, Math.ceil(opts.inflight / GATEWAYS));
      loads.push(load);
      return postOp(load, bodies, keys);
    });
    const procs = Object.fromEntries([
      ...gateways.map((g, i) => [`gateway ${i + 1}`, g.app.pid] as const),
      ...workers.map((w, i) => [`worker ${i + 1}`, w.app.pid] as const),
    ]);
    const { result, lines } = await measureWindow(
      ctx,
      { warmupMs: opts.e2eWarmupMs, inflight: opts.inflight, procs, selfLabel: `load generator (${opts.client})` },
      (i) => ops[i % GATEWAYS]!(Math.floor(i / GATEWAYS)),
    );
    assertRunning([...gateways, ...workers]);
    const errors = failureCount(result);
    return {
      lines: [
        `scale-out POST ${PATH} through ${GATEWAYS} gateways and ${WORKERS} workers on this machine (${opts.inflight} in flight in all, split evenly): ${fmtRate(result)}  errors/non-200 ${errors}` +
          (errors ? ` (${fmtFailures(result)})` : ''),
        ...lines,
        `  (on ${os.cpus().length} cores more processes add no cores: this shows their overhead, not the gain of more machines)`,
      ],
      rate: rate(result),
      rss: [],
      failed: tooManyFailures(result),
    };
  } finally {
    for (const load of loads) load.close();
    for (const app of [...gateways, ...workers]) await stopApp(ctx, app);
  }
}
