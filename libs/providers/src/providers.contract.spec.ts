import { LOOKUP_KINDS, type LookupKind } from '@dossier/domain';
import { RESULT_SCHEMAS, type LookupInputByKind } from '@dossier/contracts';
import { ProviderError, type Provider, type ProviderContext, type ProviderErrorCode } from './provider';
import { PROVIDERS } from './registry';

/**
 * The contract every registered provider keeps. It iterates over the registry, so a new provider
 * is held to it by adding its line to `PROVIDERS` — nothing to add here unless a kind is added.
 */

const SAMPLE_INPUTS: { [K in LookupKind]: LookupInputByKind[K] } = {
  phone: { phone: '+14155552671' },
  email: { email: 'someone@example.com' },
  person: { name: 'Jane Doe' },
  company: { company_name: 'Acme' },
};

const MAX_TIMEOUT_MS = 30_000;
const UPSTREAM_FAILURES: readonly ProviderErrorCode[] = ['rate_limited', 'blocked', 'timeout', 'unavailable'];

function context(signal: AbortSignal): ProviderContext {
  return { signal, settings: {} };
}

function lookup(provider: Provider, kind: LookupKind, signal: AbortSignal) {
  return provider.lookup(kind, SAMPLE_INPUTS[kind], context(signal));
}

const runnable = PROVIDERS.filter((p) => p.isConfigured({})).flatMap((p) =>
  p.kinds.map((kind) => [`${p.id} ${kind}`, p, kind] as const),
);

describe('provider registry', () => {
  it('is not empty', () => {
    expect(PROVIDERS.length).toBeGreaterThan(0);
  });

  it('has unique ids', () => {
    const ids = PROVIDERS.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe.each(PROVIDERS.map((p) => [p.id, p] as const))('provider %s', (_id, provider) => {
  it('has a non-empty lower-case id', () => {
    expect(provider.id).toMatch(/^[a-z0-9_-]+$/);
  });

  it('serves at least one known kind, each once', () => {
    expect(provider.kinds.length).toBeGreaterThan(0);
    expect(new Set(provider.kinds).size).toBe(provider.kinds.length);
    for (const kind of provider.kinds) expect(LOOKUP_KINDS).toContain(kind);
  });

  it(`has a positive default timeout of at most ${MAX_TIMEOUT_MS} ms`, () => {
    expect(Number.isFinite(provider.defaultTimeoutMs)).toBe(true);
    expect(provider.defaultTimeoutMs).toBeGreaterThan(0);
    expect(provider.defaultTimeoutMs).toBeLessThanOrEqual(MAX_TIMEOUT_MS);
  });

  it('names its config keys in UPPER_SNAKE_CASE', () => {
    for (const key of provider.configKeys) expect(key).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
  });

  it('answers isConfigured({}) with a boolean', () => {
    expect(typeof provider.isConfigured({})).toBe('boolean');
  });
});

// Providers that run without settings; the others are reported as `skipped` and are not called.
describe('lookup contract', () => {
  if (runnable.length === 0) {
    it.todo('no registered provider runs without settings');
    return;
  }

  describe.each(runnable)('%s', (_name, provider, kind) => {
    it('rejects with a timeout when the deadline has already passed', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(lookup(provider, kind, controller.signal)).rejects.toMatchObject({
        name: 'ProviderError',
        code: 'timeout',
      });
    });

    it('answers a sample input with a known outcome and items it is credited in', async () => {
      let answer: Awaited<ReturnType<typeof lookup>>;
      try {
        answer = await lookup(provider, kind, AbortSignal.timeout(provider.defaultTimeoutMs));
      } catch (error) {
        // A provider that needs the network may fail here (tests run without it), but only the way
        // an upstream fails: a ProviderError. `unrecoverable` would mean it claims to be configured
        // with empty settings and cannot run with them.
        expect(error).toBeInstanceOf(ProviderError);
        expect(UPSTREAM_FAILURES).toContain((error as ProviderError).code);
        return;
      }
      expect(['found', 'not_found', 'unknown']).toContain(answer.outcome);
      expect(Array.isArray(answer.items)).toBe(true);
      if (answer.outcome === 'found') expect(answer.items.length).toBeGreaterThan(0);
      if (answer.outcome === 'not_found') expect(answer.items).toEqual([]);
      for (const item of answer.items) {
        // The one result contract: the schema the OpenAPI document is generated from.
        const checked = RESULT_SCHEMAS[kind].safeParse(item);
        expect(checked.success ? [] : checked.error.issues).toEqual([]);
        expect(Object.keys(item).sort()).toEqual(Object.keys(RESULT_SCHEMAS[kind].shape).sort());
        expect(item.sources).toContain(provider.id);
      }
    });
  });
});
