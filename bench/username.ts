/**
 * Username presence over the shipped site list (ADR 0049), through the real gateway and worker: every site of
 * Sherlock's list copied onto its own loopback server (LoopbackSites), answering after 100–800 ms, 5% of them
 * never answering, 3% with a profile. Each search is one `POST /v1/search/person` with the default wait (no
 * `Prefer`), one at a time: how long its answer took, its status (`200`, or `202` when the check outlived the
 * wait — then polled until it is done), the size of its body, and its sites' outcomes counted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, LoopbackSites, waitFor } from '@dossier/testing';
import { registerAccounts, startGateway, startWorker, stopApp, type BenchApp } from './apps';
import type { BenchContext } from './context';
import type { Phase, PhaseReport } from './phase';

const HANDLE = 'ghopper42';
const SEARCHES = 3;

interface Envelope {
  status: string;
  search_id: string;
  sources?: { provider: string; outcome: string }[];
  source_summary?: Record<string, number>;
}

/** The requests of one measured search, and what each asks for. */
const RUNS: { label: string; body: Record<string, unknown> }[] = [
  ...Array.from({ length: SEARCHES }, (_, i) => ({ label: `all sites #${i + 1}`, body: { username: HANDLE } })),
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
        const env = { USERNAME_SITES_FILE: file };
        apps.push(await startWorker(ctx, env, env));
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
          const res = await api.post<Envelope>('/v1/search/person', run.body, { key: key! });
          const answered = performance.now() - started;
          let done = res;
          if (res.status === 202) {
            done = await waitFor(
              () => api.get<Envelope>(`/v1/searches/${res.body.search_id}`, { key: key! }),
              (r) => r.status !== 202,
              { timeoutMs: 120_000, intervalMs: 250, what: 'the username search to finish' },
            );
          }
          const finished = performance.now() - started;
          const bytes = Buffer.byteLength(JSON.stringify(done.body));
          took.push(answered);
          const counts: Record<string, number> = {};
          for (const s of done.body.sources ?? []) {
            if (s.provider.startsWith('site:')) counts[s.outcome] = (counts[s.outcome] ?? 0) + 1;
          }
          lines.push(
            `username ${run.label}: ${res.status} after ${(answered / 1000).toFixed(2)} s` +
              (res.status === 202 ? `, done after ${(finished / 1000).toFixed(2)} s` : '') +
              `, answer ${(bytes / 1024).toFixed(1)} KiB; sites asked ${sites.requested.length - asked}; ` +
              Object.entries(counts)
                .map(([outcome, n]) => `${outcome} ${n}`)
                .join(', '),
          );
        }
        const scripted = (plan: 'found' | 'not_found' | 'hang') => [...sites.plans.values()].filter((p) => p === plan);
        lines.unshift(
          `username: ${sites.plans.size} loopback sites (${scripted('found').length} with the profile, ` +
            `${scripted('hang').length} hanging), 100–800 ms each, ${RUNS.length} searches one at a time, default wait`,
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
