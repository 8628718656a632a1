import type { DataSource } from 'typeorm';
import type {
  CompanyRow,
  CompanySearch,
  ControllerRow,
  IdentifierHolder,
  LocalIndex,
  ParentFound,
  PersonRow,
  PersonSearch,
} from '@dossier/domain';
import { queryGeneric, queryRows } from './sql';

/**
 * Candidates from the local indexes, every path through an index (never a table scan): names by pg_trgm
 * similarity (`%`, GIN on person_names.name_key; word similarity `<%` on companies.name_key, so a short
 * name finds the long one it is part of), e-mail, phone and username by GIN array containment,
 * registration number, domain and LEI by btree. Scoring is the provider's; this only finds.
 */
/**
 * Names for a searched name, from the name indexes alone (MATERIALIZED: the planner cannot start from
 * people instead), before the age bounds leave some out: first the names holding every searched word,
 * in any order (GIN on the words: swapped order, a missing middle name, accents — about a millisecond);
 * only when there is none, the names most like it by pg_trgm similarity (typos, initials: the GIN
 * trigram scan, tens of milliseconds at a million people).
 */
const NAME_MATCHES = 1000;

/**
 * A person searched for in country $10 (null: anywhere): one of its locations is there (stored as countryKey
 * writes it), or none names a country — mayBeInCountry in SQL. Before the name step's limit, so namesakes
 * elsewhere do not take the places of those in the country.
 */
const IN_COUNTRY = (p: string) =>
  `($10::text IS NULL OR ${p}.locations @> jsonb_build_array(jsonb_build_object('country', $10::text))
     OR NOT jsonb_path_exists(${p}.locations, '$[*].country ? (@ != null)'))`;

/**
 * The statement for a name of `groups` words (two letters or more): each word is $11, $12, … — the word and
 * the names it may be written as (nicknames: "bob" also finds "robert"), widened when it is a typo (`widened`) — and the words path takes names
 * holding one of each group (GIN `&&`, one index scan for all of them), one holding every word as searched
 * ($8) first. With no word (initials only), the words path finds nothing and the fuzzy one runs. Only when
 * both find nobody, the _partial path_: names holding all groups but one (a typo in one word of a name with
 * a middle name, "Roy Harebr" for "Roy Fawn Harber", is too far from it for trigram similarity), the most
 * like the searched name first — the words index again, then a sort of what it found. Each name found is
 * checked against its person's birth year and country by primary key (LATERAL … LIMIT 1: the planner cannot
 * turn it into a scan of `people` however many names it expects a path to find).
 */
export function findPeopleSql(groups: number): string {
  const indexes = Array.from({ length: groups }, (_, i) => i);
  const words = indexes.map((i) => `string_to_array(name_key, ' ') && (SELECT g FROM group_${i})`);
  const allButOne = words.map((_, skip) => `(${words.filter((__, i) => i !== skip).join(' AND ')})`);
  return `
  WITH ${indexes.map((i) => `group_${i} AS MATERIALIZED (SELECT ${widened(`$${11 + i}::text[]`)} AS g),`).join('\n  ')}
  exact AS MATERIALIZED (
    SELECT person_id, (CASE WHEN string_to_array(name_key, ' ') @> $8::text[] THEN 1.0 ELSE 0.9 END)::real AS sim
      FROM person_names
     WHERE ${words.length > 0 ? words.join(' AND ') : 'false'} AND name_key ~ ALL ($9::text[])
     ORDER BY sim DESC
     LIMIT ${NAME_MATCHES}
  ),
  fuzzy AS MATERIALIZED (
    SELECT person_id, similarity(name_key, $1) AS sim FROM person_names
     WHERE name_key % $1 AND NOT EXISTS (SELECT 1 FROM exact)
     ORDER BY sim DESC
     LIMIT ${NAME_MATCHES}
  ),
  partial AS MATERIALIZED (
    SELECT person_id, similarity(name_key, $1) AS sim FROM person_names
     WHERE (${groups > 1 ? allButOne.join(' OR ') : 'false'}) AND name_key ~ ALL ($9::text[])
       AND NOT EXISTS (SELECT 1 FROM exact) AND NOT EXISTS (SELECT 1 FROM fuzzy)
     ORDER BY sim DESC
     LIMIT ${NAME_MATCHES}
  ),
  named AS (SELECT * FROM exact UNION ALL SELECT * FROM fuzzy UNION ALL SELECT * FROM partial),
  hits AS (
    (SELECT n.person_id AS id
       FROM named n
      CROSS JOIN LATERAL (SELECT 1 FROM people p WHERE p.id = n.person_id
                             AND (p.birth_year IS NULL OR p.birth_year BETWEEN $5 AND $6) AND ${IN_COUNTRY('p')}
                           LIMIT 1) kept
      ORDER BY n.sim DESC
      LIMIT $7)
    UNION SELECT id FROM people WHERE email_keys @> ARRAY[$2::text]
    UNION SELECT id FROM people WHERE phone_keys @> ARRAY[$3::text]
    UNION SELECT id FROM people WHERE username_keys @> ARRAY[$4::text]
  )
  SELECT p.id, p.source, p.external_id, p.full_name, p.first_name, p.last_name, p.aliases, p.emails, p.phones,
         p.usernames, p.locations, p.birth_year, p.email_keys, p.phone_keys, p.username_keys, p.location_keys,
         (SELECT coalesce(jsonb_agg(jsonb_build_object('name_key', n.name_key, 'is_alias', n.is_alias)), '[]')
            FROM person_names n WHERE n.person_id = p.id) AS names
    FROM people p
   WHERE p.id = ANY (ARRAY(SELECT id FROM hits))
     AND (p.birth_year IS NULL OR p.birth_year BETWEEN $5 AND $6)
     AND ${IN_COUNTRY('p')}`;
}

