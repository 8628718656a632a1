import type { DataSource } from 'typeorm';
import { watchlistRowOf, type WatchlistEntry, type WatchlistIndex } from '@dossier/domain';
import { WatchlistRepository, openDataSource, replaceWatchlist } from '@dossier/persistence';
import { ownDatabase, personItem } from '@dossier/testing';
import type { CompanyResultItem, PersonResultItem, SourceReport } from '@dossier/contracts';
import { attachWatchlistHits } from './attach-hits';

const entry = (over: Partial<WatchlistEntry>): WatchlistEntry => ({
  list: 'ofac-sdn',
  entry_id: '1',
  entity_type: 'person',
  name: 'x',
  aliases: [],
  programmes: ['SDGT'],
  birth_years: [],
  countries: [],
  ...over,
});
const LISTED = [
  entry({ entry_id: '7001', name: 'BOUT, Viktor Anatolijevitch', aliases: ['BUT, Victor'], birth_years: [1967] }),
  entry({ entry_id: '7002', entity_type: 'organisation', name: 'AIR CESS LIMITED', countries: ['AE'] }),
];

const byEmail = (full_name: string, over: Partial<PersonResultItem> = {}): PersonResultItem =>
  personItem({ id: `per_${full_name}`, full_name, matched_on: ['email'], emails: ['x@example.com'], ...over });
const company = (name: string, matched_on: CompanyResultItem['matched_on']): CompanyResultItem => ({
  id: `com_${name}`,
  name,
  registration_number: '4711',
  jurisdiction: null,
  country: 'AE',
  domain: 'aircess.example',
  status: null,
  incorporated_on: null,
  address: null,
  industry: null,
  match_score: 1,
  matched_on,
  sources: ['local'],
  officers: null,
  controllers: null,
  parents: null,
  field_sources: { name: [{ provider: 'local', record_id: 'crm:1' }] },
});
const local: SourceReport[] = [{ provider: 'local', outcome: 'found', took_ms: 3 }];
const screeners = new Set(['watchlists']);

/**
 * Screening the items an answer found by something else than their name (ADR 0071), on the real Postgres:
 * one statement for all of them, the report honest about it.
 */
