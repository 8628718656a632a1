import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter as BullBoardFastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance } from 'fastify';
import { LOOKUP_KINDS } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import type { LookupQueues } from '@dossier/contracts';
import { GATEWAY_CONFIG, LOOKUP_QUEUES } from '../infra/tokens';
import { registerAdminScope } from './admin-scope';

export const QUEUE_BOARD_PATH = '/admin/queues';

/**
 * Bull board for the lookup queues at /admin/queues, in an admin scope (admin-scope.ts): the Basic
 * check is an onRequest hook of the board's own encapsulated context, so it covers the page, its API
 * and its static files and nothing else.
 */
@Injectable()
export class QueueBoardService implements OnModuleInit {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    const board = new BullBoardFastifyAdapter().setBasePath(QUEUE_BOARD_PATH);
    createBullBoard({
      queues: LOOKUP_KINDS.map((kind) => new BullMQAdapter(this.queues[kind])),
      serverAdapter: board,
      options: { uiConfig: { boardTitle: 'Dossier queues' } },
    });
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    registerAdminScope(fastify, QUEUE_BOARD_PATH, this.config.admin, (scope) => scope.register(board.registerPlugin()));
  }
}
