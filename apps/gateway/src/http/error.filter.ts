import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '@dossier/domain';
import { HTTP_STATUS, creditHeaders, envelopeOf, toDomainError } from './error-envelope';
import { REQUEST_ID_HEADER } from './request-id';
import type { RouteTable } from './route-table';

/**
 * The one global filter: every failure leaves as the contract's error envelope. Also Fastify's
 * `frameworkErrors` (main.ts), for what its router refuses before any hook has run.
 */
@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  constructor(private readonly routes: RouteTable) {}

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
    let error = toDomainError(exception);
    if (error.code === 'not_found' && !(exception instanceof DomainError)) {
      const allowed = this.routes.allowFor(request.method, request.url);
      if (allowed.length > 0) {
        error = new DomainError(
          'method_not_allowed',
          `${request.method} is not allowed here; use ${allowed.join(', ')}`,
        );
        void reply.header('Allow', allowed.join(', '));
      }
    }
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

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}${err.stack ? `\n${err.stack}` : ''}`;
  return String(err);
}
