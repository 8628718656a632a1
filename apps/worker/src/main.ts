// First: from here a stop signal is noted, not Node's default (ADR 0040); the modules below take ~0.5 s to load.
import '@dossier/runtime/before-nest';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as PinoNestLogger, PinoLogger } from 'nestjs-pino';
import { ConfigError, loadWorkerConfig } from '@dossier/config';
import { StopWhileStarting, createRootLogger, tuneHeap } from '@dossier/runtime';
import { createOrExit } from '@dossier/persistence';
import { WorkerModule } from './worker.module';

async function bootstrap(): Promise<void> {
  const config = loadWorkerConfig();
  tuneHeap(config.heapGrowingPercent);
  const logger = createRootLogger('worker', config.logLevel, { format: config.logFormat });
  // The app's logger from the first line, not a buffer: starting up runs the bootstrap hooks (they wait
  // for Redis), and a worker started before Redis would otherwise say nothing until it came.
  const params = { pinoHttp: { logger } };
  // Starting up ends once Redis answers, and Nest's shutdown hooks wait for it: a stop before then ends the
  // start-up waits instead, and the worker closes once created.
  const starting = new StopWhileStarting();
  const app = await createOrExit(
    () =>
      NestFactory.createApplicationContext(WorkerModule.forRoot(config, logger, starting.signal), {
        logger: new PinoNestLogger(new PinoLogger(params), params),
        abortOnError: false,
      }),
    config.databaseUrl,
    (message) => logger.fatal(message),
  );
  app.useLogger(app.get(PinoNestLogger));
  // From here a stop exits 0 once the active jobs have finished.
  await starting.handOver(app, (message) => new Logger('worker').log(message));
  new Logger('worker').log(`ready: ${config.kinds.join(', ')}`);
}

bootstrap().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
