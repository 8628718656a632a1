import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';

interface PgPool {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

const names = new Map<string, string>();

/** A stable prepared-statement name per SQL text: Postgres parses and plans each statement once per connection. */
function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `dossier_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * Runs one SQL statement as a named prepared statement on the DataSource's pg pool and returns its
 * rows. The hot-path statements are all written by hand; TypeORM owns the connection, entities and
 * migrations. (Going through the pool directly also avoids TypeORM's UPDATE `[rows, count]` shape.)
 */
export async function queryRows<T>(db: DataSource, text: string, params: unknown[] = []): Promise<T[]> {
  const pool = (db.driver as unknown as { master: PgPool }).master;
  const result = await pool.query({ name: statementName(text), text, values: params });
  return result.rows as T[];
}
