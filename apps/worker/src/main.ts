import 'reflect-metadata';
import '@dossier/config/before-nest';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as PinoNestLogger, PinoLogger } from 'nestjs-pino';
import { ConfigError, createRootLogger, loadWorkerConfig, tuneHeap } from '@dossier/config';
import { createOrExit } from '@dossier/persistence';
import { WorkerModule } from './worker.module';

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

async function bootstrap(): Promise<void> {
  const config = loadWorkerConfig();
  tuneHeap(config.heapGrowingPercent);
  const logger = createRootLogger('worker', config.logLevel, { format: config.logFormat });
  // The app's logger from the first line, not a buffer: starting up runs the bootstrap hooks (they wait
  // for Redis), and a worker started before Redis would otherwise say nothing until it came.
  const params = { pinoHttp: { logger } };
  // Starting up ends once Redis answers, and Nest's shutdown hooks wait for it: a stop before then ends the
  // start-up waits instead, and the worker closes as below.
  const starting = new AbortController();
  const stopStarting = (): void => starting.abort();
  for (const signal of STOP_SIGNALS) process.on(signal, stopStarting);
  const app = await createOrExit(
    () =>
      NestFactory.createApplicationContext(WorkerModule.forRoot(config, logger, starting.signal), {
        logger: new PinoNestLogger(new PinoLogger(params), params),
        abortOnError: false,
      }),
    config.databaseUrl,
    (message) => logger.fatal(message),
  );
  for (const signal of STOP_SIGNALS) process.off(signal, stopStarting);
  app.useLogger(app.get(PinoNestLogger));
  if (starting.signal.aborted) {
    new Logger('worker').log('stopped before it was up (waiting for Redis): closing');
    await app.close();
    process.exit(0);
  }
  // Exit with 0 once the active jobs have finished: Nest's default re-raises the signal, so an orderly
  // stop would look like a crash (exit by SIGTERM) to a supervisor.
  app.enableShutdownHooks([...STOP_SIGNALS], { useProcessExit: true });
  new Logger('worker').log(`ready: ${config.kinds.join(', ')}`);
}

bootstrap().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
