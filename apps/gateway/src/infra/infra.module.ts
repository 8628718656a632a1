import { Global, Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { DataSource } from 'typeorm';
import { RedisConnections, throttledErrorLog, type GatewayConfig } from '@dossier/config';
import type { Queue } from 'bullmq';
import {
  WEBHOOK_QUEUE,
  closeLookupQueues,
  openLookupQueues,
  openWebhookQueue,
  webhookAttempts,
  type LookupQueues,
  type WebhookJob,
} from '@dossier/contracts';
import {
  AccountsRepository,
  ApiKeysRepository,
  BatchesRepository,
  SearchHistoryRepository,
  SearchesRepository,
  SuppressionsRepository,
  WebhooksRepository,
  creditCounter,
  type CreditObserver,
  openDataSource,
} from '@dossier/persistence';
import {
  CREDIT_OBSERVER,
  DATA_SOURCE,
  GATEWAY_CONFIG,
  LOOKUP_QUEUES,
  METRICS,
  REDIS,
  REDIS_CONNECTIONS,
  STARTING,
  WEBHOOK_DELIVERY,
} from './tokens';

/**
 * Connections (Postgres, Redis, the four lookup queues and the webhook-delivery queue), the metrics registry,
 * and the repositories built on them.
 */
@Global()
@Module({})
export class InfraModule implements OnApplicationShutdown {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(REDIS_CONNECTIONS) private readonly redis: RedisConnections,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
    @Inject(WEBHOOK_DELIVERY) private readonly webhookQueue: Queue<WebhookJob>,
  ) {}

  static forRoot(config: GatewayConfig, starting: AbortSignal): DynamicModule {
    const repository = <T>(Repo: new (db: DataSource) => T) => ({
      provide: Repo,
      inject: [DATA_SOURCE],
      useFactory: (db: DataSource) => new Repo(db),
    });
    return {
      module: InfraModule,
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        { provide: STARTING, useValue: starting },
        {
          provide: DATA_SOURCE,
          useFactory: () =>
            openDataSource({
              url: config.databaseUrl,
              poolSize: config.dbPoolSize,
              applicationName: 'dossier-gateway',
            }),
        },
        // Each request starts in its own I/O callback: one write a turn carries all their commands (ADR 0026).
        { provide: REDIS_CONNECTIONS, useFactory: () => RedisConnections.open(config.redis, 'turn') },
        { provide: REDIS, inject: [REDIS_CONNECTIONS], useFactory: (c: RedisConnections) => c.commands() },
        // The producer's connection fails fast: a Redis outage is a 503 in milliseconds, not a hung request.
        {
          provide: LOOKUP_QUEUES,
          inject: [REDIS_CONNECTIONS],
          useFactory: (c: RedisConnections) =>
            openLookupQueues(
              config.queuePrefix,
              c.queues(),
              config.jobRetention,
              throttledErrorLog((message) => new Logger('queues').warn(message)),
            ),
        },
        // Used only when adds fail: the gateway queues what a taken-back job would have (SettledEventsService).
        {
          provide: WEBHOOK_DELIVERY,
          inject: [REDIS_CONNECTIONS],
          useFactory: (c: RedisConnections) => {
            const queue = openWebhookQueue(
              config.queuePrefix,
              c.queues(),
              webhookAttempts(config.webhooks.retryBaseMs),
              config.jobRetention,
            );
            const log = throttledErrorLog((message) => new Logger('queues').warn(message));
            queue.on('error', (error) => log(WEBHOOK_QUEUE, error));
            return queue;
          },
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
        { provide: CREDIT_OBSERVER, inject: [METRICS], useFactory: (metrics: Registry) => creditCounter(metrics) },
        {
          provide: SearchesRepository,
          inject: [DATA_SOURCE, CREDIT_OBSERVER],
          useFactory: (db: DataSource, credits: CreditObserver) => new SearchesRepository(db, credits),
        },
        {
          provide: BatchesRepository,
          inject: [DATA_SOURCE, CREDIT_OBSERVER],
          useFactory: (db: DataSource, credits: CreditObserver) => new BatchesRepository(db, credits),
        },
        repository(SearchHistoryRepository),
        repository(SuppressionsRepository),
        repository(WebhooksRepository),
      ],
      exports: [
        GATEWAY_CONFIG,
        STARTING,
        DATA_SOURCE,
        REDIS,
        REDIS_CONNECTIONS,
        LOOKUP_QUEUES,
        WEBHOOK_DELIVERY,
        METRICS,
        AccountsRepository,
        ApiKeysRepository,
        BatchesRepository,
        SearchesRepository,
        SearchHistoryRepository,
        SuppressionsRepository,
        WebhooksRepository,
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([closeLookupQueues(this.queues), this.webhookQueue.close()]);
    this.redis.close();
    if (this.db.isInitialized) await this.db.destroy();
  }
}
