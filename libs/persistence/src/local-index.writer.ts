import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { DataSource } from 'typeorm';
import type { CompanyRow, ControllerRow, ParentRow, PersonRow } from '@dossier/domain';

/**
 * What a write did: rows new to the index, rows whose (source, external id) was there with other values, and
 * rows a later row of the same batch with the same (source, external id) replaced before either was written.
 * The rest were there already with the same values.
 */
export interface WriteCounts {
  imported: number;
  updated: number;
  superseded: number;
}

type Column<R> = { name: keyof R & string; type: 'text' | 'text[]' | 'jsonb' | 'integer' | 'date' };

const PERSON_COLUMNS: Column<PersonRow>[] = [
  { name: 'id', type: 'text' },
  { name: 'source', type: 'text' },
  { name: 'external_id', type: 'text' },
  { name: 'full_name', type: 'text' },
  { name: 'first_name', type: 'text' },
  { name: 'last_name', type: 'text' },
  { name: 'aliases', type: 'text[]' },
  { name: 'emails', type: 'text[]' },
  { name: 'phones', type: 'text[]' },
  { name: 'usernames', type: 'text[]' },
  { name: 'locations', type: 'jsonb' },
  { name: 'birth_year', type: 'integer' },
  { name: 'email_keys', type: 'text[]' },
  { name: 'phone_keys', type: 'text[]' },
  { name: 'username_keys', type: 'text[]' },
  { name: 'location_keys', type: 'text[]' },
];

const COMPANY_COLUMNS: Column<CompanyRow>[] = [
  { name: 'id', type: 'text' },
  { name: 'source', type: 'text' },
  { name: 'external_id', type: 'text' },
  { name: 'name', type: 'text' },
  { name: 'registration_number', type: 'text' },
  { name: 'jurisdiction', type: 'text' },
  { name: 'country', type: 'text' },
  { name: 'domain', type: 'text' },
  { name: 'status', type: 'text' },
  { name: 'incorporated_on', type: 'date' },
  { name: 'address', type: 'text' },
  { name: 'industry', type: 'text' },
  { name: 'lei', type: 'text' },
  { name: 'name_key', type: 'text' },
  { name: 'registration_key', type: 'text' },
  { name: 'domain_key', type: 'text' },
];

const CONTROLLER_COLUMNS: Column<ControllerRow>[] = [
  { name: 'id', type: 'text' },
  { name: 'source', type: 'text' },
  { name: 'external_id', type: 'text' },
  { name: 'company_number', type: 'text' },
  { name: 'registration_key', type: 'text' },
  { name: 'name', type: 'text' },
  { name: 'kind', type: 'text' },
  { name: 'natures_of_control', type: 'text[]' },
  { name: 'notified_on', type: 'date' },
  { name: 'ceased_on', type: 'date' },
];

const PARENT_COLUMNS: Column<ParentRow>[] = [
  { name: 'id', type: 'text' },
  { name: 'source', type: 'text' },
  { name: 'external_id', type: 'text' },
  { name: 'child_lei', type: 'text' },
  { name: 'level', type: 'text' },
  { name: 'parent_lei', type: 'text' },
];

/**
 * The most UTF-8 bytes a value the local indexes hold in an index entry may have. Postgres refuses an
 * entry over about 2,700 bytes (B-tree 2,704, GIN 2,712) that it cannot compress, failing the whole
 * statement: an import's batch of thousands of rows. Half that, less the entry's headers, so that
 * (source, external_id) fits in one entry.
 */
export const MAX_INDEXED_BYTES = 1300;

/** Each field of a row whose values, or the keys made of them, are index entries. */
type Indexed<R> = [field: string, values: (row: R) => readonly (string | null)[]][];

const PERSON_INDEXED: Indexed<PersonRow> = [
  ['source', (r) => [r.source]],
  ['external_id', (r) => [r.external_id]],
  ['full_name', (r) => r.names.filter((n) => !n.is_alias).map((n) => n.name_key)],
  ['aliases', (r) => r.names.filter((n) => n.is_alias).map((n) => n.name_key)],
  ['emails', (r) => r.email_keys],
  ['phones', (r) => r.phone_keys],
  ['usernames', (r) => r.username_keys],
];

