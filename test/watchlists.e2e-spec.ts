import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { personRowOf } from '@dossier/domain';
import { openDataSource, writePeople } from '@dossier/persistence';
import { Api, REPO_ROOT, Stack, ledgerState, ownDatabase, runCli, switchDatabase } from '@dossier/testing';

type Hit = { list: string; entry_id: string; listed_name: string; programme: string | null; matched_on: string[] };
type Envelope = {
  status: string;
  results: { id: string; full_name?: string; name?: string; sources: string[]; watchlist_hits?: Hit[] }[];
  credits_remaining: number;
  sources: { provider: string; outcome: string; detail?: string }[];
  error?: { code: string; details?: { field: string }[] };
};

const FIXTURES = join(REPO_ROOT, 'libs/providers/src/watchlists/fixtures/ok');

/**
 * Sanctions screening end to end (ADR 0064): lists imported with the CLI, `POST /v1/screen` and person searches
 * through the gateway and a worker as processes, on a database of the file's own (no other test sees its lists).
 */
describe('watchlist screening (CLI import, gateway + worker)', () => {
  let stack: Stack;
  let api: Api;
  let db: DataSource;
  let dropDatabase: () => Promise<void>;
  let restoreDatabase: () => void;
  const env = { DATABASE_URL: '' };

  beforeAll(async () => {
    const database = await ownDatabase('watchlists_e2e');
    env.DATABASE_URL = database.url;
    dropDatabase = database.drop;
    restoreDatabase = switchDatabase(database.url);
    db = await openDataSource({ url: database.url, poolSize: 1, applicationName: 'watchlists-e2e' });
    await writePeople(db, [
      personRowOf({
        source: 'crm',
        external_id: 'rk',
        full_name: 'Rustam Karimov',
        emails: ['rustam.karimov@example.com'],
        locations: [{ city: 'Tashkent', region: null, country: 'UZ' }],
        birth_year: 1961,
      }),
    ]);
    stack = await Stack.start({ label: 'watchlists', env: { SIGNUP_CREDITS: '10' } });
    api = new Api(stack.baseUrl);
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    await db?.destroy();
    restoreDatabase?.();
    await dropDatabase?.();
  });

  it('says skipped while no list is imported, and charges nothing', async () => {
    const { key } = await api.register(10);
    const res = await api.post<Envelope>('/v1/screen', { name: 'Rustam Karimov' }, { key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', results: [], credits_remaining: 10 });
    expect(res.body.sources).toEqual([
      expect.objectContaining({
        provider: 'watchlists',
        outcome: 'skipped',
        detail: expect.stringContaining('import'),
      }),
    ]);
  });

  it('screens a name against the imported lists: a hit is a charged result, no hit is free', async () => {
    for (const [list, file] of [
      ['ofac-sdn', 'ofac-sdn.xml'],
      ['un-sc', 'un-consolidated.xml'],
    ] as const) {
      const imported = await runCli(['watchlists:import', list, join(FIXTURES, file)], env);
      expect(imported).toMatchObject({ code: 0 });
    }
    const { key, accountId } = await api.register(10);
    const hit = await api.post<Envelope>(
      '/v1/screen',
      { name: 'Rostam Qarimov', birth_year: 1961, country: 'UZ' },
      { key },
    );
    expect(hit.status).toBe(200);
    expect(hit.body.sources).toEqual([{ provider: 'watchlists', outcome: 'found', took_ms: expect.any(Number) }]);
    expect(hit.body.results).toHaveLength(1);
    expect(hit.body.results[0]).toMatchObject({
      full_name: 'KARIMOV, Rustam Bakhtiyorovich',
      sources: ['watchlists'],
      watchlist_hits: [
        {
          list: 'ofac-sdn',
          entry_id: '9001',
          listed_name: 'QARIMOV, Rostam',
          programme: 'SDGT; IRGC',
          match_score: 1,
          matched_on: ['name', 'birth_year', 'country'],
        },
      ],
    });
    expect(hit.body.credits_remaining).toBe(9);

    const born = await api.post<Envelope>('/v1/screen', { name: 'Rustam Karimov', birth_year: 1990 }, { key });
    expect(born.body).toMatchObject({ results: [], credits_remaining: 9 });
    expect(born.body.sources).toEqual([expect.objectContaining({ provider: 'watchlists', outcome: 'not_found' })]);

    const company = await api.post<Envelope>(
      '/v1/screen',
      { name: 'Crescent Relief and Trading', type: 'company' },
      { key },
    );
    expect(company.body.results).toEqual([
      expect.objectContaining({
        name: 'CRESCENT RELIEF & TRADING COMPANY',
        watchlist_hits: [expect.objectContaining({ list: 'un-sc', entry_id: 'QDe.990', programme: 'Al-Qaida' })],
      }),
    ]);
    const ledger = await ledgerState(accountId);
    expect(ledger).toMatchObject({ balance: 8, captures: 2, ledger_sum: 8 });

    const refused = await api.post<Envelope>(
      '/v1/screen',
      { name: 'Acme', type: 'company', birth_year: 1961 },
      { key },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error?.details?.map((d) => d.field)).toEqual(['birth_year']);
  });

  it('puts a hit on the person a search finds, and suppression does not hide it', async () => {
    const { key } = await api.register(10);
    const search = () => api.post<Envelope>('/v1/search/person', { name: 'Rustam Karimov' }, { key });
    const found = await search();
    expect(found.body.results).toEqual([
      expect.objectContaining({
        full_name: 'Rustam Karimov',
        sources: ['local', 'watchlists'],
        watchlist_hits: [expect.objectContaining({ entry_id: '9001', matched_on: ['name', 'birth_year', 'country'] })],
      }),
    ]);
    // Found by his e-mail alone, his record is screened by its own name (ADR 0071), charged as any lookup once.
    const byEmail = await api.post<Envelope>('/v1/search/person', { email: 'rustam.karimov@example.com' }, { key });
    expect(byEmail.body.results).toEqual([
      expect.objectContaining({
        full_name: 'Rustam Karimov',
        sources: ['local', 'watchlists'],
        watchlist_hits: [expect.objectContaining({ entry_id: '9001', matched_on: ['name', 'birth_year', 'country'] })],
      }),
    ]);
    expect(byEmail.body.sources).toContainEqual(expect.objectContaining({ provider: 'watchlists', outcome: 'found' }));
    expect(byEmail.body.credits_remaining).toBe(found.body.credits_remaining - 1);
    const suppressed = await runCli(['suppress:add', '--name', 'Rustam Karimov', '--birth-year', '1961'], env);
    expect(suppressed).toMatchObject({ code: 0 });
    const after = await search();
    // The opted-out subject's own record is gone; what the list says of the listed person is not.
    expect(after.body.results).toEqual([
      expect.objectContaining({
        full_name: 'KARIMOV, Rustam Bakhtiyorovich',
        sources: ['watchlists'],
        watchlist_hits: [expect.objectContaining({ entry_id: '9001' })],
      }),
    ]);
    expect(JSON.stringify(after.body)).not.toContain('rustam.karimov@example.com');
  });
});
