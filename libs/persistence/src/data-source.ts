import { DataSource } from 'typeorm';
import { AccountEntity } from './entities/account.entity';
import { ApiKeyEntity } from './entities/api-key.entity';
import { SearchEntity } from './entities/search.entity';
import { LedgerEntryEntity } from './entities/ledger-entry.entity';
import { Initial1700000000000 } from './migrations/1700000000000-initial';

export const ENTITIES = [AccountEntity, ApiKeyEntity, SearchEntity, LedgerEntryEntity];
export const MIGRATIONS = [Initial1700000000000];

export interface DataSourceOptions {
  url: string;
  poolSize: number;
  applicationName: string;
}

/** The one way to build a DataSource. Schema changes come from migrations only: never `synchronize`. */
export function createDataSource(options: DataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: options.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    applicationName: options.applicationName,
    extra: {
      max: options.poolSize,
      connectionTimeoutMillis: 2000,
      // a query that hangs (Postgres gone away mid-flight) must not hold a request forever
      query_timeout: 10_000,
    },
  });
}

export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const applied = await dataSource.runMigrations({ transaction: 'all' });
  return applied.map((m) => m.name);
}
