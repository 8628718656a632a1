import { Inject, Logger as NestLogger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { DataSource } from 'typeorm';
import { ConfigError, loadProviderSettings, type WorkerConfig } from '@dossier/config';
import { RedisConnections, RedisTokenBucket, throttledErrorLog, type RedisClient } from '@dossier/runtime';
import { closeLookupQueues, openLookupQueues, type LookupQueues } from '@dossier/contracts';
import { PROVIDERS, rateLimitOf, settingKeysOf, useUpstreamNetwork } from '@dossier/providers';
import {
  BatchesRepository,
  LocalIndexRepository,
  SearchesRepository,
  WebhooksRepository,
  creditCounter,
  openDataSource,
} from '@dossier/persistence';
import {
  DATA_SOURCE,
  LOOKUP_QUEUES,
  METRICS,
  PROVIDER_SETTINGS,
  REDIS,
  REDIS_CONNECTIONS,
  STARTING,
  WORKER_CONFIG,
} from './infra/tokens';
import { WorkerHostService } from './processors/worker-host.service';
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
export class WorkerModule implements OnApplicationShutdown {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(REDIS_CONNECTIONS) private readonly redis: RedisConnections,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
  ) {}

  /**
   * `logger`: the process's pino logger, which every Nest `Logger` writes through; `starting`: aborts when
   * a stop comes before the worker is up (STARTING).
   */
  static forRoot(config: WorkerConfig, logger: Logger, starting = new AbortController().signal): DynamicModule {
    // Every HTTP upstream call connects with UPSTREAM_CONNECT_TIMEOUT_MS from here on.
    useUpstreamNetwork(config.upstreamNetwork);
    return {
      module: WorkerModule,
      imports: [LoggerModule.forRoot({ pinoHttp: { logger } })],
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        { provide: STARTING, useValue: starting },
        { provide: PROVIDER_SETTINGS, useValue: providerSettings() },
        {
          provide: DATA_SOURCE,
          useFactory: () =>
            openDataSource({ url: config.databaseUrl, poolSize: config.dbPoolSize, applicationName: 'dossier-worker' }),
        },
        // Commands follow replies read together, and BullMQ fetches jobs in a chain: flush each tick (ADR 0026).
        { provide: REDIS_CONNECTIONS, useFactory: () => RedisConnections.open(config.redis, 'tick') },
        { provide: REDIS, inject: [REDIS_CONNECTIONS], useFactory: (c: RedisConnections) => c.commands() },
        {
          provide: LOOKUP_QUEUES,
          inject: [REDIS_CONNECTIONS],
          useFactory: (c: RedisConnections) =>
            openLookupQueues(
              config.queuePrefix,
              c.queues(),
              config.jobRetention,
              throttledErrorLog((message) => new NestLogger('queues').warn(message)),
            ),
        },
        {
          provide: METRICS,
          useFactory: () => {
            const registry = new Registry();
            collectDefaultMetrics({ register: registry });
            return registry;
          },
        },
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
          provide: FanOut,
          inject: [REDIS, ProviderMetrics, PROVIDER_SETTINGS, DATA_SOURCE],
          useFactory: (
            redis: RedisClient,
            metrics: ProviderMetrics,
            settings: Record<string, string | undefined>,
            db: DataSource,
          ) =>
            new FanOut(
              new UpstreamGuards(new RedisTokenBucket(redis), config.queuePrefix, config.upstreams, metrics),
              metrics,
              settings,
              {
                localIndex: new LocalIndexRepository(db),
                unexpected: (provider, error) =>
                  new NestLogger('fan-out').error({ msg: `${provider} failed unexpectedly`, provider, err: error }),
              },
            ),
        },
        WebhookDeliveryService,
        OutboxRelayService,
        WorkerHostService,
        ReconcilerService,
        RetentionService,
        WorkerHealthService,
        ProviderStatusService,
      ],
    };
  }

  /** Runs after the workers have closed (Nest shuts providers down before their module). */
  async onApplicationShutdown(): Promise<void> {
    await closeLookupQueues(this.queues);
    this.redis.close();
    if (this.db.isInitialized) await this.db.destroy();
  }
}
