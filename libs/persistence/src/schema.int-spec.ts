import type { DataSource } from 'typeorm';
import { testEnv } from '@dossier/testing';
import { openDataSource, pendingSchemaChanges } from './data-source';

/**
 * The entities and the migrations describe the same schema: after the migrations have run (the test
 * run's database is migrated by the compiled CLI, as `npm run db:migrate` does), TypeORM finds nothing
 * to change. A column, index or constraint added to one side only fails here.
 */
describe('entities and migrations', () => {
  let db: DataSource;

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 1, applicationName: 'schema-drift' });
  });
  afterAll(async () => {
    await db?.destroy();
  });

  it('agree: TypeORM has no schema change to make', async () => {
    expect(await pendingSchemaChanges(db)).toEqual([]);
  });
});
