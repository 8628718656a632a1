// First: from here a stop signal is noted, not Node's default (ADR 0040); the modules below take ~0.5 s to load.
import '@dossier/runtime/before-nest';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigError, loadWorkerConfig } from '@dossier/config';
import { startApp } from '@dossier/runtime';
import { createOrExit } from '@dossier/persistence';
import { WorkerModule } from './worker.module';

async function bootstrap(): Promise<void> {
  const config = loadWorkerConfig();
  // Heap settings, the logger (a worker started before Redis says so as it waits), and the stop signals:
  // starting up ends once Redis answers, and a stop before then ends the start-up waits instead.
  const { logger, stops, create } = startApp('worker', config);
  const app = await createOrExit(
    () =>
      create((nestLogger) =>
        NestFactory.createApplicationContext(WorkerModule.forRoot(config, logger, stops.signal), {
          logger: nestLogger,
          abortOnError: false,
        }),
      ),
    config.databaseUrl,
    (message) => logger.fatal(message),
  );
  // From here a stop exits 0 once the active jobs have finished.
  await stops.handOver(app, (message) => new Logger('worker').log(message));
  new Logger('worker').log(`ready: ${config.kinds.join(', ')}`);
}

bootstrap().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
