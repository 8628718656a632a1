import type { MigrationInterface, QueryRunner } from 'typeorm';
import { locationKeysOf, type PersonRow } from '@dossier/domain';

type StoredPerson = Pick<PersonRow, 'id' | 'locations' | 'location_keys'>;

/**
 * Locations whose keys the new folding can change: with an apostrophe or a backtick, or with a character
 * outside ASCII (a typographic apostrophe, a modifier letter), in a city or a region. Any other place folds
 * as it did.
 */
const MAY_CHANGE = `locations::text ~ '[''\`]|[^\\x01-\\x7f]'`;

/**
 * The local person index's location keys (`people.location_keys`) as imports now write them (locationKeysOf,
 * ADR 0012): a place's name is folded as a name is, an apostrophe inside a word dropped ("St. John's" was
 * keyed "st john s", now "st johns"; "Val-d’Or" "val d or", now "val dor"), so a search for "St Johns"
 * finds a record in St. John's. An import rewrites the keys of a record it finds unchanged only if it
 * imports it again, so the rows stored before are re-keyed here, through locationKeysOf itself.
 *
 * Batched by id (keyset, `batch` matching rows a statement, never OFFSET): one pass over `people` along its
 * primary key, the filter (MAY_CHANGE) in SQL, so only locations that may change are read into JS; only
 * rows whose keys differ are written, one UPDATE a batch (`location_keys` is on no index). Idempotent: a
 * second run writes nothing. Not undone by `down`: the old keys are made again by no code.
 */
export class PersonLocationKeys2110000000000 implements MigrationInterface {
  name = 'PersonLocationKeys2110000000000';

  constructor(private readonly batch = 5_000) {}

  async up(q: QueryRunner): Promise<void> {
    for (let after = ''; ;) {
      const rows = (await q.query(
        `SELECT id, locations, location_keys FROM people
          WHERE id > $1 AND ${MAY_CHANGE}
          ORDER BY id
          LIMIT ${this.batch}`,
        [after],
      )) as StoredPerson[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.id;
      const changed = rows
        .map((stored) => ({ id: stored.id, stored: stored.location_keys, keys: locationKeysOf(stored.locations) }))
        .filter(({ stored, keys }) => JSON.stringify(stored) !== JSON.stringify(keys));
      if (changed.length === 0) continue;
      await q.query(
        `UPDATE people p
            SET location_keys = array(SELECT k FROM jsonb_array_elements_text(t.keys) WITH ORDINALITY AS e(k, n) ORDER BY n)
           FROM unnest($1::text[], $2::jsonb[]) AS t(id, keys)
          WHERE p.id = t.id`,
        [changed.map((c) => c.id), changed.map((c) => JSON.stringify(c.keys))],
      );
    }
  }

  async down(): Promise<void> {
    // The old keys are not kept; the new ones are found by the spellings the old ones were (ADR 0012).
  }
}
