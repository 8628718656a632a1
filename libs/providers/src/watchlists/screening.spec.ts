import { watchlistRowOf, type WatchlistEntry, type WatchlistIndex } from '@dossier/domain';
import { personItem } from '@dossier/testing';
import type { CompanyResultItem, PersonResultItem, SourceReport } from '@dossier/contracts';
import { attachWatchlistHits } from './attach-hits';
import { WATCHLIST_THRESHOLD, matchesOf } from './screening';

const entry = (over: Partial<WatchlistEntry> = {}): WatchlistEntry => ({
  list: 'ofac-sdn',
  entry_id: '9001',
  entity_type: 'person',
  name: 'KARIMOV, Rustam Bakhtiyorovich',
  aliases: ['QARIMOV, Rostam'],
  programmes: ['SDGT', 'IRGC'],
  birth_years: [1961],
  countries: ['UZ'],
  ...over,
});
const subject = (name: string, birth_years: number[] = [], countries: string[] = []) => ({
  names: [name],
  birth_years,
  countries,
});

describe('matchesOf', () => {
  const rows = [watchlistRowOf(entry())];

  it.each([
    ['word order and a missing middle name', 'Rustam Karimov'],
    ['another romanisation', 'Rostam Qarimov'],
    ['a typo', 'Rustam Karimow'],
    ['Cyrillic', 'Рустам Каримов'],
  ])('finds a listed person under %s', (_, name) => {
    const [m] = matchesOf('person', subject(name), rows);
    expect(m?.hit).toMatchObject({ list: 'ofac-sdn', entry_id: '9001', programme: 'SDGT; IRGC', matched_on: ['name'] });
    expect(m!.hit.match_score).toBeGreaterThanOrEqual(WATCHLIST_THRESHOLD);
  });

  it('says the birth year and country agreed, and is no hit when the years are more than one apart', () => {
    expect(matchesOf('person', subject('Rustam Karimov', [1962], ['UZ']), rows)[0]?.hit.matched_on).toEqual([
      'name',
      'birth_year',
      'country',
    ]);
    expect(matchesOf('person', subject('Rustam Karimov', [1970]), rows)).toEqual([]);
  });

  it('finds no other name, nor an organisation for a person', () => {
    expect(matchesOf('person', subject('Ruslan Kadyrov'), rows)).toEqual([]);
    expect(matchesOf('organisation', subject('Rustam Karimov'), rows)).toEqual([]);
  });
});

