/**
 * Which username sites a search checks (ADR 0049), as Maigret chooses them: the sites named in `sites` (any
 * case), of those the ones carrying any of `tags`, and of those the `top` most popular — each filter only
 * when it is given; with none, every site. The gateway runs it to refuse names and tags no site has, the
 * worker to pick the sites it checks.
 */

/** What a username search asks of the site list. */
export interface SiteSelection {
  sites?: readonly string[] | undefined;
  tags?: readonly string[] | undefined;
  top?: number | undefined;
}

/** A site as selection sees it: its name, its tags (lower case) and its popularity rank (1 first; null: unranked). */
export interface SelectableSite {
  name: string;
  tags: readonly string[];
  rank: number | null;
}

export interface SelectedSites<T> {
  /** The sites chosen, in the list's order. */
  sites: T[];
  /** The names in `sites` no site of the list has, as given (each once). */
  unknownSites: string[];
  /** The tags no site of the list carries, as given (each once). */
  unknownTags: string[];
}

/** Whether a search asks for a selection at all (any of `sites`, `tags`, `top`). */
export function selectsSites(selection: SiteSelection): boolean {
  return selection.sites !== undefined || selection.tags !== undefined || selection.top !== undefined;
}

/**
 * The sites in the order they are best checked in: by popularity rank (1 first), the unranked after them in
 * the list's order. A check cut short by its deadline has then asked the sites most people have accounts on.
 */
export function byPopularity<T extends SelectableSite>(sites: readonly T[]): T[] {
  return sites
    .map((site, at) => ({ site, at }))
    .sort((a, b) => (a.site.rank ?? Infinity) - (b.site.rank ?? Infinity) || a.at - b.at)
    .map(({ site }) => site);
}

export function selectSites<T extends SelectableSite>(all: readonly T[], selection: SiteSelection): SelectedSites<T> {
  const unique = (values: readonly string[] | undefined) => [...new Set(values ?? [])];
  const names = unique(selection.sites);
  const tags = unique(selection.tags);
  const known = new Set(all.map((site) => site.name.toLowerCase()));
  const carried = new Set(all.flatMap((site) => site.tags));
  const wanted = new Set(names.map((name) => name.toLowerCase()));
  const wantedTags = new Set(tags.map((tag) => tag.toLowerCase()));
  let sites = all.filter(
    (site) =>
      (names.length === 0 || wanted.has(site.name.toLowerCase())) &&
      (tags.length === 0 || site.tags.some((tag) => wantedTags.has(tag))),
  );
  if (selection.top !== undefined) {
    const kept = new Set(byPopularity(sites).slice(0, selection.top));
    sites = sites.filter((site) => kept.has(site));
  }
  return {
    sites,
    unknownSites: names.filter((name) => !known.has(name.toLowerCase())),
    unknownTags: tags.filter((tag) => !carried.has(tag.toLowerCase())),
  };
}
