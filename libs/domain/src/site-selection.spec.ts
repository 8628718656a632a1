import { byPopularity, selectSites, selectsSites, type SelectableSite } from './site-selection';

const site = (name: string, rank: number | null, ...tags: string[]): SelectableSite => ({ name, rank, tags });
/** In the list's order (Sherlock's is alphabetical), not by rank. */
const LIST = [
  site('Chess', 300, 'gaming', 'hobby'),
  site('GitHub', 20, 'coding', 'tech'),
  site('Habr', 900, 'ru', 'tech'),
  site('Instagram', 10, 'photo', 'social'),
  site('Pastebin', null, 'sharing'),
  site('Steam', null, 'gaming'),
];
const names = (sites: SelectableSite[]) => sites.map((s) => s.name);

describe('site selection (Maigret: names, then tags, then the top by rank)', () => {
  it('takes every site when nothing is asked', () => {
    expect(selectsSites({})).toBe(false);
    expect(selectSites(LIST, {})).toEqual({ sites: LIST, unknownSites: [], unknownTags: [] });
  });

  it('names sites in any case, and says which names no site has', () => {
    const chosen = selectSites(LIST, { sites: ['github', 'STEAM', 'Myspace', 'myspace'] });
    expect(names(chosen.sites)).toEqual(['GitHub', 'Steam']);
    expect(chosen.unknownSites).toEqual(['Myspace', 'myspace']);
  });

  it('keeps the sites carrying any of the tags, and says which tags no site carries', () => {
    const chosen = selectSites(LIST, { tags: ['Gaming', 'tech', 'knitting'] });
    expect(names(chosen.sites)).toEqual(['Chess', 'GitHub', 'Habr', 'Steam']);
    expect(chosen.unknownTags).toEqual(['knitting']);
  });

  it('narrows named sites by tags (both must hold)', () => {
    expect(names(selectSites(LIST, { sites: ['GitHub', 'Chess'], tags: ['tech'] }).sites)).toEqual(['GitHub']);
  });

  it('keeps the top N by rank, unranked sites last in list order, and answers them in list order', () => {
    expect(names(selectSites(LIST, { top: 3 }).sites)).toEqual(['Chess', 'GitHub', 'Instagram']);
    expect(names(selectSites(LIST, { top: 5 }).sites)).toEqual(['Chess', 'GitHub', 'Habr', 'Instagram', 'Pastebin']);
    expect(names(selectSites(LIST, { tags: ['gaming'], top: 1 }).sites)).toEqual(['Chess']);
    expect(names(selectSites(LIST, { top: 100 }).sites)).toEqual(names(LIST));
    expect(selectsSites({ top: 3 })).toBe(true);
  });

  it('orders sites for checking by rank, the unranked after them in list order', () => {
    expect(names(byPopularity(LIST))).toEqual(['Instagram', 'GitHub', 'Chess', 'Habr', 'Pastebin', 'Steam']);
  });
});
