import type { MigrationInterface, QueryRunner } from 'typeorm';
import { companyRowOf, type CompanyRow } from '@dossier/domain';

/** A stored company as the migration reads it back into the record it was imported from. */
type StoredCompany = Pick<
  CompanyRow,
  'id' | 'source' | 'external_id' | 'name' | 'registration_number' | 'jurisdiction' | 'country' | 'registration_key'
>;

/**
 * Rows that may change: a jurisdiction not stored as a code (written out: "Delaware", "England and
 * Wales"), or a number keyed with a two-letter prefix and fewer than six digits (`SC12345`, which in GB
 * is `SC012345`). Rows outside it are as an import writes them now.
 */
const MAY_CHANGE = `(jurisdiction !~ '^[A-Z]{2}(-[A-Z0-9]{1,3})?$' OR registration_key ~ '^[A-Z]{2}[0-9]{1,5}$')`;

/**
 * The local company index's jurisdictions and registration keys as imports now write them (companyRowOf):
 * before, a jurisdiction written out ("England and Wales", "Scotland", "Delaware", "State of New York")
 * was stored as written, so the record merged with no registry's (Companies House says `GB`,
 * OpenCorporates `us_de`, read `US-DE`) and a search in its country left it out; and a UK number typed
 * without the zeros after its prefix (`SC12345`) was keyed so, and matched the register's `SC012345`
 * nowhere. Each row that may change is rebuilt through companyRowOf itself — its jurisdiction (one it
 * cannot read, such as "Georgia", stays as written) and its registration key — and only rows whose values
 * differ are written: running it again writes nothing.
 *
 * Cost: the rows are walked by primary key in batches of BATCH matching rows (keyset, never OFFSET), each
 * batch one SELECT and at most one UPDATE of the rows that change, so memory is one batch whatever the
 * table's size. The filter is on no index: the walk reads the whole table once (a sequential pass over
 * `companies`, a few seconds a million rows); the writes are one new row version and one
 * `companies_registration_key_idx` entry per changed row, and only rows whose jurisdiction is written out
 * or whose number has a short prefix ever change — an index imported from registers' codes changes none.
 * Not undone by `down`: the codes name the same places, and the new keys find the old numbers too.
 */
export class CompanyRegistrationPlaces1980000000000 implements MigrationInterface {
  name = 'CompanyRegistrationPlaces1980000000000';

  constructor(private readonly batch = 5_000) {}

  async up(q: QueryRunner): Promise<void> {
    for (let after = ''; ;) {
      const rows = (await q.query(
        `SELECT id, source, external_id, name, registration_number, jurisdiction, country, registration_key
           FROM companies
          WHERE id > $1 AND ${MAY_CHANGE}
          ORDER BY id
          LIMIT ${this.batch}`,
        [after],
      )) as StoredCompany[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.id;
      const changed = rows
        .map((stored) => ({ stored, row: companyRowOf(stored) }))
        .filter(
          ({ stored, row }) =>
            stored.jurisdiction !== row.jurisdiction || stored.registration_key !== row.registration_key,
        );
      if (changed.length === 0) continue;
      await q.query(
        `UPDATE companies c
            SET jurisdiction = t.jurisdiction, registration_key = t.registration_key
           FROM unnest($1::text[], $2::text[], $3::text[]) AS t(id, jurisdiction, registration_key)
          WHERE c.id = t.id`,
        [
          changed.map(({ stored }) => stored.id),
          changed.map(({ row }) => row.jurisdiction),
          changed.map(({ row }) => row.registration_key),
        ],
      );
    }
  }

  async down(): Promise<void> {
    // The old spellings are not kept; the codes and keys find the same records and more.
  }
}
