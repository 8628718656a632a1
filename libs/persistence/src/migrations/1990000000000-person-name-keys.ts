import type { MigrationInterface, QueryRunner } from 'typeorm';
import { personNamesOf, type PersonRow } from '@dossier/domain';

type StoredPerson = Pick<PersonRow, 'id' | 'full_name' | 'aliases' | 'names'>;

const BATCH = 5_000;

/** A person's names as one comparable value: each key and whether it is an alias, in code-point order. */
const namesKey = (names: PersonRow['names']): string =>
  JSON.stringify(names.map((n) => [n.name_key, n.is_alias]).sort(([a], [b]) => (a! < b! ? -1 : 1)));

/**
 * Names whose key the new folding can change: with an apostrophe or a backtick, or with a character outside
 * ASCII (a typographic apostrophe, Chinese characters, Hangul). A name of ASCII letters, digits, spaces and
 * other punctuation folds as it did.
 */
const MAY_CHANGE = `'[''\`]|[^\\x01-\\x7f]'`;

/**
 * The local person index's name keys (`person_names`) as imports now write them (normalizePersonName,
 * ADR 0012): an apostrophe inside a word is dropped ("O'Brien" was keyed "o brien", now "obrien") and a
 * name written in Chinese characters or Hangul has its family and given names as two words ("王小明" was
 * "wangxiaoming", now "wang xiaoming"). An import does not rewrite the names of a record it finds unchanged,
 * so the rows stored before are re-keyed here, through personNamesOf itself.
 *
 * Batched by id (keyset, BATCH people a statement): one pass over `people` along its
 * primary key, the filter (MAY_CHANGE) in SQL, so only names that may change are read into JS and folded;
 * only people whose keys differ have their names deleted and inserted again (and the GIN indexes
 * updated for those rows only). Idempotent: a second run finds nothing to change. At a million people
 * of which a few percent have such names, an estimate of about a minute of reading and seconds of writing;
 * the people rows themselves are not written, so that table and its indexes are untouched.
 * Not undone by `down`: the old keys are made again by no code.
 */
export class PersonNameKeys1990000000000 implements MigrationInterface {
  name = 'PersonNameKeys1990000000000';

  async up(q: QueryRunner): Promise<void> {
    for (let after = ''; ;) {
      const rows = (await q.query(
        `SELECT p.id, p.full_name, p.aliases,
                (SELECT coalesce(jsonb_agg(jsonb_build_object('name_key', n.name_key, 'is_alias', n.is_alias)), '[]')
                   FROM person_names n WHERE n.person_id = p.id) AS names
           FROM people p
          WHERE p.id > $1
            AND (p.full_name ~ ${MAY_CHANGE} OR array_to_string(p.aliases, ' ') ~ ${MAY_CHANGE})
          ORDER BY p.id
          LIMIT ${BATCH}`,
        [after],
      )) as StoredPerson[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.id;
      const changed = rows
        .map((stored) => ({
          id: stored.id,
          stored: stored.names,
          names: personNamesOf(stored.full_name, stored.aliases),
        }))
        .filter(({ stored, names }) => namesKey(stored) !== namesKey(names));
      if (changed.length === 0) continue;
      const names = changed.flatMap(({ id, names }) => names.map((n) => ({ person_id: id, ...n })));
      await q.query(`DELETE FROM person_names WHERE person_id = ANY($1::text[])`, [changed.map((c) => c.id)]);
      await q.query(
        `INSERT INTO person_names (person_id, name_key, is_alias)
         SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[])`,
        [names.map((n) => n.person_id), names.map((n) => n.name_key), names.map((n) => n.is_alias)],
      );
    }
  }

  async down(): Promise<void> {
    // The old keys are not kept; the new ones are found by every spelling the old ones were.
  }
}
