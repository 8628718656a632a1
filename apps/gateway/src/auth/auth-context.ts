import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError, type ApiKeyMode } from '@dossier/domain';

export interface AuthContext {
  keyId: string;
  accountId: string;
  /** `test`: a sandbox key — free lookups answered from the synthetic data set (ADR 0021). */
  mode: ApiKeyMode;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
}

/** The authenticated key and account of the request (set by ApiKeyGuard). */
export const CurrentAuth = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthContext => {
  const auth = ctx.switchToHttp().getRequest<FastifyRequest>().auth;
  if (!auth) throw new DomainError('unauthorized', 'missing API key');
  return auth;
});
