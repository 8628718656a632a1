import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { LOOKUP_KINDS, type LookupKind, type SourceOutcome } from '@dossier/domain';
import {
  PROVIDER_ITEM_SCHEMAS,
  type LookupInputByKind,
  type ProviderItemByKind,
  type SourceReport,
} from '@dossier/contracts';
import {
  Blackhole,
  FOREIGN_404S,
  FakeDns,
  FakeUpstream,
  LOOPBACK_PROVIDER_ENV,
  REPO_ROOT,
  refusedUrl,
  type FakeAnswer,
} from '@dossier/testing';
import { DEFAULT_CONNECT_TIMEOUT_MS, useUpstreamNetwork } from './http';
import { API_OUTCOMES, CONTRACT_CASES, type ContractCase, type HttpContract } from './http-contract';
import { ProviderError, outcomeOfError, unguardedContext, type Provider } from './provider';
import { PROVIDERS } from './registry';

/**
 * The contract every registered provider keeps. It iterates over the registry (and, for HTTP providers,
 * over the `<id>.contract.ts` beside each), so a new provider is held to it by its folder and its
 * registry line — nothing to add here.
 */

const SAMPLE_INPUTS: { [K in LookupKind]: LookupInputByKind[K] } = {
  phone: { phone: '+14155552671' },
  email: { email: 'someone@example.com' },
  person: { name: 'Jane Doe' },
  company: { company_name: 'Acme' },
};
const MAX_TIMEOUT_MS = 60_000;
const PROVIDERS_DIR = join(REPO_ROOT, 'libs/providers/src');

/**
 * Items that keep the one result contract: the kind's schema, exactly its fields, crediting the provider —
 * or, for a provider that reports several upstreams itself, the ones among them that found something.
 */
function expectContractItems<K extends LookupKind>(
  kind: K,
  items: ProviderItemByKind[K][],
  providerId: string,
  reports?: SourceReport[],
): void {
  const credited = reports ? reports.filter((r) => r.outcome === 'found').map((r) => r.provider) : [providerId];
  for (const item of items) {
    const checked = PROVIDER_ITEM_SCHEMAS[kind].safeParse(item);
    expect(checked.success ? [] : checked.error.issues).toEqual([]);
    // Every field of the schema but those it leaves optional (`watchlist_hits`: only a screened item has it).
    const shape = PROVIDER_ITEM_SCHEMAS[kind].shape as Record<string, { safeParse(v: unknown): { success: boolean } }>;
    const required = Object.keys(shape).filter((k) => !shape[k]!.safeParse(undefined).success);
    expect(
      Object.keys(item)
        .filter((k) => required.includes(k) || !(k in shape))
        .sort(),
    ).toEqual(required.sort());
    expect(item.sources.length).toBeGreaterThan(0);
    for (const source of item.sources) expect(credited).toContain(source);
  }
}

