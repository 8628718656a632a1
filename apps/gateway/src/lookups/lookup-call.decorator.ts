import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '@dossier/domain';
import { parsePrefer } from '../http/prefer';
import type { LookupCall } from './lookups.service';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The lookup call a request makes: the authenticated key, its request id, Idempotency-Key, Prefer, route and body. */
export const LookupCtx = createParamDecorator((_data: unknown, ctx: ExecutionContext): LookupCall => {
  const request = ctx.switchToHttp().getRequest<FastifyRequest>();
  if (!request.auth) throw new DomainError('unauthorized', 'missing API key');
  const header = request.headers['idempotency-key'];
  const idempotencyKey = Array.isArray(header) ? header.join(', ') : header;
  if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    throw DomainError.validation([
      { field: 'Idempotency-Key', issue: 'must be 1–255 visible ASCII characters (no spaces or control characters)' },
    ]);
  }
  return {
    auth: request.auth,
    requestId: String(request.id),
    idempotencyKey: idempotencyKey ?? null,
    prefer: parsePrefer(request.headers['prefer']),
    route: request.routeOptions.url ?? request.url,
    body: request.body,
  };
});
