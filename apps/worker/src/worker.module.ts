import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { loadProviderSettings, type WorkerConfig } from '@dossier/config';
import { PROVIDERS } from '@dossier/providers';
import { openDataSource } from '@dossier/persistence';
import { DATA_SOURCE, PROVIDER_SETTINGS, WORKER_CONFIG } from './infra/tokens';
import { WorkerHostService } from './processors/worker-host.service';
import { ReconcilerService } from './processors/reconciler.service';
import { WorkerHealthService } from './health/worker-health.service';

@Module({})
export class WorkerModule implements OnApplicationShutdown {
  constructor(@Inject(DATA_SOURCE) private readonly db: DataSource) {}

  static forRoot(config: WorkerConfig): DynamicModule {
    return {
      module: WorkerModule,
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        { provide: PROVIDER_SETTINGS, useValue: loadProviderSettings(PROVIDERS.flatMap((p) => p.configKeys)) },
        {
          provide: DATA_SOURCE,
          useFactory: () =>
            openDataSource({ url: config.databaseUrl, poolSize: config.dbPoolSize, applicationName: 'dossier-worker' }),
        },
        WorkerHostService,
        ReconcilerService,
        WorkerHealthService,
      ],
    };
  }

  /** Runs after the workers have closed (Nest shuts providers down before their module). */
  async onApplicationShutdown(): Promise<void> {
    if (this.db.isInitialized) await this.db.destroy();
  }
}