describe('provider registry', () => {
  it('is not empty, with unique ids', () => {
    expect(PROVIDERS.length).toBeGreaterThan(0);
    const ids = PROVIDERS.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe.each(PROVIDERS.map((p) => [p.id, p] as const))('provider %s', (_id, provider) => {
  it('has a lower-case id, known kinds, a bounded timeout, UPPER_SNAKE_CASE keys and a transport', () => {
    expect(provider.id).toMatch(/^[a-z0-9_-]+$/);
    expect(provider.kinds.length).toBeGreaterThan(0);
    expect(new Set(provider.kinds).size).toBe(provider.kinds.length);
    for (const kind of provider.kinds) expect(LOOKUP_KINDS).toContain(kind);
    expect(provider.defaultTimeoutMs).toBeGreaterThan(0);
    expect(provider.defaultTimeoutMs).toBeLessThanOrEqual(MAX_TIMEOUT_MS);
    for (const key of provider.configKeys) expect(key).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
    expect(['none', 'database', 'dns', 'smtp', 'http']).toContain(provider.transport);
  });

  it("stays on loopback with the test harness's settings (off, or pointed at 127.0.0.1)", () => {
    // Offline and database providers reach nothing beyond this process and the service's own Postgres.
    if (['none', 'database'].includes(provider.transport) || provider.isConfigured(LOOPBACK_PROVIDER_ENV) !== true)
      return;
    const addresses = provider.configKeys.filter((k) => /_(BASE_URL|SERVERS)$/.test(k));
    expect(addresses.length).toBeGreaterThan(0);
    for (const key of addresses)
      expect([key, LOOPBACK_PROVIDER_ENV[key]]).toEqual([
        key,
        expect.stringMatching(/^(https?:\/\/)?127\.0\.0\.1[:/]/),
      ]);
  });

  it('refuses at boot, naming the setting, a base URL that is not an http(s) URL and a switch other than true/false', () => {
    for (const key of provider.configKeys.filter((k) => k.endsWith('_BASE_URL'))) {
      expect(() => provider.validateSettings?.({ [key]: 'api.example.com/v1' })).toThrow(new RegExp(`^${key}: `));
      expect(() => provider.validateSettings?.({ [key]: 'https://api.example.com/v1' })).not.toThrow();
      // Credentials in a base URL: fetch refuses such a URL on every call, and the message never repeats them.
      for (const bad of [
        'https://user:s3cr3t@api.example.com/v1',
        'https://api.example.com/v1?api_key=s3cr3t',
        'htps://user:s3cr3t@api.example.com',
        'https://user:s3cr3t@api.example.com:99999',
      ]) {
        expect(() => provider.validateSettings?.({ [key]: bad })).toThrow(new RegExp(`^${key}: `));
        try {
          provider.validateSettings?.({ [key]: bad });
        } catch (error) {
          expect((error as Error).message).not.toContain('s3cr3t');
        }
      }
    }
    for (const key of provider.configKeys.filter((k) => k.endsWith('_ENABLED'))) {
      for (const bad of ['FALSE', '0', 'no'])
        expect(() => provider.validateSettings?.({ [key]: bad })).toThrow(new RegExp(`^${key}: `));
      for (const good of ['true', 'false']) expect(() => provider.validateSettings?.({ [key]: good })).not.toThrow();
    }
  });

  it('answers isConfigured({}) with true or the reason it is skipped', () => {
    const configured = provider.isConfigured({});
    expect(configured === true || (typeof configured === 'string' && configured.length > 0)).toBe(true);
  });
});

// Every provider that is not an HTTP client (those meet a hanging fake below) stops at its deadline.
describe.each(
  PROVIDERS.filter((p) => p.transport !== 'http').flatMap((p) =>
    p.kinds.map((kind) => [`${p.id} ${kind}`, p, kind] as const),
  ),
)('provider %s', (_name, provider, kind) => {
  it('rejects with a timeout when the deadline has already passed', async () => {
    const controller = new AbortController();
    controller.abort();
    const ctx = unguardedContext(controller.signal, LOOPBACK_PROVIDER_ENV);
    await expect(provider.lookup(kind, SAMPLE_INPUTS[kind], ctx)).rejects.toMatchObject({
      name: 'ProviderError',
      code: 'timeout',
    });
  });
});

// Offline providers run here as they are; the others are run against fakes (below, or in their own specs).
describe.each(
  PROVIDERS.filter((p) => p.transport === 'none').flatMap((p) =>
    p.kinds.map((kind) => [`${p.id} ${kind}`, p, kind] as const),
  ),
)('offline provider %s', (_name, provider, kind) => {
  it('answers a sample input with a known outcome and items that keep the result contract', async () => {
    const answer = await provider.lookup(kind, SAMPLE_INPUTS[kind], unguardedContext(AbortSignal.timeout(5000)));
    expect(['found', 'not_found', 'unknown']).toContain(answer.outcome);
    if (answer.outcome === 'found') expect(answer.items.length).toBeGreaterThan(0);
    if (answer.outcome === 'not_found') expect(answer.items).toEqual([]);
    expectContractItems(kind, answer.items, provider.id);
  });
});

// ---- DNS and SMTP checks: no vendor to fake, so the harness points their resolvers where nothing answers ----

describe.each(
  PROVIDERS.filter((p) => p.transport === 'dns' || p.transport === 'smtp').flatMap((p) =>
    p.kinds.map((kind) => [`${p.id} ${kind}`, p, kind] as const),
  ),
)('network check %s', (_name, provider, kind) => {
  it('reads its resolvers from a setting that the harness points at 127.0.0.1, even while it is off', () => {
    // So a test that switches it on (an SMTP probe with SMTP_PROBE=true) still cannot leave loopback.
    const resolvers = provider.configKeys.filter((k) => k.endsWith('_SERVERS'));
    expect(resolvers.length).toBeGreaterThan(0);
    for (const key of resolvers)
      expect([key, LOOPBACK_PROVIDER_ENV[key]]).toEqual([key, expect.stringMatching(/^127\.0\.0\.1:/)]);
  });

  it("says it could not look when DNS does not answer (the harness's resolver): unknown, never found or not_found", async () => {
    if (provider.isConfigured(LOOPBACK_PROVIDER_ENV) !== true) return; // off in the harness: its own spec covers it
    const answer = await provider.lookup(
      kind,
      SAMPLE_INPUTS[kind],
      unguardedContext(AbortSignal.timeout(10_000), LOOPBACK_PROVIDER_ENV),
    );
    expect(answer.outcome).toBe('unknown');
    expect(answer.detail).toEqual(expect.any(String));
    expectContractItems(kind, answer.items, provider.id);
  });
});

// ---- HTTP providers, each against a loopback fake of its vendor -------------------------------------

const contractFiles = readdirSync(PROVIDERS_DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(PROVIDERS_DIR, d.name, `${d.name}.contract.ts`)))
  .map((d) => d.name);

const httpProviders = PROVIDERS.filter((p) => p.transport === 'http');

/** The connect timeout of the `unreachable` case: far below its call's deadline (5 s). */
const UNREACHABLE_CONNECT_MS = 300;
/** A port that never completes a connection, and a resolver that answers NXDOMAIN for every name. */
let hole: Blackhole;
let lying: FakeDns;
beforeAll(async () => {
  [hole, lying] = await Promise.all([Blackhole.start(), FakeDns.lying()]);
});
afterAll(async () => {
  await Promise.all([hole?.close(), lying?.close()]);
});

it('every HTTP provider has a contract (and every contract a registered provider)', async () => {
  const contracts = await Promise.all(contractFiles.map(loadContract));
  expect(contracts.map((c) => c.provider.id).sort()).toEqual(httpProviders.map((p) => p.id).sort());
  for (const c of contracts) expect(PROVIDERS).toContain(c.provider as Provider);
});

async function loadContract(folder: string): Promise<HttpContract> {
  const module = (await import(join(PROVIDERS_DIR, folder, `${folder}.contract.ts`))) as { contract: HttpContract };
  return module.contract;
}

function fixture(folder: string, file: string): FakeAnswer {
  const path = join(PROVIDERS_DIR, folder, 'fixtures', file);
  if (!existsSync(path)) throw new Error(`${folder}: fixture ${file} is missing`);
  return JSON.parse(readFileSync(path, 'utf8')) as FakeAnswer;
}

const FIXTURE_OF: Partial<Record<ContractCase, string>> = {
  found: 'ok/found.json',
  'not-found': 'ok/not-found.json',
  '429': 'not-ok/429.json',
  '401': 'not-ok/401.json',
  '403': 'not-ok/403.json',
  '500': 'not-ok/500.json',
  malformed: 'not-ok/malformed.json',
};

describe.each(contractFiles)('HTTP provider %s against a fake of its vendor', (folder) => {
  let fake: FakeUpstream;
  let contract: HttpContract;

  beforeAll(async () => {
    contract = await loadContract(folder);
    fake = await FakeUpstream.start();
  });
  afterAll(async () => {
    await fake?.close();
  });

  /** The outcome the provider reports for what the fake answers: thrown, answered, or its one report. */
  async function observe(kase: ContractCase, page?: FakeAnswer) {
    const file = FIXTURE_OF[kase];
    if (file) fake.reply(fixture(folder, file));
    if (kase === 'hang') fake.reply({ hang: true });
    if (page) fake.reply(page);
    const base =
      {
        refused: await refusedUrl(),
        unreachable: hole.url,
        // The fake, by a name only the lying resolver is asked about.
        'lying-dns': `http://api.vendor.test:${new URL(fake.url).port}`,
      }[kase as string] ?? fake.url;
    useUpstreamNetwork({
      connectTimeoutMs: kase === 'unreachable' ? UNREACHABLE_CONNECT_MS : DEFAULT_CONNECT_TIMEOUT_MS,
      dnsServers: kase === 'lying-dns' ? [lying.server] : null,
    });
    const signal = AbortSignal.timeout(kase === 'hang' ? 300 : 5000);
    const ctx = unguardedContext(signal, contract.settings(base));
    const started = Date.now();
    try {
      const answer = await contract.provider.lookup(contract.kind, contract.input, ctx);
      const report = answer.reports?.length === 1 ? answer.reports[0]! : undefined;
      const outcome = (report?.outcome ?? answer.outcome) as SourceOutcome;
      return { outcome, answer, report, error: undefined, ms: Date.now() - started };
    } catch (error) {
      expect(error).toBeInstanceOf(ProviderError);
      return {
        outcome: outcomeOfError((error as ProviderError).code),
        answer: undefined,
        report: undefined,
        error: error as ProviderError,
        ms: Date.now() - started,
      };
    } finally {
      useUpstreamNetwork({ connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS, dnsServers: null });
    }
  }

  it.each(CONTRACT_CASES)('maps the case "%s" onto its outcome', async (kase) => {
    const expected = contract.outcomes?.[kase] ?? API_OUTCOMES[kase];
    // Every page a proxy or a wrong base URL may answer (FOREIGN_404S) meets the same expectation.
    for (const page of kase === 'foreign-404' ? FOREIGN_404S : [undefined]) await check(kase, expected, page);
  });

  it('checks at start-up that its upstream answers (checkReach), without a key, and says why when it does not', async () => {
    // Licensed upstreams are not called unasked; the username sites are each input's own: nothing to check.
    if (!contract.provider.checkReach) return;
    fake.reply({ status: 401, body: '' });
    fake.requests.length = 0;
    // Its key, where it takes one, is set: the check must not send it.
    const keys = contract.provider.configKeys.filter((k) => /_(API_KEY|TOKEN)$/.test(k));
    const reach = (base: string) =>
      contract.provider.checkReach!(
        { ...contract.settings(base), ...Object.fromEntries(keys.map((k) => [k, 'the-secret-key'])) },
        AbortSignal.timeout(5000),
      );
    await expect(reach(fake.url)).resolves.toBe(true);
    expect(fake.requests.map((r) => r.method)).toEqual(['HEAD']);
    expect(JSON.stringify(fake.requests)).not.toContain('the-secret-key');
    useUpstreamNetwork({ connectTimeoutMs: UNREACHABLE_CONNECT_MS, dnsServers: null });
    try {
      await expect(reach(hole.url)).resolves.toMatch(/^no connection to 127\.0\.0\.1 within 300 ms/);
    } finally {
      useUpstreamNetwork({ connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS, dnsServers: null });
    }
  });

  async function check(kase: ContractCase, expected: SourceOutcome, page: FakeAnswer | undefined): Promise<void> {
    const asked = fake.requests.length;
    const seen = await observe(kase, page);
    expect([kase, page, seen.outcome]).toEqual([kase, page, expected]);
    if (kase === 'found') {
      expect(seen.answer!.items.length).toBeGreaterThan(0);
      expectContractItems(contract.kind, seen.answer!.items, contract.provider.id, seen.answer!.reports);
      contract.checkFound?.(seen.answer!.items);
      const request = fake.requests.at(-1)!;
      contract.checkRequest?.(request);
      contract.checkRequests?.(fake.requests.slice(asked));
    }
    if (kase === 'not-found') expect(seen.answer?.items ?? []).toEqual([]);
    // An upstream that cannot be reached costs the connect timeout, not the call's 5 s.
    if (kase === 'unreachable') expect(seen.ms).toBeLessThan(UNREACHABLE_CONNECT_MS + 1000);
    // The operator is told where to look: the setting that points the provider at its vendor.
    if (kase === 'foreign-404' && expected === 'error')
      expect(seen.error?.message ?? seen.report?.detail).toMatch(
        new RegExp(
          `\\(is (${contract.provider.configKeys.filter((k) => k.endsWith('_BASE_URL')).join('|')}) right\\?\\)`,
        ),
      );
    const retryAfter = fixture(folder, 'not-ok/429.json').headers?.['retry-after'];
    if (kase === '429' && retryAfter) {
      if (seen.error) expect(seen.error.retryAfterMs).toBe(Number(retryAfter) * 1000);
      if (seen.report) expect(seen.report.detail).toContain(`retry after ${retryAfter}s`);
    }
    // A failure is never "nothing found", and its message never carries the URL (it may hold a key).
    const failure = seen.error?.message ?? seen.report?.detail;
    if (failure !== undefined) {
      expect(failure).not.toContain(fake.url);
      expect(failure).not.toMatch(/https?:\/\//);
    }
  }
});
