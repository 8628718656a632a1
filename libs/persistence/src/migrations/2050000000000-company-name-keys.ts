import type { MigrationInterface, QueryRunner } from 'typeorm';
import { normalizeCompanyName, type CompanyRow } from '@dossier/domain';

type StoredCompany = Pick<CompanyRow, 'id' | 'name' | 'name_key'>;

/**
 * Names whose key the new folding can change: with an apostrophe or a backtick, or with a character outside
 * ASCII (a typographic apostrophe, a modifier letter). A name of ASCII letters, digits, spaces and other
 * punctuation folds as it did.
 */
const MAY_CHANGE = `name ~ '[''\`]|[^\\x01-\\x7f]'`;

/**
 * The local company index's name keys (`companies.name_key`) as imports now write them (normalizeCompanyName,
 * ADR 0012): an apostrophe inside a word is dropped, as in a person's name ("McDonald's Corporation" was
 * keyed "mcdonald s", now "mcdonalds"; "L’Oréal S.A." "l oreal", now "loreal"). An import rewrites the key
 * of a record it finds unchanged only if it imports it again, so the rows stored before are re-keyed here,
 * through normalizeCompanyName itself.
 *
 * Batched by id (keyset, BATCH matching rows a statement, never OFFSET): one pass over `companies` along
 * its primary key, the filter (MAY_CHANGE) in SQL, so only names that may change are read into JS and
 * folded; only rows whose key differs are written, one UPDATE a batch (a new row version and one
 * `companies_name_trgm_idx` entry each). Idempotent: a second run writes nothing. The filter is on no
 * index: the walk reads the table once (a few seconds a million rows); the writes are the few percent of
 * names with an apostrophe inside a word. Not undone by `down`: the old keys are made again by no code.
 */
export class CompanyNameKeys2050000000000 implements MigrationInterface {
  name = 'CompanyNameKeys2050000000000';

  constructor(private readonly batch = 5_000) {}

  async up(q: QueryRunner): Promise<void> {
    for (let after = ''; ;) {
      const rows = (await q.query(
        `SELECT id, name, name_key FROM companies
          WHERE id > $1 AND ${MAY_CHANGE}
          ORDER BY id
          LIMIT ${this.batch}`,
        [after],
      )) as StoredCompany[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.id;
      const changed = rows
        .map((stored) => ({ id: stored.id, stored: stored.name_key, key: normalizeCompanyName(stored.name) }))
        .filter(({ stored, key }) => stored !== key);
      if (changed.length === 0) continue;
      await q.query(
        `UPDATE companies c SET name_key = t.name_key
           FROM unnest($1::text[], $2::text[]) AS t(id, name_key)
          WHERE c.id = t.id`,
        [changed.map((c) => c.id), changed.map((c) => c.key)],
      );
    }
  }

  async down(): Promise<void> {
    // The old keys are not kept; the new ones are found by the spellings the old ones were (ADR 0012).
  }
}
