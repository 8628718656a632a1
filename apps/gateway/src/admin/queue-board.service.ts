import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { LOOKUP_KINDS } from '@dossier/domain';
import { queuePrefixFor, type GatewayConfig } from '@dossier/config';
import { throttledErrorLog, type RedisConnections } from '@dossier/runtime';
import { MAINTENANCE_QUEUE, type LookupQueues, type WebhookJob } from '@dossier/contracts';
import { GATEWAY_CONFIG, LOOKUP_QUEUES, REDIS_CONNECTIONS, WEBHOOK_DELIVERY } from '../infra/tokens';
import { registerAdminScope } from './admin-scope';
import { RateLimiterService } from '../rate-limit/rate-limiter.service';

export const QUEUE_BOARD_PATH = '/admin/queues';

/**
 * Bull board at /admin/queues for every queue the service runs, in an admin scope (admin-scope.ts): the
 * Basic check is an onRequest hook of the board's own encapsulated context, so it covers the page, its
 * API and its static files and nothing else. Without ADMIN_USER / ADMIN_PASSWORD the scope refuses every
 * request, so the board's packages (~120 modules, ~3 MiB of source kept in the heap) are not loaded.
 *
 * The lookup queues take the board's actions (retry, clean, promote). The webhook-delivery and maintenance
 * queues are shown read-only (the board answers `405` to any action on them): a delivery job's payload is
 * an event the worker signs with the customer's secret, and its attempts are recorded as they run, so the
 * board neither adds, edits nor retries one; the maintenance queue holds the retention schedule, which
 * removing or emptying from the board would stop until a worker restarts. The gateway opens the maintenance
 * queue only for the board, without rewriting its meta (`skipMetasUpdate`).
 */
@Injectable()
export class QueueBoardService implements OnModuleInit, OnApplicationShutdown {
  private maintenance?: Queue;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
    @Inject(WEBHOOK_DELIVERY) private readonly webhookQueue: Queue<WebhookJob>,
    @Inject(REDIS_CONNECTIONS) private readonly redis: RedisConnections,
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
      this.maintenance = new Queue(MAINTENANCE_QUEUE, {
        prefix: queuePrefixFor(this.config, MAINTENANCE_QUEUE),
        connection: this.redis.queues(),
        skipMetasUpdate: true,
      });
      const log = throttledErrorLog((message) => new Logger('queues').warn(message));
      this.maintenance.on('error', (error) => log(MAINTENANCE_QUEUE, error));
      const board = new FastifyAdapter().setBasePath(QUEUE_BOARD_PATH);
      createBullBoard({
        queues: [
          ...LOOKUP_KINDS.map((kind) => new BullMQAdapter(this.queues[kind])),
          new BullMQAdapter(this.webhookQueue, { readOnlyMode: true }),
          new BullMQAdapter(this.maintenance, { readOnlyMode: true }),
        ],
        serverAdapter: board,
        options: { uiConfig: { boardTitle: 'Dossier queues' } },
      });
      await scope.register(board.registerPlugin());
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.maintenance?.close();
  }
}

function closed(): never {
  throw new Error('unreachable: the admin scope refuses every request while the board is closed');
}
