import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DomainError, parseSuppressionSubject } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import { SuppressionsRepository, type SuppressionRow } from '@dossier/persistence';
import { parseBody } from '../http/validation';
import { GATEWAY_CONFIG } from '../infra/tokens';
import { registerAdminScope } from './admin-scope';
import { RateLimiterService } from '../rate-limit/rate-limiter.service';

export const SUPPRESSIONS_PATH = '/admin/suppressions';

/** One of `{email}`, `{phone}`, `{name, birth_year}` (parseSuppressionSubject says which combinations). */
const addBody = z
  .object({
    email: z.string().optional(),
    phone: z.string().optional(),
    name: z.string().optional(),
    birth_year: z.number().int().optional(),
  })
  .strict();

const SUPPRESSION_ID = /^sup_[0-9A-Za-z]{20}$/;

/**
 * The suppression list over HTTP, for operators (ADR 0015), with the same admin Basic auth as the Bull
 * board and the same rules as the CLI:
 * - `GET /admin/suppressions` → 200 `{status, suppressions: [{id, kind, hint, created_at}]}`
 * - `POST /admin/suppressions` `{email} | {phone} | {name, birth_year}` → 201 `{status, suppression}`,
 *   or 200 when the subject is listed already
 * - `DELETE /admin/suppressions/{id}` → 200 `{status, suppression}`, 404 when there is no such entry
 */
@Injectable()
export class SuppressionsService implements OnModuleInit {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(SuppressionsRepository) private readonly list: SuppressionsRepository,
    private readonly adapterHost: HttpAdapterHost,
    private readonly limiter: RateLimiterService,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    registerAdminScope(fastify, SUPPRESSIONS_PATH, this.config.admin, this.limiter, (scope) => {
      scope.get('/', async () => ({ status: 'success', suppressions: (await this.list.list()).map(view) }));
      scope.post('/', async (request, reply) => {
        const subject = parseSuppressionSubject(parseBody(addBody, request.body), this.config.defaultRegion);
        const { entry, created } = await this.list.add(subject);
        void reply.status(created ? 201 : 200);
        return { status: 'success', suppression: view(entry) };
      });
      scope.delete<{ Params: { id: string } }>('/:id', async (request) => {
        const { id } = request.params;
        const removed = SUPPRESSION_ID.test(id) ? await this.list.removeById(id) : null;
        if (!removed) throw new DomainError('not_found', `no suppression ${id}`);
        return { status: 'success', suppression: view(removed) };
      });
    });
  }
}

function view(entry: SuppressionRow) {
  return { id: entry.id, kind: entry.kind, hint: entry.hint, created_at: entry.created_at.toISOString() };
}
