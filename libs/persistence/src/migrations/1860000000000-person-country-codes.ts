import type { MigrationInterface, QueryRunner } from 'typeorm';
import { personRowOf, type PersonRow } from '@dossier/domain';

/** A stored person as the migration reads it back into the record it was imported from. */
type StoredPerson = Pick<
  PersonRow,
  | 'id'
  | 'source'
  | 'external_id'
  | 'full_name'
  | 'first_name'
  | 'last_name'
  | 'aliases'
  | 'emails'
  | 'phones'
  | 'usernames'
  | 'locations'
  | 'birth_year'
  | 'phone_keys'
  | 'location_keys'
>;

const BATCH = 5_000;

/**
 * The local person index's locations as imports now write them (personRowOf): before, a location's
 * country was stored as written, so one imported as `UK` (ISO's code for the United Kingdom is `GB`)
 * was not found by a search in GB, and a phone written nationally on such a record could not be read in
 * its country (the import rejected the line; a record written otherwise kept it unsearchable). Each row
 * with a country that is not a stored code (lower-case, padded, `UK`) is rebuilt through personRowOf
 * itself — its locations, their keys and its phone keys — so the rows match what an import writes now.
 * Only rows that change are written. Not undone by `down`: the old values were the same places.
 */
export class PersonCountryCodes1860000000000 implements MigrationInterface {
  name = 'PersonCountryCodes1860000000000';

  async up(q: QueryRunner): Promise<void> {
    for (let after = ''; ;) {
      const rows = (await q.query(
        `SELECT id, source, external_id, full_name, first_name, last_name, aliases, emails, phones, usernames,
                locations, birth_year, phone_keys, location_keys
           FROM people
          WHERE id > $1
            AND EXISTS (SELECT 1 FROM jsonb_array_elements(locations) AS l
                         WHERE l->>'country' !~ '^[A-Z]{2}$' OR l->>'country' = 'UK')
          ORDER BY id
          LIMIT ${BATCH}`,
        [after],
      )) as StoredPerson[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.id;
      const changed = rows
        .map((stored) => ({ stored, row: personRowOf(stored) }))
        .filter(
          ({ stored, row }) =>
            JSON.stringify([stored.locations, stored.location_keys, stored.phone_keys]) !==
            JSON.stringify([row.locations, row.location_keys, row.phone_keys]),
        );
      if (changed.length === 0) continue;
      await q.query(
        `UPDATE people p
            SET locations = t.locations::jsonb, location_keys = t.location_keys, phone_keys = t.phone_keys
           FROM (SELECT id, locations,
                        array(SELECT k FROM jsonb_array_elements_text(lk) WITH ORDINALITY AS e(k, n) ORDER BY n)
                          AS location_keys,
                        array(SELECT k FROM jsonb_array_elements_text(pk) WITH ORDINALITY AS e(k, n) ORDER BY n)
                          AS phone_keys
                   FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::jsonb[]) AS u(id, locations, lk, pk)) AS t
          WHERE p.id = t.id`,
        [
          changed.map(({ stored }) => stored.id),
          changed.map(({ row }) => JSON.stringify(row.locations)),
          changed.map(({ row }) => JSON.stringify(row.location_keys)),
          changed.map(({ row }) => JSON.stringify(row.phone_keys)),
        ],
      );
    }
  }

  async down(): Promise<void> {
    // The old spellings are not kept; the normalised ones are searched as well as they were.
  }
}
