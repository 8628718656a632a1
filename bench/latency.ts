/**
 * Slow upstreams hidden by concurrency (issue 43, ADR 0061): person searches (`POST /v1/search/person`, a
 * name and an e-mail) through one gateway and one worker with their shipped defaults, People Data Labs'
 * adapter pointed at a loopback fake that answers its documented format (fixtures/ok/found.json) after
 * 250 ms ± 20 %, --latency-inflight (1,000) in flight for --latency-seconds (20). PDL's shared rate limit
 * (its free plan's 100 a minute) is raised out of the way: the phase measures how much waiting the
 * service overlaps, not the vendor's plan. `--latency-kind company` runs company searches against GLEIF. Reports req/s, p50/p99, the apps' RSS at full load, where the
 * jobs spent their time, and every source's outcome counted over the whole run: a `timeout` or `skipped`
 * there is our own queueing cutting an upstream short, or its breaker opened by it. Then the same searches once
 * more with the upstream answering at once, the phase's reference (ADR 0073): what this machine's CPU allows them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { QUEUE_NAMES } from '@dossier/contracts';
import { FakeUpstream, REPO_ROOT } from '@dossier/testing';
import { assertRunning, registerAccounts, startGateway, startWorker, stopApp, type BenchApp } from './apps';
import type { BenchContext } from './context';
import { formatRss, procPeakRss, procRss } from './cpu';
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
import { errorCode, poster } from './load';
import { measureWindow, runSweep, type Phase, type PhaseReport } from './phase';

const UPSTREAM_MS = 250;
const JITTER = 0.2;
const SEARCHES = 500;
/** How often a search answered `202` is polled until it is done (each poll reads Postgres: not more often). */
const POLL_MS = 5000;

/** A vendor's documented answer to a match: the adapter's own fixture (`libs/providers/src/<id>/fixtures/ok`). */
function fixtureBody(provider: string, file: string): unknown {
  const path = join(REPO_ROOT, 'libs/providers/src', provider, 'fixtures/ok', file);
  return (JSON.parse(readFileSync(path, 'utf8')) as { body: unknown }).body;
}

/** What a run searches for, against which slow upstream (its fake answers `answer`), and the worker's settings for it. */
interface SlowLoad {
  kind: 'person' | 'company';
  path: string;
  upstream: string;
  answer: unknown;
  bodies: Buffer[];
  workerEnv(baseUrl: string): Record<string, string>;
}

/**
 * `person` (the phase's figure): People Data Labs, licensed, its free plan's 100 a minute raised; `company`
 * (`--latency-kind company`: issue 43's anchor): GLEIF, keyless, its published 60 a minute raised.
 */
const LOADS: Record<SlowLoad['kind'], () => SlowLoad> = {
  person: () => ({
    kind: 'person',
    path: '/v1/search/person',
    upstream: 'pdl',
    answer: fixtureBody('pdl', 'found.json'),
    bodies: Array.from({ length: SEARCHES }, (_, i) =>
      Buffer.from(JSON.stringify({ name: `Sean Thorne ${i}`, email: `sean.${i}@peopledatalabs.example` })),
    ),
    workerEnv: (url) => ({ PDL_API_KEY: 'bench-pdl-key', PDL_BASE_URL: url, PDL_RATE_LIMIT: '1000000/1s' }),
  }),
  company: () => ({
    kind: 'company',
    path: '/v1/search/company',
    upstream: 'gleif',
    answer: fixtureBody('gleif', 'found.json'),
    // The fixture's company (GLEIF's answer is checked against the name searched).
    bodies: [Buffer.from(JSON.stringify({ company_name: 'BP p.l.c.' }))],
    workerEnv: (url) => ({ GLEIF_ENABLED: 'true', GLEIF_BASE_URL: url, GLEIF_RATE_LIMIT: '1000000/1s' }),
  }),
};

interface SourceEnvelope {
  status?: string;
  sources?: { provider: string; outcome: string; detail?: string }[];
}

/** Every source's outcome over a run, `provider outcome` → count, and the first detail of each. */
class SourceTally {
  readonly counts = new Map<string, number>();
  readonly details = new Map<string, string>();

  constructor(private readonly upstream: string) {}

  add(text: string): boolean {
    const body = JSON.parse(text) as SourceEnvelope;
    for (const s of body.sources ?? []) {
      const key = `${s.provider} ${s.outcome}`;
      this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
      if (s.detail && !this.details.has(key)) this.details.set(key, s.detail);
    }
    return body.status === 'success';
  }

  /** `pdl found 1,234, local not_found 1,234, …`; the slow upstream's `timeout` and `skipped` always (ADR 0055). */
  lines(): string[] {
    const count = (k: string) => (this.counts.get(k) ?? 0).toLocaleString('en-US');
    const always = [`${this.upstream} timeout`, `${this.upstream} skipped`];
    const keys = [...new Set([...this.counts.keys(), ...always])].sort();
    return [
      `  sources over the whole run (warm-up included): ${keys.map((k) => `${k} ${count(k)}`).join(', ')}`,
      ...[...this.details].map(([k, d]) => `    first ${k}: ${d}`),
    ];
  }
}

interface LatencyRun {
  result: DriveResult;
  lines: string[];
  rss: PhaseReport['rss'];
}

