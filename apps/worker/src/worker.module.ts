import { Logger as NestLogger, Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { ConfigError, loadProviderSettings, type WorkerConfig } from '@dossier/config';
import { RedisTokenBucket, RuntimeModule, type RedisClient } from '@dossier/runtime';
import { PROVIDERS, rateLimitOf, settingKeysOf, useUpstreamNetwork } from '@dossier/providers';
import {
  BatchesRepository,
  LocalIndexRepository,
  WatchlistRepository,
  SearchesRepository,
  WebhooksRepository,
  creditCounter,
  openDataSource,
} from '@dossier/persistence';
import { DATA_SOURCE, METRICS, PROVIDER_SETTINGS, REDIS, WORKER_CONFIG } from './infra/tokens';
import { WorkerHostService } from './processors/worker-host.service';
import { LookupProcessors } from './processors/lookup-processors';
import { ReplyPublisher } from './processors/reply-publisher';
import { ReconcilerService } from './processors/reconciler.service';
import { RetentionService } from './processors/retention.service';
import { WorkerMetrics } from './processors/worker-metrics';
import { WorkerHealthService } from './health/worker-health.service';
import { ProviderStatusService } from './health/provider-status.service';
import { FanOut } from './fan-out/fan-out';
import { ProviderMetrics } from './fan-out/provider-metrics';
import { UpstreamGuards } from './fan-out/upstream-guards';
import { WebhookDeliveryService } from './webhooks/webhook-delivery.service';
import { OutboxRelayService } from './webhooks/outbox-relay.service';

/**
 * Every provider's settings, read once; a malformed `<ID>_RATE_LIMIT`, or a setting a provider refuses
 * (e.g. a broken username site list), stops the worker with a message naming it.
 */
function providerSettings(): Record<string, string | undefined> {
  const settings = loadProviderSettings(PROVIDERS.flatMap(settingKeysOf));
  for (const provider of PROVIDERS) {
    try {
      rateLimitOf(provider, settings);
      provider.validateSettings?.(settings);
    } catch (err) {
      throw new ConfigError(`invalid environment:\n  ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return settings;
}

@Module({})
export class WorkerModule {
  /**
   * `logger`: the process's pino logger, which every Nest `Logger` writes through; `starting`: aborts when
   * a stop comes before the worker is up (STARTING).
   */
  static forRoot(config: WorkerConfig, logger: Logger, starting = new AbortController().signal): DynamicModule {
    // Every HTTP upstream call connects with UPSTREAM_CONNECT_TIMEOUT_MS from here on.
    useUpstreamNetwork(config.upstreamNetwork);
    return {
      module: WorkerModule,
      // Commands follow replies read together, and BullMQ fetches jobs in a chain: flush each tick (ADR 0026).
      // The runtime's connections close after this module's services: the workers first (WorkerHostService).
      imports: [RuntimeModule.forRoot({ service: 'worker', config, logger, starting, flush: 'tick', openDataSource })],
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        { provide: PROVIDER_SETTINGS, useValue: providerSettings() },
        { provide: WorkerMetrics, inject: [METRICS], useFactory: (registry: Registry) => new WorkerMetrics(registry) },
        {
          provide: SearchesRepository,
          inject: [DATA_SOURCE, METRICS],
          useFactory: (db: DataSource, registry: Registry) => new SearchesRepository(db, creditCounter(registry)),
        },
        {
          provide: BatchesRepository,
          inject: [DATA_SOURCE],
          useFactory: (db: DataSource) => new BatchesRepository(db),
        },
        {
          provide: WebhooksRepository,
          inject: [DATA_SOURCE],
          useFactory: (db: DataSource) => new WebhooksRepository(db),
        },
        {
          provide: ProviderMetrics,
          inject: [METRICS],
          useFactory: (registry: Registry) => new ProviderMetrics(registry),
        },
        {
          provide: WatchlistRepository,
          inject: [DATA_SOURCE],
          useFactory: (db: DataSource) => new WatchlistRepository(db),
        },
        {
          provide: FanOut,
          inject: [REDIS, ProviderMetrics, PROVIDER_SETTINGS, DATA_SOURCE, WatchlistRepository],
          useFactory: (
            redis: RedisClient,
            metrics: ProviderMetrics,
            settings: Record<string, string | undefined>,
            db: DataSource,
            watchlists: WatchlistRepository,
          ) =>
            new FanOut(
              new UpstreamGuards(new RedisTokenBucket(redis), config.queuePrefix, config.upstreams, metrics),
              metrics,
              settings,
              {
                localIndex: new LocalIndexRepository(db),
                watchlists,
                unexpected: (provider, error) =>
                  new NestLogger('fan-out').error({ msg: `${provider} failed unexpectedly`, provider, err: error }),
              },
            ),
        },
        WebhookDeliveryService,
        OutboxRelayService,
        LookupProcessors,
        ReplyPublisher,
        WorkerHostService,
        ReconcilerService,
        RetentionService,
        WorkerHealthService,
        ProviderStatusService,
      ],
    };
  }
}
