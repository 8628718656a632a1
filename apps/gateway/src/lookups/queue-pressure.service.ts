import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DomainError, LOOKUP_KINDS, type LookupKind } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import type { LookupQueues } from '@dossier/contracts';
import { GATEWAY_CONFIG, LOOKUP_QUEUES } from '../infra/tokens';

const SAMPLE_MS = 1000;

/** Refuses new lookups (503, nothing charged) while a queue's backlog is over QUEUE_MAX_WAITING. Sampled, not per request. */
@Injectable()
export class QueuePressureService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(QueuePressureService.name);
  private readonly waiting = new Map<LookupKind, number>();
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  assertRoom(kind: LookupKind): void {
    if ((this.waiting.get(kind) ?? 0) >= this.config.queueMaxWaiting) {
      throw DomainError.unavailable(`the ${kind} queue is saturated; try again shortly`);
    }
  }

  private async sample(): Promise<void> {
    for (const kind of LOOKUP_KINDS) {
      try {
        this.waiting.set(kind, await this.queues[kind].getWaitingCount());
      } catch (err) {
        this.logger.debug(`could not sample ${kind} queue: ${String(err)}`);
      }
    }
  }
}
