import { countryKey, watchlistRowOf, type LookupKind, type Watchlist } from '@dossier/domain';
import type {
  CompanyResultItem,
  PersonResultItem,
  ResultItemByKind,
  SourceReport,
  WatchlistHit,
} from '@dossier/contracts';
import { matchesOf, type ScreenedSubject } from './screening';

type Subject = PersonResultItem | CompanyResultItem;

const isPerson = (item: Subject): item is PersonResultItem => 'full_name' in item;

function namesOf(item: Subject): string[] {
  if (!isPerson(item)) return [item.name];
  return [...(item.full_name === null ? [] : [item.full_name]), ...item.aliases];
}

function screenedOf(item: Subject): ScreenedSubject {
  if (!isPerson(item)) return { names: namesOf(item), birth_years: [], countries: item.country ? [item.country] : [] };
  return {
    names: namesOf(item),
    birth_years: item.birth_year === null ? [] : [item.birth_year],
    countries: item.locations.flatMap((l) => (l.country ? [countryKey(l.country)] : [])),
  };
}

/**
 * Hits on the subjects an answer found (ADR 0064). The `watchlists` provider (`findsOnly: 'watchlist_hits'`)
 * answers each listed entity the searched name matches as an item of its own; here, after the merge and the
 * suppression list, each other item that was found by its name is screened against those entities with the
 * same matcher and threshold — its own names, birth year and country — and carries the hits it matches
 * (`[]`: screened, none), with the provider among its `sources`. A listed entity that some item is goes into
 * that item; one no item is stays an item of its own. An item found by something else than its name (an
 * e-mail, a phone) was not screened: it has no `watchlist_hits`. So is every item when no list was screened
 * (no list imported, the provider failed).
 */
export function attachWatchlistHits<K extends LookupKind>(
  kind: K,
  items: ResultItemByKind[K][],
  sources: readonly SourceReport[],
  screeners: ReadonlySet<string>,
): ResultItemByKind[K][] {
  if (kind !== 'person' && kind !== 'company') return items;
  const screened = sources.some(
    (s) => screeners.has(s.provider) && (s.outcome === 'found' || s.outcome === 'not_found'),
  );
  if (!screened) return items;
  const subjects = items as Subject[];
  const isListed = (i: Subject) => i.sources.every((s) => screeners.has(s)) && (i.watchlist_hits?.length ?? 0) > 0;
  const listed = subjects.filter(isListed);
  const nameField = kind === 'person' ? 'name' : 'company_name';
  const entityType = kind === 'person' ? 'person' : 'organisation';
  const absorbed = new Set<Subject>();
  const out: Subject[] = [];
  for (const item of subjects) {
    if (isListed(item)) {
      out.push(item);
      continue;
    }
    if (!item.matched_on.includes(nameField)) {
      out.push(item);
      continue;
    }
    const hits: WatchlistHit[] = [];
    const from = new Set<string>();
    for (const entity of listed) {
      const [hit] = entity.watchlist_hits!;
      const row = watchlistRowOf({
        list: hit!.list as Watchlist,
        entry_id: hit!.entry_id,
        entity_type: entityType,
        name: namesOf(entity)[0] ?? hit!.listed_name,
        aliases: namesOf(entity).slice(1),
        programmes: hit!.programme === null ? [] : hit!.programme.split('; '),
        birth_years: isPerson(entity) && entity.birth_year !== null ? [entity.birth_year] : [],
        countries: [...screenedOf(entity).countries],
      });
      const [match] = matchesOf(entityType, screenedOf(item), [row]);
      if (!match) continue;
      hits.push({ ...match.hit, programme: hit!.programme });
      absorbed.add(entity);
      for (const s of entity.sources) from.add(s);
    }
    out.push({
      ...item,
      sources: [...new Set([...item.sources, ...from])],
      watchlist_hits: hits.sort((a, b) => b.match_score - a.match_score),
    });
  }
  return out.filter((i) => !absorbed.has(i)) as ResultItemByKind[K][];
}
