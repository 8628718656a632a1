import type { DataSource } from 'typeorm';
import { testEnv } from '@dossier/testing';
import { openDataSource } from '../data-source';
import { SQL_FUNCTIONS, sqlFunctionVersion } from './sql-functions';

/**
 * The migrated database (the test run's, migrated by the compiled CLI as `npm run db:migrate` does) holds
 * every SQL function as `sql-functions.ts` defines it now: a definition changed without a migration that
 * applies it again fails here.
 */
describe('SQL functions', () => {
  let db: DataSource;

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 1, applicationName: 'sql-functions' });
  });
  afterAll(async () => {
    await db?.destroy();
  });

  it.each(SQL_FUNCTIONS.map((f) => [f.name, f] as const))('%s is migrated at its current version', async (_, f) => {
    const rows = (await db.query(
      `SELECT obj_description(p.oid, 'pg_proc') AS comment, pg_get_function_identity_arguments(p.oid) AS args
         FROM pg_proc p WHERE p.proname = $1`,
      [f.name],
    )) as { comment: string | null; args: string }[];
    expect(rows.map((r) => r.comment)).toEqual([`dossier ${sqlFunctionVersion(f)}`]);
  });
});
