/**
 * Username presence over the shipped site list (ADR 0049), through the real gateway and worker: every site of
 * Sherlock's list copied onto its own loopback server (LoopbackSites), answering after 100–800 ms, 5% of them
 * never answering, 3% with a profile. Each search is one `POST /v1/search/person`, one at a time (RUNS: the
 * default wait, shorter ones, `top`, `respond-async`): how long its answer took, its status (`200`, or `202` —
 * then polled until it is done, noting when its progress first showed), the size of its body, and its sites'
 * outcomes counted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, LoopbackSites, waitFor } from '@dossier/testing';
import { registerAccounts, startGateway, startWorker, stopApp, type BenchApp } from './apps';
import type { BenchContext } from './context';
import type { Phase, PhaseReport } from './phase';

const HANDLE = 'ghopper42';

interface Envelope {
  status: string;
  search_id: string;
  sources?: { provider: string; outcome: string }[];
  source_summary?: Record<string, number>;
  progress?: { results: { accounts: unknown[] }[]; sources_pending: number };
}

/** The searches measured, one at a time, in this order: what each asks for and how long it waits. */
const RUNS: { label: string; body: Record<string, unknown>; prefer?: string }[] = [
  { label: 'all sites, default wait #1', body: { username: HANDLE } },
  { label: 'all sites, default wait #2', body: { username: HANDLE } },
  { label: 'all sites, default wait #3', body: { username: HANDLE } },
  { label: 'all sites, wait=5', body: { username: HANDLE }, prefer: 'wait=5' },
  { label: 'all sites, wait=3', body: { username: HANDLE }, prefer: 'wait=3' },
  { label: 'top 50, default wait', body: { username: HANDLE, top: 50 } },
  { label: 'all sites, respond-async', body: { username: HANDLE }, prefer: 'respond-async' },
];

export function usernamePresence(): Phase {
  return {
    key: 'username',
    enabled: () => true,
    async run(ctx: BenchContext): Promise<PhaseReport> {
      const sites = ctx.own(
        await LoopbackSites.start({
          handle: HANDLE,
          seed: 49,
          latencyMs: [100, 800],
          hangShare: 0.05,
          foundShare: 0.03,
        }),
      );
      const dir = mkdtempSync(join(tmpdir(), 'dossier-bench-username-'));
      const apps: BenchApp[] = [];
      try {
        const file = join(dir, 'sites.json');
        writeFileSync(file, JSON.stringify(sites.list));
        // Measured per search: a hanging site's breaker would open after PROVIDER_BREAKER_THRESHOLD searches.
        apps.push(await startWorker(ctx, {}, { USERNAME_SITES_FILE: file, PROVIDER_BREAKER_THRESHOLD: '1000' }));
        const gateway = await startGateway(ctx);
        apps.push(gateway);
        const [key] = await registerAccounts(gateway, 1);
        const api = new Api(gateway.baseUrl);
        const lines: string[] = [];
        const took: number[] = [];
        for (const run of RUNS) {
          if (ctx.signal.aborted) break;
          const asked = sites.requested.length;
          const started = performance.now();
          const headers: Record<string, string> = run.prefer ? { prefer: run.prefer } : {};
          const res = await api.post<Envelope>('/v1/search/person', run.body, { key: key!, headers });
          const answered = performance.now() - started;
          let done = res;
          const seen: string[] = [];
          if (res.status === 202) {
            let firstProgress: number | null = null;
            done = await waitFor(
              async () => {
                const r = await api.get<Envelope>(`/v1/searches/${res.body.search_id}`, { key: key! });
                if (r.body.progress && firstProgress === null) {
                  firstProgress = performance.now() - started;
                  const accounts = r.body.progress.results[0]?.accounts.length ?? 0;
                  seen.push(
                    `first progress after ${(firstProgress / 1000).toFixed(2)} s (${accounts} accounts, ` +
                      `${r.body.progress.sources_pending} sites pending)`,
                  );
                }
                return r;
              },
              (r) => r.status !== 202,
              { timeoutMs: 120_000, intervalMs: 250, what: 'the username search to finish' },
            );
          }
          const finished = performance.now() - started;
          if (run.prefer !== 'respond-async') took.push(answered);
          const bytes = Buffer.byteLength(JSON.stringify(done.body));
          const counts: Record<string, number> = {};
          for (const s of done.body.sources ?? []) {
            if (s.provider.startsWith('site:')) counts[s.outcome] = (counts[s.outcome] ?? 0) + 1;
          }
          lines.push(
            `username ${run.label}: ${res.status} after ${(answered / 1000).toFixed(2)} s` +
              (res.status === 202 ? `, done after ${(finished / 1000).toFixed(2)} s` : '') +
              seen.map((s) => `, ${s}`).join('') +
              `, answer ${(bytes / 1024).toFixed(1)} KiB; sites asked ${sites.requested.length - asked}; ` +
              Object.entries(counts)
                .map(([outcome, n]) => `${outcome} ${n}`)
                .join(', '),
          );
        }
        const scripted = (plan: 'found' | 'not_found' | 'hang') => [...sites.plans.values()].filter((p) => p === plan);
        lines.unshift(
          `username: ${sites.plans.size} loopback sites (${scripted('found').length} with the profile, ` +
            `${scripted('hang').length} hanging), 100–800 ms each; searches one at a time`,
        );
        const mean = took.reduce((a, b) => a + b, 0) / Math.max(1, took.length);
        return {
          lines,
          rate: took.length > 0 ? 1000 / mean : NaN,
          rss: [],
          failed: false,
        };
      } finally {
        for (const app of apps.reverse()) await stopApp(ctx, app);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