/** Searched words shorter than this are widened only to a swap of two neighbouring letters ("jhon": "john"). */
const WIDEN_MIN_LETTERS = 5;
/** The most stored words a searched word is widened to. */
const WIDEN_WORDS = 5;

/**
 * A group of the words path (a searched word and its nicknames, first the word) widened when none of its
 * words is in person_words, so that no name can hold it — a typo (ADR 0070) — to the stored words nearest it:
 * first those it becomes by swapping two neighbouring letters (words of 4 letters or more: "joens" is
 * "jones"), then, for WIDEN_MIN_LETTERS or more, those sharing trigrams with it (`<<%` at the connection's
 * WORD_WIDENING_THRESHOLD, through person_words' index) at most two edits from it, fewest edits first; at most
 * WIDEN_WORDS. The words path then finds "Gonzalo Halvorson" for "Gonzalo Halvroson" by the words index in
 * about a millisecond, where trigram similarity over every name took tens at a million people and seconds
 * at ten million; that runs only when this finds nobody.
 */
function widened(group: string): string {
  const typed = `(${group})[1]`;
  const swaps = `ARRAY(SELECT overlay(${typed} PLACING substr(${typed}, i + 1, 1) || substr(${typed}, i, 1) FROM i FOR 2)
                   FROM generate_series(1, length(${typed}) - 1) AS i)`;
  // CASE and COALESCE run a branch's subquery only when they reach it: a word typed right costs one probe of
  // the primary key, a swap one more, and only a word that is neither looks through the trigram index.
  return `${group} || CASE
    WHEN length(${typed}) < 4 OR EXISTS (SELECT 1 FROM person_words s WHERE s.word = ANY (${group})) THEN '{}'::text[]
    ELSE coalesce(
      nullif(ARRAY(SELECT w.word FROM person_words w WHERE w.word = ANY (${swaps}) ORDER BY w.word LIMIT ${WIDEN_WORDS}), '{}'),
      CASE WHEN length(${typed}) >= ${WIDEN_MIN_LETTERS} THEN ARRAY(
        SELECT w.word FROM person_words w
         WHERE ${typed} <<% w.word AND levenshtein_less_equal(w.word, ${typed}, 2) <= 2
         ORDER BY levenshtein(w.word, ${typed}), similarity(w.word, ${typed}) DESC, w.word
         LIMIT ${WIDEN_WORDS}) ELSE '{}'::text[] END)
    END`;
}

/** A company searched for in country $4 (null: anywhere): its country, or a jurisdiction of it (US-DE is in US). */
const COMPANY_IN_COUNTRY = (c: string) =>
  `($4::text IS NULL OR ${c}.country = $4 OR upper(${c}.jurisdiction) = $4 OR upper(${c}.jurisdiction) LIKE $4 || '-%')`;

/**
 * Company names in two steps, as people's are: first the names holding the searched one by word similarity
 * (`<%`: "Acme" finds "Acme Widgets Holdings"); only when there is none, the names most like it by
 * similarity (`%`, the connection's threshold), which meets a name written apart where the record has one
 * word ("Macy s", "L Oreal" for `macys`, `loreal`: the one-letter word is too short a part for `<%`).
 */
export const FIND_COMPANIES = `
  WITH named AS MATERIALIZED (
    SELECT id FROM companies c
     WHERE $1 <% name_key AND ${COMPANY_IN_COUNTRY('c')}
     ORDER BY word_similarity($1, name_key) DESC, similarity($1, name_key) DESC
     LIMIT $5
  ),
  alike AS MATERIALIZED (
    SELECT id FROM companies c
     WHERE name_key % $1 AND ${COMPANY_IN_COUNTRY('c')} AND NOT EXISTS (SELECT 1 FROM named)
     ORDER BY similarity($1, name_key) DESC
     LIMIT $5
  ),
  hits AS (
    SELECT id FROM named
    UNION SELECT id FROM alike
    UNION SELECT id FROM companies WHERE domain_key = $2
    UNION SELECT id FROM companies WHERE registration_key = ANY ($3::text[])
  )
  SELECT c.id, c.source, c.external_id, c.name, c.registration_number, c.jurisdiction, c.country, c.domain, c.status,
         to_char(c.incorporated_on, 'YYYY-MM-DD') AS incorporated_on, c.address, c.industry, c.lei, c.name_key,
         c.registration_key, c.domain_key
    FROM companies c
   WHERE c.id = ANY (ARRAY(SELECT id FROM hits))
     AND ${COMPANY_IN_COUNTRY('c')}`;