describe('attachWatchlistHits', () => {
  const hit = {
    list: 'ofac-sdn' as const,
    entry_id: '9001',
    listed_name: 'KARIMOV, Rustam Bakhtiyorovich',
    programme: 'SDGT; IRGC',
    match_score: 0.95,
    matched_on: ['name' as const],
  };
  const person = (over: Partial<PersonResultItem>): PersonResultItem =>
    personItem({ full_name: 'Rustam Karimov', first_name: 'Rustam', last_name: 'Karimov', match_score: 0.75, ...over });
  const listed = person({
    id: 'per_listed',
    full_name: 'KARIMOV, Rustam Bakhtiyorovich',
    aliases: ['QARIMOV, Rostam'],
    birth_year: 1961,
    sources: ['watchlists'],
    watchlist_hits: [hit],
  });
  const screened: SourceReport[] = [{ provider: 'watchlists', outcome: 'found', took_ms: 1 }];
  const screeners = new Set(['watchlists']);

  it('puts the hit on the item that is the listed subject, which then goes', async () => {
    const found = person({ birth_year: 1961, emails: ['r@example.com'] });
    const out = (await attachWatchlistHits('person', [found, listed], screened, screeners)).items;
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({
      id: 'per_x',
      sources: ['local', 'watchlists'],
      watchlist_hits: [{ entry_id: '9001', programme: 'SDGT; IRGC', matched_on: ['name', 'birth_year'] }],
    });
  });

  it('keeps the listed entity apart from a namesake born years apart, who is screened clean', async () => {
    const namesake = person({ birth_year: 1990 });
    const out = (await attachWatchlistHits('person', [namesake, listed], screened, screeners)).items;
    expect(out.map((i) => [i.id, i.watchlist_hits])).toEqual([
      ['per_x', []],
      ['per_listed', [hit]],
    ]);
  });

  it('leaves unscreened what was not found by its name, and everything when the lists were not screened', async () => {
    const byEmail = person({ matched_on: ['email'] });
    expect(
      (await attachWatchlistHits('person', [byEmail], screened, screeners)).items[0]!.watchlist_hits,
    ).toBeUndefined();
    const skipped: SourceReport[] = [{ provider: 'watchlists', outcome: 'skipped', took_ms: 0, detail: 'no list' }];
    expect(
      (await attachWatchlistHits('person', [person({})], skipped, screeners)).items[0]!.watchlist_hits,
    ).toBeUndefined();
  });

  it('screens companies by their name', async () => {
    const company: CompanyResultItem = {
      id: 'com_x',
      name: 'Orlando Freight Lines SA',
      registration_number: null,
      jurisdiction: null,
      country: 'PA',
      domain: null,
      status: null,
      incorporated_on: null,
      address: null,
      industry: null,
      match_score: 0.75,
      matched_on: ['company_name'],
      sources: ['local'],
      officers: null,
      controllers: null,
      parents: null,
      field_sources: { name: [{ provider: 'local', record_id: 'demo:1' }] },
    };
    const entity = {
      ...company,
      id: 'com_listed',
      name: 'ORLANDO FREIGHT LINES S.A.',
      sources: ['watchlists'],
      watchlist_hits: [{ ...hit, entry_id: '9002', listed_name: 'ORLANDO FREIGHT LINES S.A.', programme: 'SDNTK' }],
    };
    const out = (await attachWatchlistHits('company', [company, entity], screened, screeners)).items;
    expect(out).toHaveLength(1);
    expect(out[0]!.watchlist_hits).toEqual([
      expect.objectContaining({ entry_id: '9002', match_score: 1, matched_on: ['name', 'country'] }),
    ]);
  });
});

describe('attachWatchlistHits: the items not found by their name, when the lists cannot be read', () => {
  const failing: WatchlistIndex = {
    lists: () => Promise.reject(new Error('connection refused')),
    findEntries: () => Promise.reject(new Error('connection refused')),
    findEntriesOfMany: () => Promise.reject(new Error('connection refused')),
  };
  const byEmail = personItem({ full_name: 'Viktor Bout', matched_on: ['email'] });
  const local: SourceReport = { provider: 'local', outcome: 'found', took_ms: 1 };
  const screeners = new Set(['watchlists']);

  it('leaves them unscreened and says so: never found or not_found', async () => {
    const out = await attachWatchlistHits('person', [byEmail], [local], screeners, failing);
    expect(out.items[0]!.watchlist_hits).toBeUndefined();
    expect(out.sources).toEqual([
      local,
      { provider: 'watchlists', outcome: 'error', took_ms: expect.any(Number), detail: expect.stringContaining('not') },
    ]);
    const named: SourceReport = { provider: 'watchlists', outcome: 'not_found', took_ms: 2 };
    const after = await attachWatchlistHits('person', [byEmail], [local, named], screeners, failing);
    expect(after.sources[1]).toMatchObject({ provider: 'watchlists', outcome: 'error' });
  });

  it('does not query without an index (a progress write), nor without a screener', async () => {
    const out = await attachWatchlistHits('person', [byEmail], [local], screeners);
    expect(out).toEqual({ items: [byEmail], sources: [local] });
    expect(await attachWatchlistHits('person', [byEmail], [local], new Set(), failing)).toEqual({
      items: [byEmail],
      sources: [local],
    });
  });
});
