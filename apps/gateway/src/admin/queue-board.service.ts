import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter as BullBoardFastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, LOOKUP_KINDS } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import type { LookupQueues } from '@dossier/contracts';
import { HTTP_STATUS, envelopeOf } from '../http/error-envelope';
import { GATEWAY_CONFIG, LOOKUP_QUEUES } from '../infra/tokens';
import { basicAuthMatches } from './basic-auth';

export const QUEUE_BOARD_PATH = '/admin/queues';

/**
 * Bull board for the lookup queues at /admin/queues, behind HTTP Basic auth with ADMIN_USER /
 * ADMIN_PASSWORD (closed to everyone when they are unset). It is a Fastify plugin, not a Nest
 * route, so the API-key and rate-limit guards never see it; the Basic check is an onRequest hook
 * of the board's own encapsulated context, so it covers the page, its API and its static files
 * and nothing else.
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
    const admin = this.config.admin;
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    // Registered now, loaded by Fastify when the server starts.
    void fastify.register(
      async (scope) => {
        scope.addHook('onRequest', (request, reply, done) => {
          if (basicAuthMatches(request.headers.authorization, admin)) done();
          else refuse(request, reply, admin !== null);
        });
        await scope.register(board.registerPlugin());
      },
      { prefix: QUEUE_BOARD_PATH },
    );
  }
}

/** 401 with a Basic challenge and the contract's error envelope (the Nest filter does not run here). */
function refuse(request: FastifyRequest, reply: FastifyReply, configured: boolean): void {
  const error = new DomainError(
    'unauthorized',
    configured
      ? 'send the admin credentials (HTTP Basic)'
      : 'the queue board is closed: ADMIN_USER and ADMIN_PASSWORD are not set',
  );
  void reply
    .status(HTTP_STATUS[error.code])
    .header('WWW-Authenticate', 'Basic realm="dossier-admin", charset="UTF-8"')
    .header('Content-Type', 'application/json; charset=utf-8')
    .send(envelopeOf(error, String(request.id)));
}