const COMPANY_INDEXED: Indexed<CompanyRow> = [
  ['source', (r) => [r.source]],
  ['external_id', (r) => [r.external_id]],
  ['registration_number', (r) => [r.registration_key]],
  ['domain', (r) => [r.domain_key]],
  ['lei', (r) => [r.lei]],
];

function tooLong<R>(indexed: Indexed<R>, row: R): string | null {
  const over = (v: string | null) => v !== null && Buffer.byteLength(v) > MAX_INDEXED_BYTES;
  return indexed.find(([, values]) => values(row).some(over))?.[0] ?? null;
}

/** The first field of a person row with a value too long for its index (MAX_INDEXED_BYTES), or null. */
export function personFieldTooLong(row: PersonRow): string | null {
  return tooLong(PERSON_INDEXED, row);
}

/** The first field of a company row with a value too long for its index (MAX_INDEXED_BYTES), or null. */
export function companyFieldTooLong(row: CompanyRow): string | null {
  return tooLong(COMPANY_INDEXED, row);
}

// ---- COPY's text format ----

const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIALS = /[\\\t\n\r]/g;
const COPY_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A value in COPY's text format: `\N` for null; backslash, tab and line breaks escaped. */
function copyText(value: string | null): string {
  if (value === null) return '\\N';
  // Most values have nothing to escape: a test is far cheaper than a replace with a callback.
  return COPY_SPECIAL.test(value) ? value.replace(COPY_SPECIALS, (c) => COPY_ESCAPES[c]!) : value;
}

