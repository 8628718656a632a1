import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The local company index's countries and jurisdictions as imports now write them (companyRowOf): before,
 * a record imported with the country `UK` (ISO's code for the United Kingdom is `GB`) or a jurisdiction
 * written as OpenCorporates writes it (`us_ny`, `gb`) was stored as written, and a search in `GB` or `US`
 * did not find it. Now the country `UK` is `GB`, and a jurisdiction written as a code is upper-case ISO
 * style with `UK` as `GB` (`us_ny` → `US-NY`, `uk_eng` → `GB-ENG`); one written out (`Delaware`) stays.
 * Only rows that change are written. Not undone by `down`: the old values were the same places.
 */
export class CompanyCountryCodes1830000000000 implements MigrationInterface {
  name = 'CompanyCountryCodes1830000000000';

  async up(q: QueryRunner): Promise<void> {
    const jurisdiction = `regexp_replace(upper(replace(jurisdiction, '_', '-')), '^UK(-|$)', 'GB\\1')`;
    await q.query(`
      UPDATE companies
         SET country = CASE WHEN country = 'UK' THEN 'GB' ELSE country END,
             jurisdiction = CASE WHEN jurisdiction ~* '^[a-z]{2}([-_][a-z0-9]{1,3})?$' THEN ${jurisdiction}
                                 ELSE jurisdiction END
       WHERE country = 'UK'
          OR (jurisdiction ~* '^[a-z]{2}([-_][a-z0-9]{1,3})?$' AND jurisdiction <> ${jurisdiction})`);
  }

  async down(): Promise<void> {
    // The old spellings are not kept; the normalised ones are searched as well as they were.
  }
}
