import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The local person and company indexes: the operator's imported records and the demo set, searched by
 * the `local` provider. Every `*_key` column holds a value normalised by the one function in
 * `libs/domain/src/normalize.ts` that the search uses on its input too. Names are searched with pg_trgm.
 */
export class LocalIndexes1710000000000 implements MigrationInterface {
  name = 'LocalIndexes1710000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`
      CREATE TABLE people (
        id text PRIMARY KEY,
        source text NOT NULL,
        external_id text NOT NULL,
        full_name text NOT NULL,
        first_name text,
        last_name text,
        aliases text[] NOT NULL DEFAULT '{}',
        emails text[] NOT NULL DEFAULT '{}',
        phones text[] NOT NULL DEFAULT '{}',
        usernames text[] NOT NULL DEFAULT '{}',
        locations jsonb NOT NULL DEFAULT '[]',
        birth_year integer CHECK (birth_year BETWEEN 1800 AND 2200),
        email_keys text[] NOT NULL DEFAULT '{}',
        phone_keys text[] NOT NULL DEFAULT '{}',
        username_keys text[] NOT NULL DEFAULT '{}',
        location_keys text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT people_source_external_id_key UNIQUE (source, external_id)
      )`);
    await q.query(`CREATE INDEX people_email_keys_idx ON people USING gin (email_keys)`);
    await q.query(`CREATE INDEX people_phone_keys_idx ON people USING gin (phone_keys)`);
    await q.query(`CREATE INDEX people_username_keys_idx ON people USING gin (username_keys)`);
    // One row per name a person goes by (the full name and each alias), folded, for fuzzy search.
    await q.query(`
      CREATE TABLE person_names (
        person_id text NOT NULL REFERENCES people(id) ON DELETE CASCADE,
        name_key text NOT NULL,
        is_alias boolean NOT NULL,
        CONSTRAINT person_names_pkey PRIMARY KEY (person_id, name_key)
      )`);
    await q.query(`CREATE INDEX person_names_trgm_idx ON person_names USING gin (name_key gin_trgm_ops)`);
    await q.query(`
      CREATE TABLE companies (
        id text PRIMARY KEY,
        source text NOT NULL,
        external_id text NOT NULL,
        name text NOT NULL,
        registration_number text,
        jurisdiction text,
        country text,
        domain text,
        status text,
        incorporated_on date,
        address text,
        industry text,
        lei text,
        name_key text NOT NULL,
        registration_key text,
        domain_key text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT companies_source_external_id_key UNIQUE (source, external_id)
      )`);
    await q.query(`CREATE INDEX companies_name_trgm_idx ON companies USING gin (name_key gin_trgm_ops)`);
    await q.query(`CREATE INDEX companies_registration_key_idx ON companies (registration_key)`);
    await q.query(`CREATE INDEX companies_domain_key_idx ON companies (domain_key)`);
    await q.query(`CREATE INDEX companies_lei_idx ON companies (lei)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE companies`);
    await q.query(`DROP TABLE person_names`);
    await q.query(`DROP TABLE people`);
  }
}
