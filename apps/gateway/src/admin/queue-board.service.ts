import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { LOOKUP_KINDS } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import type { LookupQueues } from '@dossier/contracts';
import { GATEWAY_CONFIG, LOOKUP_QUEUES } from '../infra/tokens';
import { registerAdminScope } from './admin-scope';
import { RateLimiterService } from '../rate-limit/rate-limiter.service';

export const QUEUE_BOARD_PATH = '/admin/queues';

/**
 * Bull board for the lookup queues at /admin/queues, in an admin scope (admin-scope.ts): the Basic
 * check is an onRequest hook of the board's own encapsulated context, so it covers the page, its API
 * and its static files and nothing else. Without ADMIN_USER / ADMIN_PASSWORD the scope refuses every
 * request, so the board's packages (~120 modules, ~3 MiB of source kept in the heap) are not loaded.
 */
@Injectable()
export class QueueBoardService implements OnModuleInit {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
    private readonly adapterHost: HttpAdapterHost,
    private readonly limiter: RateLimiterService,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    registerAdminScope(fastify, QUEUE_BOARD_PATH, this.config.admin, this.limiter, async (scope) => {
      if (this.config.admin === null) {
        // Never reached (the scope's hook refuses first): routes, so that the refusal is a 401, not a 404.
        scope.all('/', closed);
        scope.all('/*', closed);
        return;
      }
      const [{ createBullBoard }, { BullMQAdapter }, { FastifyAdapter }] = await Promise.all([
        import('@bull-board/api'),
        import('@bull-board/api/bullMQAdapter'),
        import('@bull-board/fastify'),
      ]);
      const board = new FastifyAdapter().setBasePath(QUEUE_BOARD_PATH);
      createBullBoard({
        queues: LOOKUP_KINDS.map((kind) => new BullMQAdapter(this.queues[kind])),
        serverAdapter: board,
        options: { uiConfig: { boardTitle: 'Dossier queues' } },
      });
      await scope.register(board.registerPlugin());
    });
  }
}

function closed(): never {
  throw new Error('unreachable: the admin scope refuses every request while the board is closed');
}
