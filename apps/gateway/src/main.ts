// First: from here a stop signal is noted, not Node's default (ADR 0040); the modules below take ~0.5 s to load.
import '@dossier/runtime/before-nest';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { PinoLogger } from 'nestjs-pino';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ConfigError, loadGatewayConfig } from '@dossier/config';
import { startApp } from '@dossier/runtime';
import { createOrExit } from '@dossier/persistence';
import { GatewayModule } from './gateway.module';
import { ErrorEnvelopeFilter } from './http/error.filter';
import { RouteTable } from './http/route-table';
import { REQUEST_ID_HEADER, requestIdFor } from './http/request-id';
import { clientErrorHandler } from './http/client-error';
import { BODY_LIMIT_BYTES, installJsonBodyParser } from './http/json-body';
import { RequestLog } from './http/request-log';
import { RateLimiterService } from './rate-limit/rate-limiter.service';

async function bootstrap(): Promise<void> {
  const config = loadGatewayConfig();
  // Heap settings, the logger, and the stop signals: a stop while the app is created closes it once it is.
  const { logger, stops, create } = startApp('gateway', config);
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, timeoutCheckIntervalMs } = config.http;
  const routes = new RouteTable();
  const errors = new ErrorEnvelopeFilter(routes);
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    // The nearest TRUST_PROXY hops are proxies, whatever their address; further left in X-Forwarded-For
    // is the client's own text. Not `true` (Fastify then takes the leftmost entry, which any client
    // writes) and not a number (Fastify 5 then trusts no hop at all).
    trustProxy: config.trustProxy > 0 ? (_address: string, hop: number) => hop < config.trustProxy : false,
    requestIdHeader: false,
    genReqId: requestIdFor,
    // One pino logger for Fastify and Nest; Fastify's request logging is one line per request (RequestLog).
    loggerInstance: logger,
    logController: new RequestLog(),
    return503OnClosing: true,
    // Receive-side limits (Node's http server; a request past one is answered 408 and closed). Node
    // takes a request off these clocks once its body is in, so a lookup may still wait up to
    // SYNC_WAIT_MAX_S for its answer. Fastify's default requestTimeout, 0, would let a client that
    // announces more body than it sends hold its connection forever.
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    // No idle-socket timeout: a synchronous lookup's socket is legitimately silent while it waits.
    connectionTimeout: 0,
    http: { headersTimeout: headersTimeoutMs, connectionsCheckingInterval: timeoutCheckIntervalMs },
    // What the router refuses before any hook runs (a path that does not percent-decode, a path parameter
    // over 100 characters) leaves through the one filter like every other error. This replaces Nest's
    // default, which only adds the headers of its security hook (CSRF, security headers: unused here).
    frameworkErrors: (err: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
      errors.send(err, request, reply),
    // What Node's HTTP parser refuses before any request exists (headers over its limit, a request that is
    // not HTTP, the receive timeouts above): the envelope too, written on the socket, which is then closed.
    clientErrorHandler: clientErrorHandler(logger),
  });
  const fastify = adapter.getInstance();
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, String(request.id));
    done();
  });
  installJsonBodyParser(fastify);

  // A failure reaches the catch below (abortOnError: false) to be named.
  const app = await createOrExit(
    () =>
      create((nestLogger) =>
        NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(config, logger, stops.signal), adapter, {
          bodyParser: false,
          logger: nestLogger,
          abortOnError: false,
        }),
      ),
    config.databaseUrl,
    (message) => logger.fatal(message),
  );
  // Whatever is logged while a request is handled (guards, services, the error filter) carries its
  // request id: each request runs in a logging context of its own from its first hook on.
  const context = await app.resolve(PinoLogger);
  fastify.addHook('onRequest', (request, _reply, done) =>
    context.runInContext(done, { bindings: { request_id: request.id } }),
  );
  app.useGlobalFilters(errors);
  errors.limitWith(app.get(RateLimiterService));
  // The bootstrap hooks run here, while a stop still ends their waits (the reply channel waits for Redis):
  // once Nest's shutdown hooks are on, a stop during them would wait for them, for as long as Redis is away.
  await app.init();
  await stops.handOver(app, (message) => new Logger('gateway').log(message));
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
