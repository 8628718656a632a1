import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import type { Logger } from 'pino';
import type { GatewayConfig } from '@dossier/config';
import { openDataSource } from '@dossier/persistence';
import { RuntimeModule } from '@dossier/runtime';
import { InfraModule } from './infra/infra.module';
import { ApiKeyGuard } from './auth/api-key.guard';
import { AuthController } from './auth/auth.controller';
import { AuthService } from './auth/auth.service';
import { KeyCache } from './auth/key-cache';
import { PasswordHasher } from './auth/passwords';
import { KeyRevocations, RedisKeyRevocations } from './auth/key-revocations';
import { RateLimitGuard } from './rate-limit/rate-limit.guard';
import { RateLimiterService } from './rate-limit/rate-limiter.service';
import { LookupsController } from './lookups/lookups.controller';
import { LookupsService } from './lookups/lookups.service';
import { SubmissionService } from './lookups/submission.service';
import { ResultWaiterService } from './lookups/result-waiter.service';
import { QueuePressureService } from './lookups/queue-pressure.service';
import { UsernameSitesService } from './lookups/username-sites.service';
import { HealthController } from './health/health.controller';
import { ProviderStatusService } from './health/provider-status.service';
import { OpenApiController } from './openapi/openapi.controller';
import { OpenApiService } from './openapi/openapi.service';
import { MetricsController } from './metrics/metrics.controller';
import { MetricsService } from './metrics/metrics.service';
import { MetricsServerService } from './metrics/metrics-server.service';
import { QueueBoardService } from './admin/queue-board.service';
import { HistoryController } from './history/history.controller';
import { SearchHistoryService } from './history/search-history.service';
import { SuppressionsService } from './admin/suppressions.service';
import { WebhooksController } from './webhooks/webhooks.controller';
import { WebhooksService } from './webhooks/webhooks.service';
import { BatchController } from './batch/batch.controller';
import { BatchService } from './batch/batch.service';

@Module({})
export class GatewayModule {
  /**
   * `logger`: the process's pino logger, which Fastify logs through too (its request logger carries the request id).
   * `starting`: aborted by a stop while the gateway starts (StopWhileStarting), which ends its start-up waits.
   */
  static forRoot(config: GatewayConfig, logger: Logger, starting: AbortSignal): DynamicModule {
    return {
      module: GatewayModule,
      imports: [
        // Each request starts in its own I/O callback: one write a turn carries all their commands (ADR 0026).
        RuntimeModule.forRoot({ service: 'gateway', config, logger, starting, flush: 'turn', openDataSource }),
        InfraModule.forRoot(config),
        DiscoveryModule,
      ],
      controllers: [
        AuthController,
        LookupsController,
        BatchController,
        HistoryController,
        WebhooksController,
        HealthController,
        OpenApiController,
        // With METRICS_PORT set, /metrics is served on that port only (MetricsServerService).
        ...(config.metrics === null ? [MetricsController] : []),
      ],
      providers: [
        // Order matters: authenticate first, then rate-limit per key.
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
        AuthService,
        PasswordHasher,
        { provide: KeyCache, useValue: new KeyCache() },
        { provide: KeyRevocations, useClass: RedisKeyRevocations },
        RateLimiterService,
        LookupsService,
        SubmissionService,
        ResultWaiterService,
        QueuePressureService,
        UsernameSitesService,
        OpenApiService,
        MetricsService,
        MetricsServerService,
        QueueBoardService,
        SearchHistoryService,
        SuppressionsService,
        WebhooksService,
        BatchService,
        ProviderStatusService,
      ],
    };
  }
}
