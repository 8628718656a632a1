import { Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { queuePrefixFor, type GatewayConfig } from '@dossier/config';
import { throttledErrorLog, type RedisConnections } from '@dossier/runtime';
import type { Queue } from 'bullmq';
import { WEBHOOK_QUEUE, openWebhookQueue, webhookAttempts, type WebhookJob } from '@dossier/contracts';
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
} from '@dossier/persistence';
import { CREDIT_OBSERVER, DATA_SOURCE, GATEWAY_CONFIG, METRICS, REDIS_CONNECTIONS, WEBHOOK_DELIVERY } from './tokens';

/**
 * The gateway's own infrastructure on top of RuntimeModule's connections (which the gateway module imports):
 * its config, the webhook-delivery queue, and the repositories. Not global: it shuts down before the runtime,
 * so the webhook queue closes before the Redis connections it shares.
 */
@Module({})
export class InfraModule implements OnApplicationShutdown {
  constructor(@Inject(WEBHOOK_DELIVERY) private readonly webhookQueue: Queue<WebhookJob>) {}

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
        // For the Bull board: the worker's outbox relay fills it (ADR 0062).
        {
          provide: WEBHOOK_DELIVERY,
          inject: [REDIS_CONNECTIONS],
          useFactory: (c: RedisConnections) => {
            const queue = openWebhookQueue(
              queuePrefixFor(config, WEBHOOK_QUEUE),
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
        WEBHOOK_DELIVERY,
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
    await this.webhookQueue.close().catch(() => undefined);
  }
}
