import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ConfigError, loadGatewayConfig, logLevels } from '@dossier/config';
import { GatewayModule } from './gateway.module';
import { ErrorEnvelopeFilter } from './http/error.filter';
import { RouteTable } from './http/route-table';
import { requestIdFor } from './http/request-id';
import { BODY_LIMIT_BYTES, installJsonBodyParser } from './http/json-body';

async function bootstrap(): Promise<void> {
  const config = loadGatewayConfig();
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: config.trustProxy,
    requestIdHeader: false,
    genReqId: requestIdFor,
    logger: false,
    return503OnClosing: true,
  });
  const fastify = adapter.getInstance();
  const routes = new RouteTable();
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('X-Request-Id', String(request.id));
    done();
  });
  installJsonBodyParser(fastify);

  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(config), adapter, {
    bodyParser: false,
    logger: logLevels(config.logLevel),
  });
  app.useGlobalFilters(new ErrorEnvelopeFilter(routes));
  app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  await app.listen(config.port, config.host);
  new Logger('gateway').log(`listening on ${await app.getUrl()}`);
}

bootstrap().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
  } else {
    console.error('gateway failed to start:', err);
  }
  process.exit(1);
});
