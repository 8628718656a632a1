import { Global, Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Logger as Pino } from 'pino';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { DataSource } from 'typeorm';
import { queuePrefixFor, type RedisTarget } from '@dossier/config';
import { closeLookupQueues, openLookupQueues, type LookupJobRetention, type LookupQueues } from '@dossier/contracts';
import { RedisConnections, throttledErrorLog, type WriteFlush } from './redis';
import { pinoParams } from './app-start';
import { DATA_SOURCE, LOOKUP_QUEUES, METRICS, REDIS, REDIS_CONNECTIONS, STARTING } from './tokens';

/** What of an app's config the runtime reads (GatewayConfig and WorkerConfig both have it). */
export interface RuntimeConfig {
  databaseUrl: string;
  dbPoolSize: number;
  redis: RedisTarget;
  queuePrefix: string;
  jobRetention: LookupJobRetention;
}

export interface RuntimeOptions {
  /** `dossier-<service>` names the process's Postgres connections. */
  service: 'gateway' | 'worker';
  config: RuntimeConfig;
  /** The process's root pino logger (createRootLogger), which every Nest `Logger` writes through. */
  logger: Pino;
  /** STARTING: aborts when a stop comes before the app is up (StopWhileStarting). */
  starting: AbortSignal;
  /** When this process's coalesced Redis writes leave (ADR 0026). */
  flush: WriteFlush;
  /** Opens the pool (persistence's `openDataSource`: the runtime does not import persistence). */
  openDataSource: (options: {
    url: string;
    poolSize: number;
    applicationName: string;
    relay: string;
  }) => Promise<DataSource>;
}

/**
 * What both apps run on: the logger, Postgres, the Redis connections and a command connection, the lookup
 * queues, the metrics registry, and STARTING. Global, so it shuts down after every module that uses it: the
 * app's services and workers close first, then the queues, Redis and Postgres here.
 */
@Global()
@Module({})
export class RuntimeModule implements OnApplicationShutdown {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(REDIS_CONNECTIONS) private readonly redis: RedisConnections,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
  ) {}

  static forRoot({ service, config, logger, starting, flush, openDataSource }: RuntimeOptions): DynamicModule {
    return {
      module: RuntimeModule,
      imports: [LoggerModule.forRoot(pinoParams(logger))],
      providers: [
        { provide: STARTING, useValue: starting },
        {
          provide: DATA_SOURCE,
          useFactory: () =>
            openDataSource({
              url: config.databaseUrl,
              poolSize: config.dbPoolSize,
              applicationName: `dossier-${service}`,
              // Outbox rows this process settles are its relay's (ADR 0067).
              relay: config.queuePrefix,
            }),
        },
        { provide: REDIS_CONNECTIONS, useFactory: () => RedisConnections.open(config.redis, flush) },
        { provide: REDIS, inject: [REDIS_CONNECTIONS], useFactory: (c: RedisConnections) => c.commands() },
        // Producers' connections fail fast: a Redis outage is an error in milliseconds, not a hung request.
        {
          provide: LOOKUP_QUEUES,
          inject: [REDIS_CONNECTIONS],
          useFactory: (c: RedisConnections) =>
            openLookupQueues(
              (queue) => queuePrefixFor(config, queue),
              c.queues(),
              config.jobRetention,
              throttledErrorLog((message) => new Logger('queues').warn(message)),
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
      ],
      exports: [STARTING, DATA_SOURCE, REDIS_CONNECTIONS, REDIS, LOOKUP_QUEUES, METRICS],
    };
  }

  /** Runs after every other module's shutdown (a global module's distance is the greatest). */
  async onApplicationShutdown(): Promise<void> {
    await closeLookupQueues(this.queues);
    this.redis.close();
    if (this.db.isInitialized) await this.db.destroy();
  }
}
