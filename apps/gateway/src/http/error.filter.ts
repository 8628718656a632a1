import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, isDomainError } from '@dossier/domain';
import type { RateLimiterService } from '../rate-limit/rate-limiter.service';
import { HTTP_STATUS, creditHeaders, envelopeOf, noSuchRoute, toDomainError } from './error-envelope';
import { REQUEST_ID_HEADER } from './request-id';
import type { RouteTable } from './route-table';
import { addressIdentity } from '../rate-limit/client-address';

/**
 * The one global filter: every failure leaves as the contract's error envelope. Also Fastify's
 * `frameworkErrors` (main.ts), for what its router refuses before any hook has run.
 */
@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');
  /** Set once the app is up (main.ts): before that nothing is answered under /v1. */
  private limiter: RateLimiterService | null = null;

  constructor(private readonly routes: RouteTable) {}

  /**
   * Answers made before the guards ran (no route, a method or a body refused) spend a token of the
   * client address's bucket and carry its `RateLimit-*` headers, as a bad key's `401` does (ADR 0007):
   * API.md's "every response" under /v1, and scanning for paths or sending junk is limited per address.
   */
  limitWith(limiter: RateLimiterService): void {
    this.limiter = limiter;
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    this.send(exception, request, reply);
  }

  send(exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
    if (request.raw.socket?.destroyed && !reply.sent) {
      // The client went away mid-request (it closed the connection, or the request timeout cut a body
      // that never came, and Node answered 408 itself): nobody is left to answer, and it is no server fault.
      this.logger.debug(`request_id=${request.id} ${request.method} ${request.url}: the client went away`);
      void reply.code(408).send();
      return;
    }
    const error = this.errorOf(exception, request, reply);
    const limiter = this.limiter;
    if (limiter === null || HTTP_STATUS[error.code] >= 500 || reply.hasHeader('RateLimit-Limit') || !underV1(request)) {
      this.answer(error, exception, request, reply);
      return;
    }
    limiter.enforce(addressIdentity(request.ip), reply).then(
      () => this.answer(error, exception, request, reply),
      // Over the limit: 429 with its headers. Redis down: the answer it had, without them.
      (err: unknown) =>
        isDomainError(err) && err.code === 'rate_limited'
          ? this.answer(err, err, request, reply)
          : this.answer(error, exception, request, reply),
    );
  }

  private errorOf(exception: unknown, request: FastifyRequest, reply: FastifyReply): DomainError {
    let error = toDomainError(exception);
    // A request no route takes (Fastify's 404 handler has it) is answered by its path and method, whatever
    // else is wrong with it: a QUERY without Content-Type (refused before Fastify hands it to that handler),
    // a body sent to a path that reads none. Not a 5xx: a failure of the server stays one.
    const unrouted = request.is404 && HTTP_STATUS[error.code] < 500;
    if (unrouted && error.code !== 'not_found') error = noSuchRoute();
    if (error.code === 'not_found' && (unrouted || !(exception instanceof DomainError))) {
      const allowed = this.routes.allowFor(request.method, request.url);
      if (allowed.length > 0) {
        error = new DomainError(
          'method_not_allowed',
          `${request.method} is not allowed here; use ${allowed.join(', ')}`,
        );
        void reply.header('Allow', allowed.join(', '));
      }
    }
    return error;
  }

  private answer(error: DomainError, exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const status = HTTP_STATUS[error.code];
    if (error.searchId !== undefined) request.searchId = error.searchId;
    if (status >= 500) {
      const cause = error.code === 'internal_error' ? exception : (error.cause ?? exception);
      this.logger.error(
        `request_id=${request.id} ${request.method} ${request.url} -> ${status} ${error.code}: ${describe(cause)}`,
      );
    }
    if (error.credits) void reply.headers(creditHeaders(error.credits.spent, error.credits.remaining));
    if (error.code === 'unauthorized') void reply.header('WWW-Authenticate', 'Bearer realm="dossier"');
    if (error.retryAfterS !== undefined)
      void reply.header('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterS))));
    void reply
      .status(status)
      // Set by the onRequest hook already, except on what the router refused before any hook ran.
      .header(REQUEST_ID_HEADER, String(request.id))
      .header('Content-Type', 'application/json; charset=utf-8')
      .send(envelopeOf(error, String(request.id)));
  }
}

/** Under /v1 by the route Fastify matched, or by the path when none did (a 404). */
function underV1(request: FastifyRequest): boolean {
  return (request.routeOptions?.url ?? request.url).startsWith('/v1/');
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}${err.stack ? `\n${err.stack}` : ''}`;
  return String(err);
}
