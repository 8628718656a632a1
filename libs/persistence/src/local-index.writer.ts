import type { DataSource } from 'typeorm';
import type { CompanyRow, PersonRow } from '@dossier/domain';

/** What a write did: rows new to the index, and rows whose (source, external id) was there with other values. */
export interface WriteCounts {
  imported: number;
  updated: number;
}

const PERSON_COLUMNS = [
  'id',
  'source',
  'external_id',
  'full_name',
  'first_name',
  'last_name',
  'aliases',
  'emails',
  'phones',
  'usernames',
  'locations',
  'birth_year',
  'email_keys',
  'phone_keys',
  'username_keys',
  'location_keys',
] as const;

const COMPANY_COLUMNS = [
  'id',
  'source',
  'external_id',
  'name',
  'registration_number',
  'jurisdiction',
  'country',
  'domain',
  'status',
  'incorporated_on',
  'address',
  'industry',
  'lei',
  'name_key',
  'registration_key',
  'domain_key',
] as const;

function upsertSql(table: string, columns: readonly string[], recordType: string): string {
  const cols = columns.join(', ');
  const changed = columns.filter((c) => c !== 'id');
  return `
    WITH input AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(${recordType})),
    written AS (
      INSERT INTO ${table} (${cols}) SELECT ${cols} FROM input
      ON CONFLICT (source, external_id) DO UPDATE SET
        ${changed.map((c) => `${c} = excluded.${c}`).join(', ')}, updated_at = now()
      WHERE (${changed.map((c) => `${table}.${c}`).join(', ')}) IS DISTINCT FROM (${changed.map((c) => `excluded.${c}`).join(', ')})
      RETURNING id, (xmax = 0) AS inserted
    )
    SELECT count(*) FILTER (WHERE inserted)::int AS imported, count(*) FILTER (WHERE NOT inserted)::int AS updated,
           coalesce(array_agg(id) FILTER (WHERE NOT inserted), '{}') AS updated_ids
    FROM written`;
}

const PERSON_TYPES =
  'id text, source text, external_id text, full_name text, first_name text, last_name text, aliases text[], ' +
  'emails text[], phones text[], usernames text[], locations jsonb, birth_year integer, email_keys text[], ' +
  'phone_keys text[], username_keys text[], location_keys text[]';
const COMPANY_TYPES =
  'id text, source text, external_id text, name text, registration_number text, jurisdiction text, country text, ' +
  'domain text, status text, incorporated_on date, address text, industry text, lei text, name_key text, ' +
  'registration_key text, domain_key text';

/**
 * Upserts people by (source, external id), with their searchable names, in one transaction: a record
 * already there with the same values is left alone (not counted), a changed one replaces the old version.
 */
export async function writePeople(db: DataSource, rows: readonly PersonRow[]): Promise<WriteCounts> {
  if (rows.length === 0) return { imported: 0, updated: 0 };
  return db.transaction(async (tx) => {
    const people = rows.map((r) => Object.fromEntries(PERSON_COLUMNS.map((c) => [c, r[c]])));
    const [counts] = (await tx.query(upsertSql('people', PERSON_COLUMNS, PERSON_TYPES), [JSON.stringify(people)])) as {
      imported: number;
      updated: number;
      updated_ids: string[];
    }[];
    const names = rows.flatMap((r) => r.names.map((n) => ({ person_id: r.id, ...n })));
    await tx.query(`DELETE FROM person_names WHERE person_id = ANY($1::text[])`, [counts!.updated_ids]);
    await tx.query(
      `INSERT INTO person_names (person_id, name_key, is_alias)
       SELECT person_id, name_key, is_alias FROM jsonb_to_recordset($1::jsonb) AS r(person_id text, name_key text, is_alias boolean)
       ON CONFLICT (person_id, name_key) DO NOTHING`,
      [JSON.stringify(names)],
    );
    return { imported: counts!.imported, updated: counts!.updated };
  });
}

export async function writeCompanies(db: DataSource, rows: readonly CompanyRow[]): Promise<WriteCounts> {
  if (rows.length === 0) return { imported: 0, updated: 0 };
  const companies = rows.map((r) => Object.fromEntries(COMPANY_COLUMNS.map((c) => [c, r[c]])));
  const [counts] = (await db.query(upsertSql('companies', COMPANY_COLUMNS, COMPANY_TYPES), [
    JSON.stringify(companies),
  ])) as WriteCounts[];
  return { imported: counts!.imported, updated: counts!.updated };
}
