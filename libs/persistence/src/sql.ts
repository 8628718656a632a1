import type { DataSource } from 'typeorm';

/**
 * Runs one SQL statement and returns its rows. TypeORM's postgres driver answers UPDATE/DELETE with
 * `[rows, rowCount]` and everything else with `rows`; callers should not have to care.
 */
export async function queryRows<T>(db: DataSource, text: string, params: unknown[] = []): Promise<T[]> {
  const raw: unknown = await db.query(text, params);
  if (Array.isArray(raw) && raw.length === 2 && Array.isArray(raw[0]) && typeof raw[1] === 'number') {
    return raw[0] as T[];
  }
  return raw as T[];
}
