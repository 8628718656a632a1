import {
  countryKey,
  splitPersonName,
  subjectId,
  untilAborted,
  watchlistNameKey,
  type WatchlistEntityType,
  type WatchlistIndex,
  type WatchlistRow,
  type WatchlistSearch,
} from '@dossier/domain';
import type { CompanyInput, CompanyResultItem, PersonInput, PersonRecordItem } from '@dossier/contracts';
import {
  ProviderError,
  SkippedCall,
  deadlinePassed,
  type Provider,
  type ProviderAnswer,
  type ProviderContext,
} from '../provider';
import { nameVariants } from '../identity/nicknames';
import { sourcedBy } from '../field-sources';
import { ageOf, birthYearsOf } from '../local/local.provider';
import { scoreOf } from '../subject-score';
import { WATCHLIST_THRESHOLD, matchesOf, type Match, type ScreenedSubject } from './screening';

export const WATCHLISTS_ID = 'watchlists';
/** Candidate entries read for a name before scoring (the most like it first). */
const CANDIDATES = 200;
/** An age range wider than this many years says nothing of a birth year worth comparing. */
const MAX_AGE_SPAN = 15;

/** The searched subject: its name, its year of birth (given, or the years its age range allows), its country. */
function subjectOf(kind: 'person' | 'company', input: PersonInput | CompanyInput, thisYear: number): ScreenedSubject {
  if (kind === 'company') {
    const c = input as CompanyInput;
    return { names: c.company_name ? [c.company_name] : [], birth_years: [], countries: countriesOf(c.country) };
  }
  const p = input as PersonInput;
  let years: number[] = p.birth_year === undefined ? [] : [p.birth_year];
  if (years.length === 0 && p.age_range) {
    const { min, max } = birthYearsOf(p.age_range, thisYear);
    if (min !== null && max !== null && max - min <= MAX_AGE_SPAN)
      years = Array.from({ length: max - min + 1 }, (_, i) => min + i);
  }
  return { names: p.name ? [p.name] : [], birth_years: years, countries: countriesOf(p.country) };
}

const countriesOf = (country: string | undefined) => (country ? [countryKey(country)] : []);

/** The searched name's words, each with its nicknames: a listed name holding one of them is a candidate. */
function wordsOf(nameKey: string): string[] {
  const words = nameKey.split(' ').filter((w) => w !== '');
  return [...new Set(words.flatMap((w) => [w, ...nameVariants(w)]))];
}

/** What the index is asked for a name: its folded key and its words with their nicknames; null for no name. */
function searchOf(entityType: WatchlistEntityType, name: string): WatchlistSearch | null {
  const nameKey = watchlistNameKey(entityType, name);
  return nameKey === '' ? null : { entity_type: entityType, name_key: nameKey, words: wordsOf(nameKey) };
}

/**
 * The entries of the lists a subject's first name matches at `threshold` or more, best first: candidates from
 * the index, scored by matchesOf.
 */
export async function screenSubject(
  index: WatchlistIndex,
  entityType: WatchlistEntityType,
  subject: ScreenedSubject,
  threshold = WATCHLIST_THRESHOLD,
): Promise<Match[]> {
  const search = searchOf(entityType, subject.names[0] ?? '');
  if (search === null) return [];
  return matchesOf(entityType, subject, await index.findEntries(search, CANDIDATES), threshold);
}

/** A subject's names read as candidates for it: its first this many (a name and its aliases). */
const NAMES_SCREENED = 5;

/**
 * screenSubject for several subjects in one statement (ADR 0071): each one's entries, from candidates for each
 * of its names (the first NAMES_SCREENED) — or null when no list is imported.
 */
export async function screenSubjects(
  index: WatchlistIndex,
  entityType: WatchlistEntityType,
  subjects: readonly ScreenedSubject[],
): Promise<Match[][] | null> {
  const searches = subjects.map((s) =>
    [...new Set(s.names.slice(0, NAMES_SCREENED))].flatMap((n) => searchOf(entityType, n) ?? []),
  );
  const found = await index.findEntriesOfMany(searches.flat(), CANDIDATES);
  if (!found.imported) return null;
  let at = 0;
  return subjects.map((subject, i) => {
    const own = found.entries.slice(at, (at += searches[i]!.length)).flat();
    const rows = new Map<string, WatchlistRow>(own.map((row) => [`${row.list}:${row.entry_id}`, row]));
    return matchesOf(entityType, subject, [...rows.values()]);
  });
}

