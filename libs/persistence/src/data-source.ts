import { DataSource } from 'typeorm';
import { AccountEntity } from './entities/account.entity';
import { ApiKeyEntity } from './entities/api-key.entity';
import { SearchEntity } from './entities/search.entity';
import { LedgerEntryEntity } from './entities/ledger-entry.entity';
import { PersonRecordEntity } from './entities/person-record.entity';
import { PersonNameEntity } from './entities/person-name.entity';
import { CompanyRecordEntity } from './entities/company-record.entity';
import { SuppressionEntity } from './entities/suppression.entity';
import { WebhookDeliveryEntity, WebhookEntity } from './entities/webhook.entity';
import { BatchEntity } from './entities/batch.entity';
import { OutboxEntity } from './entities/outbox.entity';
import { PersonWordEntity } from './entities/person-word.entity';
import {
  WatchlistEntity,
  WatchlistEntryEntity,
  WatchlistNameEntity,
  WatchlistWordEntity,
} from './entities/watchlist.entity';
import { CompanyControllerEntity, CompanyParentEntity } from './entities/company-depth.entity';
import { Initial1700000000000 } from './migrations/1700000000000-initial';
import { LocalIndexes1710000000000 } from './migrations/1710000000000-local-indexes';
import { PersonNameWords1720000000000 } from './migrations/1720000000000-person-name-words';
import { SearchHistory1740000000000 } from './migrations/1740000000000-search-history';
import { Suppressions1730000000000 } from './migrations/1730000000000-suppressions';
import { SearchesRetention1745000000000 } from './migrations/1745000000000-searches-retention';
import { Webhooks1760000000000 } from './migrations/1760000000000-webhooks';
import { ApiKeyMode1770000000000 } from './migrations/1770000000000-api-key-mode';
import { Batches1780000000000 } from './migrations/1780000000000-batches';
import { BatchedReservations1790000000000 } from './migrations/1790000000000-batched-reservations';
import { WebhookMode1800000000000 } from './migrations/1800000000000-webhook-mode';
import { IdempotencyAcrossKinds1810000000000 } from './migrations/1810000000000-idempotency-across-kinds';
import { BatchesUpkeep1820000000000 } from './migrations/1820000000000-batches-upkeep';
import { CompanyCountryCodes1830000000000 } from './migrations/1830000000000-company-country-codes';
import { WebhookDeliveriesRetention1840000000000 } from './migrations/1840000000000-webhook-deliveries-retention';
import { UsernameKeysAfterAt1850000000000 } from './migrations/1850000000000-username-keys-after-at';
import { PersonCountryCodes1860000000000 } from './migrations/1860000000000-person-country-codes';
import { WebhookDeliveryPerAttempt1900000000000 } from './migrations/1900000000000-webhook-delivery-per-attempt';
import { LoginKeys1920000000000 } from './migrations/1920000000000-login-keys';
import { GrantReferences1930000000000 } from './migrations/1930000000000-grant-references';
import { CompanyRegistrationPlaces1980000000000 } from './migrations/1980000000000-company-registration-places';
import { PersonNameKeys1990000000000 } from './migrations/1990000000000-person-name-keys';
import { SuppressionNameAliases2040000000000 } from './migrations/2040000000000-suppression-name-aliases';
import { CompanyNameKeys2050000000000 } from './migrations/2050000000000-company-name-keys';
import { ApiKeysByRevocation2080000000000 } from './migrations/2080000000000-api-keys-by-revocation';
import { PersonLocationKeys2110000000000 } from './migrations/2110000000000-person-location-keys';
import { SearchResultTotal2120000000000 } from './migrations/2120000000000-search-result-total';
import { SearchProgress2149000000000 } from './migrations/2149000000000-search-progress';
import { Outbox2150000000000 } from './migrations/2150000000000-outbox';
import { SqlFunctions2151000000000 } from './migrations/2151000000000-sql-functions';
import { Watchlists2164000000000 } from './migrations/2164000000000-watchlists';
import { CompanyDepth2170000000000 } from './migrations/2170000000000-company-depth';
import { OutboxRelay2180000000000 } from './migrations/2180000000000-outbox-relay';
import { PersonWords2190000000000 } from './migrations/2190000000000-person-words';
import { PersonNamesCascade2200000000000 } from './migrations/2200000000000-person-names-cascade';

export const ENTITIES = [
  AccountEntity,
  ApiKeyEntity,
  SearchEntity,
  LedgerEntryEntity,
  PersonRecordEntity,
  PersonNameEntity,
  CompanyRecordEntity,
  SuppressionEntity,
  WebhookEntity,
  WebhookDeliveryEntity,
  BatchEntity,
  OutboxEntity,
  PersonWordEntity,
  WatchlistEntity,
  WatchlistEntryEntity,
  WatchlistNameEntity,
  WatchlistWordEntity,
  CompanyControllerEntity,
  CompanyParentEntity,
];
export const MIGRATIONS = [
  Initial1700000000000,
  LocalIndexes1710000000000,
  PersonNameWords1720000000000,
  Suppressions1730000000000,
  SearchHistory1740000000000,
  SearchesRetention1745000000000,
  Webhooks1760000000000,
  ApiKeyMode1770000000000,
  Batches1780000000000,
  BatchedReservations1790000000000,
  WebhookMode1800000000000,
  IdempotencyAcrossKinds1810000000000,
  BatchesUpkeep1820000000000,
  CompanyCountryCodes1830000000000,
  WebhookDeliveriesRetention1840000000000,
  UsernameKeysAfterAt1850000000000,
  PersonCountryCodes1860000000000,
  WebhookDeliveryPerAttempt1900000000000,
  LoginKeys1920000000000,
  GrantReferences1930000000000,
  CompanyRegistrationPlaces1980000000000,
  PersonNameKeys1990000000000,
  SuppressionNameAliases2040000000000,
  CompanyNameKeys2050000000000,
  ApiKeysByRevocation2080000000000,
  PersonLocationKeys2110000000000,
  SearchResultTotal2120000000000,
  SearchProgress2149000000000,
  Outbox2150000000000,
  SqlFunctions2151000000000,
  Watchlists2164000000000,
  CompanyDepth2170000000000,
  OutboxRelay2180000000000,
  PersonWords2190000000000,
  PersonNamesCascade2200000000000,
];

