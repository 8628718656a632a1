import type { PersonResultItem } from '@dossier/contracts';
import { ProviderError, type Provider, type ProviderAnswer } from '@dossier/providers';
import { fanOut } from './fan-out';

function person(id: string, score: number): PersonResultItem {
  return {
    id,
    full_name: 'Jane Doe',
    first_name: 'Jane',
    last_name: 'Doe',
    aliases: [],
    emails: [],
    phones: [],
    usernames: [],
    locations: [],
    age: null,
    birth_year: null,
    match_score: score,
    matched_on: ['name'],
    sources: [id],
  };
}

function provider(
  id: string,
  lookup: Provider<'person'>['lookup'],
  opts: { configured?: boolean; timeoutMs?: number } = {},
): Provider<'person'> {
  return {
    id,
    kinds: ['person'],
    configKeys: [],
    defaultTimeoutMs: opts.timeoutMs ?? 1000,
    isConfigured: () => opts.configured ?? true,
    lookup,
  };
}

const found = (...items: PersonResultItem[]): Promise<ProviderAnswer<'person'>> =>
  Promise.resolve({ outcome: 'found', items });

describe('fanOut', () => {
  it('runs providers in parallel, merges results best first and reports every outcome', async () => {
    const result = await fanOut(
      'person',
      { name: 'Jane Doe' },
      [
        provider('low', () => found(person('low', 0.2))),
        provider('high', () => found(person('high', 0.9), person('mid', 0.5))),
        provider('empty', () => Promise.resolve({ outcome: 'not_found', items: [] })),
        provider('off', () => found(person('off', 1)), { configured: false }),
        provider('limited', () => Promise.reject(new ProviderError('rate_limited', '429 from upstream'))),
        provider('walled', () => Promise.reject(new ProviderError('blocked', 'WAF page'))),
        provider('broken', () => Promise.reject(new Error('socket hang up'))),
      ],
      { settings: {}, deadlineMs: 5000 },
    );
    expect(result.items.map((i) => i.id)).toEqual(['high', 'mid', 'low']);
    expect(Object.fromEntries(result.sources.map((s) => [s.provider, s.outcome]))).toEqual({
      low: 'found',
      high: 'found',
      empty: 'not_found',
      off: 'skipped',
      limited: 'rate_limited',
      walled: 'blocked',
      broken: 'error',
    });
    expect(result.ran).toBe(6);
    expect(result.failures.map((f) => f.provider).sort()).toEqual(['broken', 'limited', 'walled']);
  });

  it('gives each provider its own deadline, even one that ignores its signal', async () => {
    const started = Date.now();
    const result = await fanOut(
      'person',
      { name: 'x' },
      [
        provider('slow', () => new Promise(() => undefined), { timeoutMs: 50 }),
        provider('fast', () => found(person('fast', 0.5))),
      ],
      { settings: {}, deadlineMs: 5000 },
    );
    expect(Date.now() - started).toBeLessThan(4000);
    expect(result.sources.find((s) => s.provider === 'slow')?.outcome).toBe('timeout');
    expect(result.items.map((i) => i.id)).toEqual(['fast']);
  });

  it('passes the settings and a live signal to providers', async () => {
    let seen: { settings: unknown; aborted: boolean } | undefined;
    await fanOut(
      'person',
      { name: 'x' },
      [
        provider('spy', (_kind, _input, ctx) => {
          seen = { settings: ctx.settings, aborted: ctx.signal.aborted };
          return Promise.resolve({ outcome: 'not_found', items: [] });
        }),
      ],
      { settings: { SPY_API_KEY: 'k' }, deadlineMs: 5000 },
    );
    expect(seen).toEqual({ settings: { SPY_API_KEY: 'k' }, aborted: false });
  });
});