export function latencyPhase(): Phase {
  return {
    key: 'latency',
    enabled: () => true,
    async run(ctx: BenchContext): Promise<PhaseReport> {
      const { opts } = ctx;
      const load = LOADS[opts.latencyKind]();
      const fake = await FakeUpstream.start({ record: false });
      let calls = 0;
      let upstreamMs = UPSTREAM_MS;
      fake.reply(() => {
        calls++;
        return { status: 200, body: load.answer, delayMs: upstreamMs * (1 - JITTER + 2 * JITTER * Math.random()) };
      });
      const counted = async (concurrency: number | null, label: string): Promise<LatencyRun> => {
        const before = calls;
        const run = await measure(ctx, load, fake.url, concurrency, label);
        run.lines.push(`  ${load.upstream} calls made: ${(calls - before).toLocaleString('en-US')} (one per search)`);
        return run;
      };
      let runs: LatencyRun[];
      let reference: LatencyRun;
      try {
        runs = await runSweep(ctx, opts.latencyConcurrency, true, (concurrency) => counted(concurrency, 'latency'));
        // The same searches with the upstream answering at once (ADR 0073): what the CPU allows them.
        upstreamMs = 0;
        reference = await counted(null, `latency reference (${load.upstream} answering at once)`);
      } finally {
        await fake.close();
      }
      const [first] = runs;
      if (!first) throw new Error('no latency run');
      return {
        lines: [
          `latency: ${opts.latencyInflight} ${load.kind} searches in flight, ${load.upstream} on loopback answering ` +
            `after ${UPSTREAM_MS} ms ± ${JITTER * 100} % (its rate limit out of the way); measured ${opts.latencyMeasureMs / 1000} s`,
          ...runs.flatMap((r) => r.lines),
          ...reference.lines,
        ],
        rate: rate(first.result),
        latency: latencyOf(first.result),
        ceiling: opts.latencyInflight / (UPSTREAM_MS / 1000),
        reference: rate(reference.result),
        rss: first.rss,
        failed: [...runs, reference].some((r) => tooManyFailures(r.result)),
      };
    },
  };
}

/**
 * A search answered `202` (not done within the default wait) is polled until it is, as an integrator would,
 * before its loop sends the next: the searches in flight stay --latency-inflight, not a backlog that grows
 * with every late answer. It counts as a failure (the answer was not synchronous); its sources are tallied.
 */
async function untilDone(baseUrl: string, key: string, accepted: string, tally: SourceTally): Promise<Outcome> {
  const { search_id: id } = JSON.parse(accepted) as { search_id: string };
  for (;;) {
    // No abort signal (a thousand loops would each add a listener): an interrupted bench stops the apps, and
    // the poll then fails.
    await sleep(POLL_MS);
    const res = await fetch(`${baseUrl}/v1/searches/${id}`, { headers: { authorization: `Bearer ${key}` } });
    const text = await res.text();
    if (res.status === 200 && !text.startsWith('{"status":"pending"')) {
      tally.add(text);
      return 'HTTP 202 pending (done after polling)';
    }
    if (res.status !== 200 && res.status !== 202) return `HTTP 202, then ${res.status} ${errorCode(text)}`;
  }
}

/**
 * One window through a fresh gateway and worker, the kind's worker concurrency pinned, or at its default (null);
 * `label` starts its lines.
 */
async function measure(
  ctx: BenchContext,
  load: SlowLoad,
  upstreamUrl: string,
  concurrency: number | null,
  label: string,
): Promise<LatencyRun> {
  const { opts } = ctx;
  const concurrencyKey = `WORKER_CONCURRENCY_${load.kind.toUpperCase()}`;
  const pinned: Record<string, string> = concurrency === null ? {} : { [concurrencyKey]: String(concurrency) };
  const apps: BenchApp[] = [];
  const tally = new SourceTally(load.upstream);
  try {
    const worker = await startWorker(ctx, {}, { ...load.workerEnv(upstreamUrl), ...pinned });
    apps.push(worker);
    const gateway = await startGateway(ctx);
    apps.push(gateway);
    const [key] = await registerAccounts(gateway, 1);
    const post = poster(opts.client, gateway.baseUrl, load.path, opts.latencyInflight);
    let atLoad: PhaseReport['rss'] = [];
    try {
      const { result, lines } = await measureWindow(
        ctx,
        {
          warmupMs: opts.e2eWarmupMs,
          measureMs: opts.latencyMeasureMs,
          inflight: opts.latencyInflight,
          procs: { gateway: gateway.app.pid, worker: worker.app.pid },
          selfLabel: `load generator and ${load.upstream} fake (${opts.client})`,
          atEnd: async () => {
            atLoad = apps.map(({ role, app }) => ({ label: `latency ${role}`, rss: procRss(app.pid) }));
          },
        },
        async (i) => {
          const res = await post.post(load.bodies[i % load.bodies.length]!, key!);
          if (res.status === 202) return untilDone(gateway.baseUrl, key!, res.text, tally);
          if (res.status !== 200) return `HTTP ${res.status} ${errorCode(res.text)}`;
          return tally.add(res.text) || `HTTP 200 but ${res.text.slice(0, 40)}`;
        },
      );
      assertRunning(apps);
      const errors = failureCount(result);
      return {
        result,
        rss: atLoad,
        lines: [
          `${label} POST ${load.path} (${opts.latencyInflight} in flight, ${concurrencyKey} ` +
            `${concurrency ?? 'at its default'}): ${fmtRate(result)}  ` +
            `errors/non-200 ${errors}${errors ? ` (${fmtFailures(result)})` : ''}`,
          ...lines,
          await jobTimingLine(ctx, QUEUE_NAMES[load.kind]),
          ...tally.lines(),
          `  rss at ${opts.latencyInflight} in flight: ` +
            atLoad.map(({ label, rss }) => `${label} ${formatRss(rss)}`).join(', ') +
            '; peak (VmHWM): ' +
            apps.map(({ role, app }) => `${role} ${procPeakRss(app.pid)?.toFixed(1) ?? '?'} MiB`).join(', '),
        ],
      };
    } finally {
      post.close();
    }
  } finally {
    for (const app of apps.reverse()) await stopApp(ctx, app);
  }
}
