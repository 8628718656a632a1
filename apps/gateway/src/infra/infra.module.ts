import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import IORedis, { type Redis } from 'ioredis';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { DataSource } from 'typeorm';
import { failFastRedisOptions, type GatewayConfig } from '@dossier/config';
import { closeLookupQueues, openLookupQueues, type LookupQueues } from '@dossier/contracts';
import {
  AccountsRepository,
  ApiKeysRepository,
  SearchesRepository,
  creditCounter,
  openDataSource,
} from '@dossier/persistence';
import { DATA_SOURCE, GATEWAY_CONFIG, LOOKUP_QUEUES, METRICS, REDIS } from './tokens';

/** Connections (Postgres, Redis, the four lookup queues), the metrics registry, and the repositories built on them. */
@Global()
@Module({})
export class InfraModule implements OnApplicationShutdown {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
  ) {}

  static forRoot(config: GatewayConfig): DynamicModule {
    const repository = <T>(Repo: new (db: DataSource) => T) => ({
      provide: Repo,
      inject: [DATA_SOURCE],
      useFactory: (db: DataSource) => new Repo(db),
    });
    return {
      module: InfraModule,
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        {
          provide: DATA_SOURCE,
          useFactory: () =>
            openDataSource({
              url: config.databaseUrl,
              poolSize: config.dbPoolSize,
              applicationName: 'dossier-gateway',
            }),
        },
        { provide: REDIS, useFactory: () => new IORedis(failFastRedisOptions(config.redisUrl)) },
        // The producer's connection fails fast: a Redis outage is a 503 in milliseconds, not a hung request.
        {
          provide: LOOKUP_QUEUES,
          useFactory: () => openLookupQueues(config.queuePrefix, failFastRedisOptions(config.redisUrl)),
        },
        repository(AccountsRepository),
        repository(ApiKeysRepository),
        {
          provide: METRICS,
          useFactory: () => {
            const registry = new Registry();
            collectDefaultMetrics({ register: registry });
            return registry;
          },
        },
        {
          provide: SearchesRepository,
          inject: [DATA_SOURCE, METRICS],
          useFactory: (db: DataSource, metrics: Registry) => new SearchesRepository(db, creditCounter(metrics)),
        },
      ],
      exports: [
        GATEWAY_CONFIG,
        DATA_SOURCE,
        REDIS,
        LOOKUP_QUEUES,
        METRICS,
        AccountsRepository,
        ApiKeysRepository,
        SearchesRepository,
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await closeLookupQueues(this.queues);
    this.redis.disconnect();
    if (this.db.isInitialized) await this.db.destroy();
  }
}