/** A text[] literal: every element double-quoted, `"` and `\` escaped. */
function arrayLiteral(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(',')}}`;
}

function copyLine<R>(columns: Column<R>[], row: R, seq: number): string {
  const fields = columns.map(({ name, type }) => {
    const v = row[name] as unknown;
    if (v === null || v === undefined) return '\\N';
    if (type === 'text[]') return copyText(arrayLiteral(v as string[]));
    if (type === 'jsonb') return copyText(JSON.stringify(v));
    return copyText(String(v));
  });
  return `${seq}\t${fields.join('\t')}\n`;
}

/**
 * COPY `lines` into `target` (a table and its columns) in one chunk: a stream of a chunk per row costs a
 * socket write per row (a third of the importer's CPU at 5,000 rows a batch, by profile).
 */
async function copyInto(client: PgClient, target: string, lines: readonly string[]): Promise<void> {
  await pipeline(Readable.from([lines.join('')]), client.query(copyFrom(`COPY ${target} FROM STDIN`)));
}

/** The part of a pooled `pg` client the writer uses: queries and COPY streams. */
interface PgClient {
  query<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: T[] }>;
  query(stream: ReturnType<typeof copyFrom>): ReturnType<typeof copyFrom>;
}

/**
 * Upserts one batch: COPY into a temporary staging table, then one statement keyed by (source, external id)
 * — the last of duplicates in the batch wins (the others are counted as superseded); a record already there
 * with the same values is left alone (not counted); a changed one replaces the old version. Returns the ids
 * inserted or replaced.
 */
async function upsertBatch<R extends { id: string }>(
  client: PgClient,
  table: string,
  columns: Column<R>[],
  rows: readonly R[],
): Promise<WriteCounts & { written: string[] }> {
  const stage = `${table}_stage`;
  const names = columns.map((c) => c.name);
  const changed = names.filter((c) => c !== 'id');
  await client.query(
    `CREATE TEMP TABLE IF NOT EXISTS ${stage} (seq integer, ${columns.map((c) => `${c.name} ${c.type}`).join(', ')})
     ON COMMIT DELETE ROWS`,
  );
  await copyInto(
    client,
    `${stage} (seq, ${names.join(', ')})`,
    rows.map((row, i) => copyLine(columns, row, i)),
  );
  const cols = names.join(', ');
  const { rows: counts } = await client.query<{ imported: number; updated: number; written: string[] }>(
    `WITH latest AS (
       SELECT DISTINCT ON (source, external_id) ${cols} FROM ${stage} ORDER BY source, external_id, seq DESC
     ),
     written AS (
       INSERT INTO ${table} (${cols}) SELECT ${cols} FROM latest
       ON CONFLICT (source, external_id) DO UPDATE SET
         ${changed.map((c) => `${c} = excluded.${c}`).join(', ')}, updated_at = now()
       WHERE (${changed.map((c) => `${table}.${c}`).join(', ')}) IS DISTINCT FROM (${changed.map((c) => `excluded.${c}`).join(', ')})
       RETURNING id, (xmax = 0) AS inserted
     )
     SELECT count(*) FILTER (WHERE inserted)::int AS imported, count(*) FILTER (WHERE NOT inserted)::int AS updated,
            coalesce(array_agg(id), '{}') AS written
       FROM written`,
  );
  // A row's id is made of its (source, external id) (subjectId): one id per record the batch holds.
  const distinct = new Set(rows.map((r) => r.id)).size;
  return { ...counts[0]!, superseded: rows.length - distinct };
}

async function inTransaction<T>(db: DataSource, work: (client: PgClient) => Promise<T>): Promise<T> {
  const runner = db.createQueryRunner();
  const client = (await runner.connect()) as PgClient;
  await client.query('BEGIN');
  try {
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await runner.release();
  }
}

/**
 * Upserts people by (source, external id), with their searchable names, in one transaction per call
 * (importers call it once per batch): COPY into staging, one upsert, then the names of the people
 * inserted or replaced, and their words new to person_words (never deleted: a word no name holds any more
 * only widens a search to nobody).
 */
export async function writePeople(db: DataSource, rows: readonly PersonRow[]): Promise<WriteCounts> {
  if (rows.length === 0) return { imported: 0, updated: 0, superseded: 0 };
  return inTransaction(db, async (client) => {
    const { imported, updated, superseded, written } = await upsertBatch(client, 'people', PERSON_COLUMNS, rows);
    if (written.length > 0) {
      const byId = new Map(rows.map((r) => [r.id, r]));
      const lines: string[] = [];
      const words = new Set<string>();
      for (const id of written) {
        // A name key once per person (the primary key), its first occurrence kept.
        const seen = new Set<string>();
        for (const n of byId.get(id)!.names) {
          if (seen.has(n.name_key)) continue;
          seen.add(n.name_key);
          lines.push(`${copyText(id)}\t${copyText(n.name_key)}\t${n.is_alias ? 't' : 'f'}\n`);
          for (const word of n.name_key.split(' ')) if (word !== '') words.add(word);
        }
      }
      if (updated > 0) await client.query(`DELETE FROM person_names WHERE person_id = ANY($1::text[])`, [written]);
      await copyInto(client, 'person_names (person_id, name_key, is_alias)', lines);
      // The names' words (ADR 0070), sorted: two imports adding the same words take their locks in one order.
      await client.query(`INSERT INTO person_words (word) SELECT unnest($1::text[]) ON CONFLICT (word) DO NOTHING`, [
        [...words].sort(),
      ]);
    }
    return { imported, updated, superseded };
  });
}

/** Upserts rows of one of the tables keyed by (source, external id) alone, in one transaction per call. */
function writeKeyed<R extends { id: string }>(table: string, columns: Column<R>[]) {
  return async (db: DataSource, rows: readonly R[]): Promise<WriteCounts> => {
    if (rows.length === 0) return { imported: 0, updated: 0, superseded: 0 };
    return inTransaction(db, async (client) => {
      const { imported, updated, superseded } = await upsertBatch(client, table, columns, rows);
      return { imported, updated, superseded };
    });
  };
}

export const writeCompanies = writeKeyed('companies', COMPANY_COLUMNS);
/** Persons with significant control from the PSC snapshot (ADR 0066). */
export const writeControllers = writeKeyed('company_controllers', CONTROLLER_COLUMNS);
/** Accounting parents from GLEIF's relationship records (ADR 0066). */
export const writeParents = writeKeyed('company_parents', PARENT_COLUMNS);
