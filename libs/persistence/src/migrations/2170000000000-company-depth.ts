import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The local index's company depth (ADR 0066): persons with significant control imported from Companies
 * House's PSC snapshot, found by the company's registration key, and accounting parents imported from GLEIF's
 * relationship records, found by the child's LEI. Each keyed by (source, external id) as the other local
 * indexes are, so a re-import changes nothing.
 */
export class CompanyDepth2170000000000 implements MigrationInterface {
  name = 'CompanyDepth2170000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE company_controllers (
        id text PRIMARY KEY,
        source text NOT NULL,
        external_id text NOT NULL,
        company_number text NOT NULL,
        registration_key text NOT NULL,
        name text,
        kind text NOT NULL,
        natures_of_control text[] NOT NULL,
        notified_on date,
        ceased_on date,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT company_controllers_source_external_id_key UNIQUE (source, external_id)
      )`);
    await q.query(`CREATE INDEX company_controllers_registration_key_idx ON company_controllers (registration_key)`);
    await q.query(`
      CREATE TABLE company_parents (
        id text PRIMARY KEY,
        source text NOT NULL,
        external_id text NOT NULL,
        child_lei text NOT NULL,
        level text NOT NULL,
        parent_lei text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT company_parents_source_external_id_key UNIQUE (source, external_id)
      )`);
    await q.query(`CREATE INDEX company_parents_child_lei_idx ON company_parents (child_lei)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE company_parents`);
    await q.query(`DROP TABLE company_controllers`);
  }
}
