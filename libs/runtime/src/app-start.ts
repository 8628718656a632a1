import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { Logger as PinoNestLogger, PinoLogger, type Params } from 'nestjs-pino';
import type { Logger } from 'pino';
import { collectOnce, tuneHeap } from './heap';
import { createRootLogger, type LogFormat, type LogLevel } from './logger';
import { StopWhileStarting } from './stop-signals';

/** nestjs-pino's settings: Nest's loggers write through the process's own pino logger (Fastify's too). */
export function pinoParams(logger: Logger): Params {
  return { pinoHttp: { logger }, useExisting: true };
}

/** What `startApp` sets up for an app's `main`. */
export interface AppStart {
  /** The process's root pino logger. */
  logger: Logger;
  /** Takes the stop signals while the app is created; `handOver` gives them to the app. */
  stops: StopWhileStarting;
  /**
   * Creates the app with Nest logging through `logger` from its first line, not a buffer: what starting up
   * logs (waiting for Redis, a failure) is a JSON line as it happens.
   */
  create<A extends INestApplicationContext>(factory: (logger: LoggerService) => Promise<A>): Promise<A>;
}

/**
 * What the gateway's and the worker's `main` do first, once their config is loaded: V8's heap settings
 * (tuneHeap; collectOnce once the app is created), the process's logger, and the stop signals taken from
 * `@dossier/runtime/before-nest`.
 */
export function startApp(
  service: 'gateway' | 'worker',
  config: { heapGrowingPercent: number; logLevel: LogLevel; logFormat: LogFormat },
): AppStart {
  tuneHeap(config.heapGrowingPercent);
  const logger = createRootLogger(service, config.logLevel, { format: config.logFormat });
  const params = pinoParams(logger);
  return {
    logger,
    stops: new StopWhileStarting(),
    async create(factory) {
      const app = await factory(new PinoNestLogger(new PinoLogger(params), params));
      app.useLogger(app.get(PinoNestLogger));
      collectOnce();
      return app;
    },
  };
}
