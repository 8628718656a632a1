import { untilAborted, type LookupKind } from '@dossier/domain';
import type { LookupInputByKind, ResultItemByKind, SourceReport } from '@dossier/contracts';
import { ProviderError, outcomeOfError, type Provider } from '@dossier/providers';

export interface FanOutResult<K extends LookupKind> {
  items: ResultItemByKind[K][];
  sources: SourceReport[];
  /** Providers that ran and failed (error, timeout, rate_limited, blocked). */
  failures: { provider: string; error: unknown }[];
  /** Providers that ran (configured). */
  ran: number;
}

export interface FanOutOptions {
  settings: Readonly<Record<string, string | undefined>>;
  /** Overall deadline for the lookup; each provider gets min(its own timeout, what is left). */
  deadlineMs: number;
  onError?: (provider: string, error: unknown) => void;
}

/**
 * Runs every provider for the kind in parallel with its own deadline, allSettled semantics: one failing
 * upstream never sinks the lookup, and each outcome is reported in `sources`.
 */
export async function fanOut<K extends LookupKind>(
  kind: K,
  input: LookupInputByKind[K],
  providers: readonly Provider<K>[],
  options: FanOutOptions,
): Promise<FanOutResult<K>> {
  const started = Date.now();
  const settled = await Promise.allSettled(
    providers.map(async (provider) => {
      const t0 = Date.now();
      if (!provider.isConfigured(options.settings)) {
        return { provider, answer: null, tookMs: 0 };
      }
      const budget = Math.max(1, Math.min(provider.defaultTimeoutMs, options.deadlineMs - (t0 - started)));
      const signal = AbortSignal.timeout(budget);
      try {
        const answer = await untilAborted(provider.lookup(kind, input, { signal, settings: options.settings }), signal);
        return { provider, answer, tookMs: Date.now() - t0 };
      } catch (error) {
        throw Object.assign(new Error('provider failed'), { provider, error, tookMs: Date.now() - t0 });
      }
    }),
  );

  const result: FanOutResult<K> = { items: [], sources: [], failures: [], ran: 0 };
  for (const s of settled) {
    if (s.status === 'fulfilled') {
      const { provider, answer, tookMs } = s.value;
      if (!answer) {
        result.sources.push({ provider: provider.id, outcome: 'skipped', took_ms: 0 });
        continue;
      }
      result.ran += 1;
      result.items.push(...answer.items);
      result.sources.push({ provider: provider.id, outcome: answer.outcome, took_ms: tookMs });
    } else {
      const { provider, error, tookMs } = s.reason as { provider: Provider<K>; error: unknown; tookMs: number };
      result.ran += 1;
      result.failures.push({ provider: provider.id, error });
      result.sources.push({ provider: provider.id, outcome: outcomeOf(error), took_ms: tookMs });
      options.onError?.(provider.id, error);
    }
  }
  result.items.sort((a, b) => scoreOf(b) - scoreOf(a));
  return result;
}

function outcomeOf(error: unknown): SourceReport['outcome'] {
  if (error instanceof ProviderError) return outcomeOfError(error.code);
  // AbortSignal.timeout() rejects with a DOMException, which is not always `instanceof Error`: look at the name.
  const name = typeof error === 'object' && error !== null ? (error as { name?: unknown }).name : undefined;
  if (name === 'TimeoutError' || name === 'AbortError') return 'timeout';
  return 'error';
}

function scoreOf(item: object): number {
  const s = (item as { match_score?: unknown }).match_score;
  return typeof s === 'number' ? s : 0;
}