/** A listed person as a person item: what the list says, the hit on it. */
function personItem({ row, hit }: Match, thisYear: number): PersonRecordItem {
  const split = splitPersonName(row.name);
  const birthYear = row.birth_years.length === 1 ? row.birth_years[0]! : null;
  return {
    id: subjectId('person', `watchlist:${row.list}`, row.entry_id),
    full_name: row.name,
    first_name: split.first,
    last_name: split.last,
    aliases: row.aliases,
    emails: [],
    phones: [],
    usernames: [],
    accounts: [],
    locations: row.countries.map((country) => ({ city: null, region: null, country })),
    age: ageOf(birthYear, thisYear),
    birth_year: birthYear,
    match_score: scoreOf([['name', hit.match_score]]),
    matched_on: hit.matched_on,
    sources: [WATCHLISTS_ID],
    watchlist_hits: [hit],
  };
}

/** A listed organisation as a company item. */
function companyItem({ row, hit }: Match): CompanyResultItem {
  const item = {
    id: subjectId('company', `watchlist:${row.list}`, row.entry_id),
    name: row.name,
    registration_number: null,
    jurisdiction: null,
    country: row.countries[0] ?? null,
    domain: null,
    status: null,
    incorporated_on: null,
    address: null,
    industry: null,
    match_score: scoreOf([['name', hit.match_score]]),
    matched_on: hit.matched_on.map((f) => (f === 'name' ? 'company_name' : f)),
    sources: [WATCHLISTS_ID],
    officers: null,
    controllers: null,
    parents: null,
    watchlist_hits: [hit],
  };
  return {
    ...item,
    field_sources: sourcedBy(item, { provider: WATCHLISTS_ID, record_id: `${row.list}:${row.entry_id}` }),
  };
}

/** The lists, read within the call's deadline. */
function indexOf(ctx: ProviderContext): WatchlistIndex {
  if (ctx.signal.aborted) throw deadlinePassed(WATCHLISTS_ID, ctx.signal);
  const index = ctx.watchlists;
  if (!index) throw new ProviderError('unrecoverable', 'this worker has no watchlist index');
  const bounded = <T>(p: Promise<T>) => untilAborted(p, ctx.signal, () => deadlinePassed(WATCHLISTS_ID, ctx.signal));
  return {
    lists: () => bounded(index.lists()),
    findEntries: (s, limit) => bounded(index.findEntries(s, limit)),
    findEntriesOfMany: (s, limit) => bounded(index.findEntriesOfMany(s, limit)),
  };
}

/**
 * Sanctions screening (ADR 0064): the searched name against the lists the operator imported
 * (`cli watchlists:import`). Each listed entity it matches is an item of its own carrying the hit; the
 * worker then puts the hits on the items of the answer that are that subject (attachWatchlistHits) and
 * answers the rest as they are. `skipped` while no list is imported. Suppression never hides a hit.
 */
export const watchlistsProvider: Provider<'person' | 'company'> = {
  id: WATCHLISTS_ID,
  kinds: ['person', 'company'],
  configKeys: [],
  defaultTimeoutMs: 5_000,
  transport: 'database',
  findsOnly: 'watchlist_hits',
  isConfigured: () => true,
  appliesTo: (input) => {
    const name = 'company_name' in input ? input.company_name : (input as PersonInput).name;
    return name !== undefined && name.trim() !== '';
  },
  async lookup(kind, input, ctx): Promise<ProviderAnswer<'person' | 'company'>> {
    const index = indexOf(ctx);
    if ((await index.lists()).length === 0)
      throw new SkippedCall('no watchlist imported (cli watchlists:import <list> FILE)');
    const thisYear = new Date().getUTCFullYear();
    const subject = subjectOf(kind, input, thisYear);
    const matches = await screenSubject(index, kind === 'person' ? 'person' : 'organisation', subject);
    const items = kind === 'person' ? matches.map((m) => personItem(m, thisYear)) : matches.map(companyItem);
    return { outcome: items.length > 0 ? 'found' : 'not_found', items };
  },
};