/**
 * The words path's parameters: the searched name's words of two letters or more, each with the names it
 * may be written as (a name must hold one of each group), and a pattern per initial (a word of the name
 * must start with it) — "j smith" is every Smith with a J-word. A name of initials only has no words path
 * (no group: no row), only the fuzzy one.
 */
function wordsOf(search: PersonSearch): { words: string[] | null; groups: string[][]; initials: string[] } {
  const tokens = search.name_key ? search.name_key.split(' ') : [];
  const words = tokens.filter((t) => t.length > 1);
  const initials = tokens.filter((t) => t.length === 1).map((t) => `(^| )${t}`);
  const groups = words.map((w) => [w, ...(search.name_variants?.[w] ?? [])]);
  return { words: words.length > 0 ? words : null, groups, initials };
}

/** Widest birth-year bounds: the column's CHECK range. */
const YEARS = { min: 1800, max: 2200 };

/**
 * The records holding each e-mail ($1) and phone ($2) key, at most $3 per key (one GIN probe each): the merge
 * asks whether an identifier two records share is a household line or a switchboard. The `&&` on all the keys
 * (a value the planner knows) is for the planner: of `@> ARRAY[k.key]` alone (a value it does not know) it
 * expects 0.5% of the table, and at ten million people took a scan stopping at the third match for cheaper
 * than the index — a scan of the whole table for a key one record holds (3.7 s a search).
 */
const HOLDERS = (column: string, keys: string) => `
  SELECT k.key, h.id, h.full_name, h.first_name, h.last_name, h.aliases, h.birth_year
    FROM unnest(${keys}::text[]) AS k(key)
   CROSS JOIN LATERAL (SELECT p.id, p.full_name, p.first_name, p.last_name, p.aliases, p.birth_year
                         FROM people p WHERE p.${column} @> ARRAY[k.key] AND p.${column} && ${keys}::text[]
                        LIMIT $3) h`;
export const HOLDERS_OF = `
  SELECT 'email' AS field, e.* FROM (${HOLDERS('email_keys', '$1')}) e
  UNION ALL
  SELECT 'phone' AS field, t.* FROM (${HOLDERS('phone_keys', '$2')}) t`;

/** The imported controllers of companies by UK registration key (ADR 0066), at most 200 a company. */
export const CONTROLLERS_OF = `
  SELECT id, source, external_id, company_number, registration_key, name, kind, natures_of_control,
         to_char(notified_on, 'YYYY-MM-DD') AS notified_on, to_char(ceased_on, 'YYYY-MM-DD') AS ceased_on
    FROM company_controllers WHERE registration_key = ANY($1::text[])
   ORDER BY registration_key, id LIMIT 200 * greatest(cardinality($1::text[]), 1)`;

/** The imported parents of LEIs, with the parent's legal name where the index holds its record. */
export const PARENTS_OF = `
  SELECT p.id, p.source, p.external_id, p.child_lei, p.level, p.parent_lei,
         (SELECT c.name FROM companies c WHERE c.lei = p.parent_lei ORDER BY c.id LIMIT 1) AS parent_name
    FROM company_parents p WHERE p.child_lei = ANY($1::text[])
   ORDER BY p.child_lei, p.level, p.id`;

export class LocalIndexRepository implements LocalIndex {
  constructor(private readonly db: DataSource) {}

  findPeople(search: PersonSearch, limit: number): Promise<PersonRow[]> {
    const { words, groups, initials } = wordsOf(search);
    return queryGeneric<PersonRow>(this.db, findPeopleSql(groups.length), [
      search.name_key,
      search.email_key,
      search.phone_key,
      search.username_key,
      search.birth_year_min ?? YEARS.min,
      search.birth_year_max ?? YEARS.max,
      limit,
      words,
      initials,
      search.country,
      ...groups,
    ]);
  }

  holdersOf(keys: { email_keys: string[]; phone_keys: string[] }, limit: number): Promise<IdentifierHolder[]> {
    return queryRows<IdentifierHolder>(this.db, HOLDERS_OF, [keys.email_keys, keys.phone_keys, limit]);
  }

  async companyDepthOf(
    registrationKeys: string[],
    leis: string[],
  ): Promise<{ controllers: ControllerRow[]; parents: ParentFound[] }> {
    const [controllers, parents] = await Promise.all([
      registrationKeys.length > 0 ? queryRows<ControllerRow>(this.db, CONTROLLERS_OF, [registrationKeys]) : [],
      leis.length > 0 ? queryRows<ParentFound>(this.db, PARENTS_OF, [leis]) : [],
    ]);
    return { controllers, parents };
  }

  findCompanies(search: CompanySearch, limit: number): Promise<CompanyRow[]> {
    return queryRows<CompanyRow>(this.db, FIND_COMPANIES, [
      search.name_key,
      search.domain_key,
      search.registration_keys,
      search.country,
      limit,
    ]);
  }
}
