import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '@dossier/domain';
import { HTTP_STATUS, envelopeOf, toDomainError } from '../http/error-envelope';
import { basicAuthMatches, type AdminCredentials } from './basic-auth';

const logger = new Logger('admin');

/**
 * Registers an admin surface (the Bull board, /admin/suppressions) as an encapsulated Fastify plugin at
 * `prefix`, behind HTTP Basic auth with ADMIN_USER / ADMIN_PASSWORD (closed to everyone when they are
 * unset). Not Nest routes: the API-key and rate-limit guards never see them, and they stay out of the
 * public /v1 OpenAPI document. Failures leave as the contract's error envelope (the Nest filter does
 * not run here). Registered now, loaded by Fastify when the server starts.
 */
export function registerAdminScope(
  fastify: FastifyInstance,
  prefix: string,
  admin: AdminCredentials | null,
  routes: (scope: FastifyInstance) => PromiseLike<unknown> | void,
): void {
  void fastify.register(
    async (scope) => {
      scope.addHook('onRequest', (request, reply, done) => {
        if (basicAuthMatches(request.headers.authorization, admin)) done();
        else refuse(request, reply, admin !== null);
      });
      scope.setErrorHandler((err, request, reply) => {
        const error = toDomainError(err);
        const status = HTTP_STATUS[error.code];
        if (status >= 500) logger.error(`request_id=${request.id} ${request.method} ${request.url}: ${String(err)}`);
        void reply
          .status(status)
          .header('Content-Type', 'application/json; charset=utf-8')
          .send(envelopeOf(error, String(request.id)));
      });
      await routes(scope);
    },
    { prefix },
  );
}

/** 401 with a Basic challenge and the contract's error envelope. */
function refuse(request: FastifyRequest, reply: FastifyReply, configured: boolean): void {
  const error = new DomainError(
    'unauthorized',
    configured
      ? 'send the admin credentials (HTTP Basic)'
      : 'the admin pages are closed: ADMIN_USER and ADMIN_PASSWORD are not set',
  );
  void reply
    .status(HTTP_STATUS[error.code])
    .header('WWW-Authenticate', 'Basic realm="dossier-admin", charset="UTF-8"')
    .header('Content-Type', 'application/json; charset=utf-8')
    .send(envelopeOf(error, String(request.id)));
}
