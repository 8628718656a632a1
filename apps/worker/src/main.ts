import 'reflect-metadata';
import '@dossier/config/before-nest';
import { Logger, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as PinoNestLogger, PinoLogger } from 'nestjs-pino';
import { ConfigError, createRootLogger, loadWorkerConfig, tuneHeap } from '@dossier/config';
import { unreachableDatabase } from '@dossier/persistence';
import { WorkerModule } from './worker.module';

async function bootstrap(): Promise<void> {
  const config = loadWorkerConfig();
  tuneHeap(config.heapGrowingPercent);
  const logger = createRootLogger('worker', config.logLevel, { format: config.logFormat });
  // The app's logger from the first line, not a buffer: starting up runs the bootstrap hooks (they wait
  // for Redis), and a worker started before Redis would otherwise say nothing until it came.
  const params = { pinoHttp: { logger } };
  let app: INestApplicationContext;
  try {
    app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, logger), {
      logger: new PinoNestLogger(new PinoLogger(params), params),
      abortOnError: false,
    });
  } catch (err) {
    const db = unreachableDatabase(err, config.databaseUrl);
    if (db === null) throw err;
    logger.fatal(db);
    process.exit(1);
  }
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
