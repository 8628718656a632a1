import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import IORedis, { type Redis } from 'ioredis';
import type { DataSource } from 'typeorm';
import { LOOKUP_KINDS } from '@dossier/domain';
import { failFastRedisOptions, type GatewayConfig } from '@dossier/config';
import { EVENTS_MAX_LEN, QUEUE_NAMES, type LookupQueue, type LookupQueues } from '@dossier/contracts';
import { AccountsRepository, ApiKeysRepository, SearchesRepository, createDataSource } from '@dossier/persistence';
import { DATA_SOURCE, GATEWAY_CONFIG, LOOKUP_QUEUES, REDIS } from './tokens';

const queueTokens = LOOKUP_KINDS.map((kind) => getQueueToken(QUEUE_NAMES[kind]));

/** Connections (Postgres, Redis, the four lookup queues) and the repositories built on them. */
@Global()
@Module({})
export class InfraModule implements OnApplicationShutdown {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: InfraModule,
      imports: [
        BullModule.forRoot({ connection: failFastRedisOptions(config.redisUrl), prefix: config.queuePrefix }),
        BullModule.registerQueue(
          ...LOOKUP_KINDS.map((kind) => ({ name: QUEUE_NAMES[kind], streams: { events: { maxLen: EVENTS_MAX_LEN } } })),
        ),
      ],
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        {
          provide: DATA_SOURCE,
          useFactory: async () => {
            const ds = createDataSource({
              url: config.databaseUrl,
              poolSize: config.dbPoolSize,
              applicationName: 'dossier-gateway',
            });
            await ds.initialize();
            return ds;
          },
        },
        { provide: REDIS, useFactory: () => new IORedis(failFastRedisOptions(config.redisUrl)) },
        {
          provide: LOOKUP_QUEUES,
          inject: queueTokens,
          useFactory: (...queues: LookupQueue[]): LookupQueues =>
            Object.fromEntries(LOOKUP_KINDS.map((kind, i) => [kind, queues[i]])) as LookupQueues,
        },
        {
          provide: AccountsRepository,
          inject: [DATA_SOURCE],
          useFactory: (db: DataSource) => new AccountsRepository(db),
        },
        {
          provide: ApiKeysRepository,
          inject: [DATA_SOURCE],
          useFactory: (db: DataSource) => new ApiKeysRepository(db),
        },
        {
          provide: SearchesRepository,
          inject: [DATA_SOURCE],
          useFactory: (db: DataSource) => new SearchesRepository(db),
        },
      ],
      exports: [
        GATEWAY_CONFIG,
        DATA_SOURCE,
        REDIS,
        LOOKUP_QUEUES,
        AccountsRepository,
        ApiKeysRepository,
        SearchesRepository,
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis.disconnect();
    if (this.db.isInitialized) await this.db.destroy();
  }
}
