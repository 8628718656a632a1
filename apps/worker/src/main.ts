import 'reflect-metadata';
import '@dossier/config/before-nest';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import { ConfigError, createRootLogger, loadWorkerConfig, logLevels, tuneHeap } from '@dossier/config';
import { WorkerModule } from './worker.module';

async function bootstrap(): Promise<void> {
  const config = loadWorkerConfig();
  tuneHeap(config.heapGrowingPercent);
  const logger = createRootLogger('worker', config.logLevel, { format: config.logFormat });
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, logger), {
    logger: logLevels(config.logLevel),
    bufferLogs: true,
  });
  app.useLogger(app.get(PinoNestLogger));
  // Exit with 0 once the active jobs have finished: Nest's default re-raises the signal, so an orderly
  // stop would look like a crash (exit by SIGTERM) to a supervisor.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  await app.init();
  new Logger('worker').log(`ready: ${config.kinds.join(', ')}`);
}

bootstrap().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
