/**
 * The provider fan-out's parallelism: one lookup fanned out to three upstreams on loopback that each
 * answer after 50 ms, through the real upstream guards (breaker, retries, the Redis token bucket),
 * one lookup at a time. In parallel it takes about 50 ms; in series it would take about 150 ms. The
 * same lookup against one such upstream is measured alongside as the floor.
 */
import { Registry } from 'prom-client';
import { RedisTokenBucket } from '@dossier/runtime';
import { request, type Provider } from '@dossier/providers';
import { FakeUpstream, personItem } from '@dossier/testing';
import { FanOut } from '../apps/worker/src/fan-out/fan-out';
import { ProviderMetrics } from '../apps/worker/src/fan-out/provider-metrics';
import { UpstreamGuards } from '../apps/worker/src/fan-out/upstream-guards';
import type { BenchContext } from './context';
import { drive, percentile, type DriveResult } from './drive';
import type { Phase, PhaseReport } from './phase';

const UPSTREAM_DELAY_MS = 50;

function upstreamProvider(id: string, baseUrl: string): Provider<'person'> {
  const item = () =>
    personItem({ id: `per_${id}`, full_name: 'Grace Hopper', first_name: 'Grace', last_name: 'Hopper', sources: [id] });
  return {
    id,
    kinds: ['person'],
    configKeys: [],
    defaultTimeoutMs: 5000,
    transport: 'http',
    rateLimit: { max: 1_000_000, perMs: 1000 },
    isConfigured: () => true,
    async lookup(_kind, _input, ctx) {
      await request(id, { url: `${baseUrl}/${id}` }, ctx.signal);
      return { outcome: 'found', items: [item()] };
    },
  };
}

export function fanOutParallelism(): Phase {
  return {
    key: 'fanout',
    enabled: () => true,
    async run(ctx: BenchContext): Promise<PhaseReport> {
      const fake = await FakeUpstream.start();
      try {
        fake.reply({ status: 200, body: { ok: true }, delayMs: UPSTREAM_DELAY_MS });
        const metrics = new ProviderMetrics(new Registry());
        const guards = new UpstreamGuards(
          new RedisTokenBucket(ctx.redis),
          ctx.prefix,
          { breakerThreshold: 5, halfOpenAfterMs: 30_000, maxAttempts: 2 },
          metrics,
        );
        const fan = new FanOut(guards, metrics, {});
        const three = ['upstream-a', 'upstream-b', 'upstream-c'].map((id) => upstreamProvider(id, fake.url));
        const measure = (providers: Provider<'person'>[]): Promise<DriveResult> =>
          drive(
            { warmupMs: 1000, measureMs: Math.min(ctx.opts.measureMs, 4000), inflight: 1, signal: ctx.signal },
            async () => {
              const result = await fan.run('person', { name: 'Grace Hopper' }, providers, null);
              return result.sources.every((s) => s.outcome === 'found') || `sources ${JSON.stringify(result.sources)}`;
            },
            { atStart: async () => undefined, atEnd: async () => undefined },
          );
        const one = await measure(three.slice(0, 1));
        const all = await measure(three);
        const fmt = (r: DriveResult) =>
          `p50 ${percentile(r.latencies, 50).toFixed(1)} ms  p99 ${percentile(r.latencies, 99).toFixed(1)} ms`;
        const p50 = percentile(all.latencies, 50);
        return {
          lines: [
            `fan-out of three ${UPSTREAM_DELAY_MS} ms loopback upstreams (1 in flight, through the upstream guards): ${fmt(all)}` +
              ` — one such upstream alone: ${fmt(one)}; in series it would be ≥ ${3 * UPSTREAM_DELAY_MS} ms` +
              ` (${p50 < 2 * UPSTREAM_DELAY_MS ? 'parallel' : 'NOT PARALLEL'})`,
          ],
          rate: all.ok / all.windowS,
          rss: [],
          failed: all.failed.size > 0 || one.failed.size > 0,
        };
      } finally {
        await fake.close();
      }
    },
  };
}
