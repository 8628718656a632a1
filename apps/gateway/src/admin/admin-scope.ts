import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, isDomainError } from '@dossier/domain';
import { HTTP_STATUS, envelopeOf, toDomainError } from '../http/error-envelope';
import type { RateLimiterService } from '../rate-limit/rate-limiter.service';
import { basicAuthMatches, type AdminCredentials } from './basic-auth';
import { addressIdentity } from '../rate-limit/client-address';

const logger = new Logger('admin');

/** Sent with every admin answer (see registerAdminScope). */
const ADMIN_HEADERS = {
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "frame-ancestors 'none'",
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
} as const;

/**
 * Registers an admin surface (the Bull board, /admin/suppressions) as an encapsulated Fastify plugin at
 * `prefix`, behind HTTP Basic auth with ADMIN_USER / ADMIN_PASSWORD (closed to everyone when they are
 * unset). Not Nest routes: the API-key and rate-limit guards never see them, and they stay out of the
 * public /v1 OpenAPI document. Failures leave as the contract's error envelope (the Nest filter does
 * not run here). Registered now, loaded by Fastify when the server starts. Credentials that do not match
 * spend a token of the client address's bucket, as a wrong API key does (ADR 0007): once it is empty the
 * answer is `429`, so the admin password cannot be guessed at full speed. A request without credentials
 * (a browser's first, before it asks for them) spends nothing.
 *
 * Every answer of the scope, a refusal included, carries ADMIN_HEADERS: the board's buttons (retry,
 * clean, promote) act with the browser's cached Basic credentials, so no other site may frame it under
 * a decoy (clickjacking), and its pages list lookup inputs (e-mail addresses, phone numbers), so no cache
 * keeps them. A cross-site form cannot act instead: its POST is refused `415` (JSON bodies only) and the
 * board's other actions are PUT, PATCH or DELETE, which no page of another origin can send without a CORS
 * preflight, which nothing here answers.
 */
export function registerAdminScope(
  fastify: FastifyInstance,
  prefix: string,
  admin: AdminCredentials | null,
  limiter: RateLimiterService,
  routes: (scope: FastifyInstance) => PromiseLike<unknown> | void,
): void {
  void fastify.register(
    async (scope) => {
      scope.addHook('onRequest', async (request, reply) => {
        void reply.headers(ADMIN_HEADERS);
        if (basicAuthMatches(request.headers.authorization, admin)) return;
        if (admin !== null && request.headers.authorization !== undefined) {
          const limited = await limiter.enforce(addressIdentity(request.ip), reply).then(
            () => null,
            (err: unknown) => (isDomainError(err) && err.code === 'rate_limited' ? err : null),
          );
          if (limited) {
            void reply.header('Retry-After', String(Math.max(1, Math.ceil(limited.retryAfterS ?? 1))));
            send(request, reply, limited);
            return reply;
          }
        }
        refuse(request, reply, admin !== null);
        return reply;
      });
      scope.setErrorHandler((err, request, reply) => {
        const error = toDomainError(err);
        if (HTTP_STATUS[error.code] >= 500) {
          logger.error(`request_id=${request.id} ${request.method} ${request.url}: ${String(err)}`);
        }
        send(request, reply, error);
      });
      await routes(scope);
    },
    { prefix },
  );
}

/** The contract's error envelope, with the error's status. */
function send(request: FastifyRequest, reply: FastifyReply, error: DomainError): void {
  void reply
    .status(HTTP_STATUS[error.code])
    .header('Content-Type', 'application/json; charset=utf-8')
    .send(envelopeOf(error, String(request.id)));
}

/** 401 with a Basic challenge and the contract's error envelope. */
function refuse(request: FastifyRequest, reply: FastifyReply, configured: boolean): void {
  void reply.header('WWW-Authenticate', 'Basic realm="dossier-admin", charset="UTF-8"');
  send(
    request,
    reply,
    new DomainError(
      'unauthorized',
      configured
        ? 'send the admin credentials (HTTP Basic)'
        : 'the admin pages are closed: ADMIN_USER and ADMIN_PASSWORD are not set',
    ),
  );
}