describe('attachWatchlistHits: items not found by their name (real Postgres)', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>> | undefined;
  let db: DataSource;
  let index: WatchlistIndex;
  const calls = { one: 0, many: 0 };

  beforeAll(async () => {
    database = await ownDatabase('attach_hits');
    db = await openDataSource({ url: database.url, poolSize: 2, applicationName: 'attach-hits' });
    const repository = new WatchlistRepository(db);
    index = {
      lists: () => repository.lists(),
      findEntries: (s, limit) => (calls.one++, repository.findEntries(s, limit)),
      findEntriesOfMany: (s, limit) => (calls.many++, repository.findEntriesOfMany(s, limit)),
    };
  }, 120_000);
  beforeEach(() => Object.assign(calls, { one: 0, many: 0 }));
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('screens nothing while no list is imported: no watchlist_hits, no report', async () => {
    const out = await attachWatchlistHits('person', [byEmail('Viktor Bout')], local, screeners, index);
    expect(out.items[0]!.watchlist_hits).toBeUndefined();
    expect(out.sources).toEqual(local);
    expect(calls).toEqual({ one: 0, many: 1 });
  });

  describe('with a list imported', () => {
    beforeAll(async () => {
      await replaceWatchlist(db, 'ofac-sdn', 'test', (write) => write(LISTED.map(watchlistRowOf)));
    });

    it('puts the hit on a person found by e-mail whose name is listed, the other screened clean, in one query', async () => {
      const items = [
        byEmail('Viktor But', { birth_year: 1967 }),
        byEmail('Ada Lovelace'),
        byEmail('Victor Bout', { birth_year: 1990 }),
      ];
      const out = await attachWatchlistHits('person', items, local, screeners, index);
      expect(calls).toEqual({ one: 0, many: 1 });
      expect(out.items.map((i) => [i.full_name, i.sources, i.watchlist_hits?.map((h) => h.entry_id)])).toEqual([
        ['Viktor But', ['local', 'watchlists'], ['7001']],
        ['Ada Lovelace', ['local'], []],
        // born 23 years off the list's year: a namesake
        ['Victor Bout', ['local'], []],
      ]);
      expect(out.items[0]!.watchlist_hits![0]).toMatchObject({
        list: 'ofac-sdn',
        programme: 'SDGT',
        matched_on: ['name', 'birth_year'],
      });
      expect(out.sources).toEqual([
        ...local,
        { provider: 'watchlists', outcome: 'found', took_ms: expect.any(Number) },
      ]);
    });

    it("screens no item past the search's limit (the best first): it stays unscreened", async () => {
      const items = [byEmail('Ada Lovelace'), byEmail('Viktor But'), byEmail('Victor Bout')];
      const out = await attachWatchlistHits('person', items, local, screeners, index, 2);
      expect(out.items.map((i) => i.watchlist_hits?.length)).toEqual([0, 1, undefined]);
      expect(calls).toEqual({ one: 0, many: 1 });
    });

    it('reports not_found when no item is listed', async () => {
      const out = await attachWatchlistHits('person', [byEmail('Ada Lovelace')], local, screeners, index);
      expect(out.items[0]!.watchlist_hits).toEqual([]);
      expect(out.sources.at(-1)).toMatchObject({ provider: 'watchlists', outcome: 'not_found' });
    });

    it.each([['domain' as const], ['registration_number' as const]])(
      'puts the hit on a company found by its %s whose name is listed',
      async (field) => {
        const out = await attachWatchlistHits('company', [company('Air Cess Ltd', [field])], local, screeners, index);
        expect(out.items[0]).toMatchObject({
          sources: ['local', 'watchlists'],
          watchlist_hits: [expect.objectContaining({ entry_id: '7002', matched_on: ['name', 'country'] })],
        });
      },
    );

    it('screens the items a name search found otherwise, and the listed entity it answered goes into the one it is', async () => {
      const entity = personItem({
        id: 'per_listed',
        full_name: 'BOUT, Viktor Anatolijevitch',
        matched_on: ['name'],
        sources: ['watchlists'],
        watchlist_hits: [
          {
            list: 'ofac-sdn',
            entry_id: '7001',
            listed_name: 'BOUT, Viktor Anatolijevitch',
            programme: 'SDGT',
            match_score: 1,
            matched_on: ['name'],
          },
        ],
      });
      const screened: SourceReport[] = [...local, { provider: 'watchlists', outcome: 'found', took_ms: 2 }];
      const out = await attachWatchlistHits('person', [byEmail('Victor But'), entity], screened, screeners, index);
      expect(out.items).toEqual([
        expect.objectContaining({ full_name: 'Victor But', sources: ['local', 'watchlists'] }),
      ]);
      expect(out.sources.at(-1)).toMatchObject({ provider: 'watchlists', outcome: 'found' });
    });

    it('does not query when every item was screened by name, or the provider was skipped', async () => {
      const screened: SourceReport[] = [...local, { provider: 'watchlists', outcome: 'not_found', took_ms: 2 }];
      const byName = personItem({ full_name: 'Ada Lovelace' });
      expect(
        (await attachWatchlistHits('person', [byName], screened, screeners, index)).items[0]!.watchlist_hits,
      ).toEqual([]);
      const skipped: SourceReport[] = [{ provider: 'watchlists', outcome: 'skipped', took_ms: 0, detail: 'no list' }];
      const out = await attachWatchlistHits('person', [byEmail('Viktor But')], skipped, screeners, index);
      expect(out.items[0]!.watchlist_hits).toBeUndefined();
      expect(calls).toEqual({ one: 0, many: 0 });
    });
  });
});