export interface DataSourceOptions {
  url: string;
  poolSize: number;
  applicationName: string;
  /**
   * The longest one query may take (default 10 s: a hung query must not hold a request forever); null for
   * none — migrations, which build indexes over the whole local index.
   */
  queryTimeoutMs?: number | null;
  /**
   * The outbox relay this process is (ADR 0067): its QUEUE_PREFIX, set as `dossier.relay` on every
   * connection. The outbox rows its settles write carry it, and its relay claims only those, so two
   * deployments (or test stacks) on one database never queue each other's events. Letters, digits, `_ - { }`.
   */
  relay?: string;
}

/** pg_trgm's `%` threshold on every connection (see createDataSource). */
export const NAME_SIMILARITY_THRESHOLD = 0.4;

/**
 * A query's two clocks. The server's `statement_timeout` runs out first (a tenth sooner, at most 1 s) and
 * cancels the statement, which rolls it back: a reservation stuck behind a lock is then truly not made
 * when the caller hears "nothing was charged". Before, only the client gave up (`query_timeout`), and
 * the statement could still commit after the answer. The client's stays, for a server gone away
 * mid-flight, whose statement nothing cancels.
 */
function queryTimeouts(ms: number | null): { query_timeout?: number; statement_timeout?: number } {
  if (ms === null) return {};
  return { query_timeout: ms, statement_timeout: ms - Math.min(1000, Math.ceil(ms / 10)) };
}

/**
 * pg_trgm's `<<%` threshold on every connection: the candidates a typed word no name holds may be widened to
 * (ADR 0070). Low, as a swap of two letters leaves a short word few trigrams in common ("jones" and "joens"
 * share 2 of 10: 0.2); the edit distance then decides. Nothing else uses `<<%`.
 */
export const WORD_WIDENING_THRESHOLD = 0.2;

/**
 * The connection's startup settings: pg_trgm's thresholds; no JIT compilation and no parallel workers (ADR 0072:
 * at ten million people the person search's estimated cost passes `jit_above_cost` and the planner's parallel
 * thresholds, and a search that runs in 1–6 ms spent about 60 ms compiling and 40 ms starting workers); and the
 * outbox relay when the process is one.
 */
function startupOptions(relay: string | undefined): string {
  const settings = [
    `-c pg_trgm.similarity_threshold=${NAME_SIMILARITY_THRESHOLD}`,
    `-c pg_trgm.strict_word_similarity_threshold=${WORD_WIDENING_THRESHOLD}`,
    '-c jit=off',
    '-c max_parallel_workers_per_gather=0',
  ];
  if (relay !== undefined) {
    if (!/^[A-Za-z0-9_{}-]{1,64}$/.test(relay)) throw new Error(`outbox relay name ${JSON.stringify(relay)}`);
    settings.push(`-c dossier.relay=${relay}`);
  }
  return settings.join(' ');
}

/** Schema changes come from migrations only: never `synchronize`. */
function createDataSource(options: DataSourceOptions): DataSource {
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
      ...queryTimeouts(options.queryTimeoutMs === undefined ? 10_000 : options.queryTimeoutMs),
      // The local name search's fuzzy path (`%`): pg_trgm's GIN scan prunes by this threshold, so 0.4
      // (not the default 0.3) keeps most typos and initials while a common first name no longer makes it
      // recheck thousands of rows (ADR 0012; measured with `npm run bench -- --data`).
      options: startupOptions(options.relay),
    },
  });
}

/** The one way to get a DataSource: built and connected. */
export async function openDataSource(options: DataSourceOptions): Promise<DataSource> {
  const dataSource = createDataSource(options);
  await dataSource.initialize();
  return dataSource;
}

/** The advisory lock migration runs take turns on (any constant of our own: "dossier" in ASCII, 0x646f7373696572). */
const MIGRATION_LOCK = '28270039319274866';

/**
 * Applies the pending migrations, in one transaction. Runs in several processes at once (a deploy's
 * migrate job and an operator's, a start script on two hosts) take turns on an advisory lock: the later
 * one waits, then finds nothing left to apply — where it had failed on the catalog's unique index.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const lock = dataSource.createQueryRunner();
  await lock.connect();
  try {
    await lock.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK}::bigint)`);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'all' });
      return applied.map((m) => m.name);
    } finally {
      await lock.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK}::bigint)`);
    }
  } finally {
    await lock.release();
  }
}

/**
 * The statements TypeORM would run to make the database match the entities: empty when the
 * migrations and the entities describe the same schema (the drift check runs this after migrating).
 */
export async function pendingSchemaChanges(dataSource: DataSource): Promise<string[]> {
  const log = await dataSource.driver.createSchemaBuilder().log();
  return log.upQueries.map((q) => q.query);
}
