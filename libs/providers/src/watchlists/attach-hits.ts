import {
  countryKey,
  deadlineSignal,
  untilAborted,
  watchlistRowOf,
  type LookupKind,
  type Watchlist,
  type WatchlistEntityType,
  type WatchlistIndex,
} from '@dossier/domain';
import type {
  CompanyResultItem,
  PersonResultItem,
  ResultItemByKind,
  SourceReport,
  WatchlistHit,
} from '@dossier/contracts';
import { reportOfFailure } from '../provider';
import { matchesOf, type Match, type ScreenedSubject } from './screening';
import { screenSubjects, watchlistsProvider } from './watchlists.provider';

type Subject = PersonResultItem | CompanyResultItem;

const isPerson = (item: Subject): item is PersonResultItem => 'full_name' in item;

function namesOf(item: Subject): string[] {
  if (!isPerson(item)) return item.name.trim() === '' ? [] : [item.name];
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

/** An answer's items and its sources' reports, after screening. */
export interface ScreenedAnswer<K extends LookupKind> {
  items: ResultItemByKind[K][];
  sources: SourceReport[];
}

/** The most the query screening the items not found by name may take (the provider's own timeout). */
const SCREEN_TIMEOUT_MS = watchlistsProvider.defaultTimeoutMs;
/** The most items screened by query when the search names no limit (a company search): a local search's most. */
const MAX_SCREENED = 25;
/** The report's detail when those items could not be screened: no outcome claims they were. */
const UNSCREENED = 'the items not found by their name could not be screened';

/**
 * Hits on the subjects an answer found (ADR 0064, ADR 0071). The `watchlists` provider (`findsOnly:
 * 'watchlist_hits'`) answers each listed entity the searched name matches as an item of its own; here, after
 * the merge and the suppression list, every other person or company item with a name is screened with the
 * same matcher and threshold — its own names, birth year and countries — and carries the hits it matches
 * (`[]`: screened, none), with the provider among its `sources` when it has one. A listed entity that some
 * item is goes into that item; one no item is stays an item of its own.
 *
 * - Items found by their name are screened against the listed entities the provider answered (no query).
 * - Items found otherwise (an e-mail, a phone, a username, a domain, a registration number) are screened
 *   against the lists with `index`, all of them in one statement (screenSubjects), within the provider's
 *   timeout — at most `limit` of them, the best (a person search's `limit`; 25 for a company search: any
 *   further item stays unscreened). The provider's report then says `found` when any item has a hit, else
 *   `not_found`; a search the provider did not apply to (no name searched) gains that report. Without `index`
 *   (a progress write) they wait for the answer.
 * - Nothing is screened, and no item has `watchlist_hits`, when no screener runs for this worker, when no
 *   list is imported (the provider's `skipped`, or the query says so), or when the provider could not read the
 *   lists (its `error` or `timeout`). A query that fails leaves its items without `watchlist_hits` and the
 *   report says `error` or `timeout` (UNSCREENED), never `found` or `not_found`. Absent and `[]` differ on
 *   purpose: "not screened" is never shown as "clean".
 *
 * Screening is no lookup and costs nothing: the items screened were found, and charged for, by other sources.
 */
export async function attachWatchlistHits<K extends LookupKind>(
  kind: K,
  items: ResultItemByKind[K][],
  sources: readonly SourceReport[],
  screeners: ReadonlySet<string>,
  index?: WatchlistIndex,
  /** The most items the answer holds (a person search's `limit`): those past it are not screened. */
  limit = MAX_SCREENED,
): Promise<ScreenedAnswer<K>> {
  if ((kind !== 'person' && kind !== 'company') || screeners.size === 0) return { items, sources: [...sources] };
  const report = sources.find((s) => screeners.has(s.provider));
  const byName = report !== undefined && (report.outcome === 'found' || report.outcome === 'not_found');
  const entityType = kind === 'person' ? 'person' : 'organisation';
  const named = byName ? hitsByName(entityType, items as Subject[], screeners) : (items as Subject[]);
  // A report that is neither: no list imported (skipped), or the lists could not be read (error, timeout).
  if (!index || (report !== undefined && !byName))
    return { items: named as ResultItemByKind[K][], sources: [...sources] };
  const provider = report?.provider ?? [...screeners][0]!;
  const screened = await hitsByQuery(entityType, named, index, provider, screeners, limit);
  if (screened === null) return { items: named as ResultItemByKind[K][], sources: [...sources] };
  const failed = 'failed' in screened;
  const reported: SourceReport = failed
    ? { ...screened.failed, detail: UNSCREENED }
    : report === undefined
      ? { provider, outcome: screened.hit ? 'found' : 'not_found', took_ms: screened.took_ms }
      : {
          ...report,
          outcome: report.outcome === 'found' || screened.hit ? 'found' : 'not_found',
          took_ms: report.took_ms + screened.took_ms,
        };
  return {
    items: (failed ? named : screened.items) as ResultItemByKind[K][],
    sources: report === undefined ? [...sources, reported] : sources.map((s) => (s === report ? reported : s)),
  };
}

const hitKey = (hit: Pick<WatchlistHit, 'list' | 'entry_id'>) => `${hit.list}\n${hit.entry_id}`;

/** An entity of a list the provider answered as an item of its own (its only sources are screeners). */
const isListed = (item: Subject, screeners: ReadonlySet<string>) =>
  item.sources.every((s) => screeners.has(s)) && (item.watchlist_hits?.length ?? 0) > 0;

/** Each item found by its name, screened against the listed entities among the items. */
function hitsByName(entityType: WatchlistEntityType, subjects: Subject[], screeners: ReadonlySet<string>): Subject[] {
  const listed = subjects.filter((i) => isListed(i, screeners));
  const nameField = entityType === 'person' ? 'name' : 'company_name';
  const absorbed = new Set<Subject>();
  const out: Subject[] = [];
  for (const item of subjects) {
    if (isListed(item, screeners) || !item.matched_on.includes(nameField)) {
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
  return out.filter((i) => !absorbed.has(i));
}

type QueryScreening = { items: Subject[]; hit: boolean; took_ms: number } | { failed: SourceReport };

/**
 * Every item not screened yet that has a name, screened against the lists in one statement; null when there
 * is none or no list is imported.
 */
async function hitsByQuery(
  entityType: WatchlistEntityType,
  subjects: Subject[],
  index: WatchlistIndex,
  provider: string,
  screeners: ReadonlySet<string>,
  limit: number,
): Promise<QueryScreening | null> {
  // Best first: the items a search's `limit` keeps are among the first `limit` that are not listed entities.
  const kept = subjects.filter((i) => !isListed(i, screeners)).slice(0, limit);
  const unscreened = kept.filter((i) => i.watchlist_hits === undefined && namesOf(i).length > 0);
  if (unscreened.length === 0) return null;
  const started = Date.now();
  let matches: Match[][] | null;
  const deadline = deadlineSignal(SCREEN_TIMEOUT_MS);
  try {
    const screening = screenSubjects(index, entityType, unscreened.map(screenedOf));
    matches = await untilAborted(screening, deadline.signal);
  } catch (error) {
    return { failed: reportOfFailure(provider, error, Date.now() - started) };
  } finally {
    deadline.clear();
  }
  if (matches === null) return null;
  const found = new Map(unscreened.map((item, i) => [item, matches[i]!]));
  const listed = new Map(
    subjects.filter((i) => isListed(i, screeners)).map((i) => [hitKey(i.watchlist_hits![0]!), i] as const),
  );
  const absorbed = new Set<Subject>();
  const out = subjects.map((item): Subject => {
    const own = found.get(item);
    if (own === undefined) return item;
    const from = new Set<string>(own.length > 0 ? [provider] : []);
    for (const { hit } of own) {
      const entity = listed.get(hitKey(hit));
      if (!entity) continue;
      absorbed.add(entity);
      for (const s of entity.sources) from.add(s);
    }
    return { ...item, sources: [...new Set([...item.sources, ...from])], watchlist_hits: own.map((m) => m.hit) };
  });
  return {
    items: out.filter((i) => !absorbed.has(i)),
    hit: [...found.values()].some((m) => m.length > 0),
    took_ms: Date.now() - started,
  };
}
