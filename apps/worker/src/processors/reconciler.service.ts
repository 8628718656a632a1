import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { WorkerConfig } from '@dossier/config';
import { LOOKUP_KINDS, type LookupKind } from '@dossier/domain';
import { goneLookupJobs, type LookupQueues } from '@dossier/contracts';
import { SearchesRepository, type SearchPosition } from '@dossier/persistence';
import { LOOKUP_QUEUES, WORKER_CONFIG } from '../infra/tokens';
import { OutboxRelayService } from '../webhooks/outbox-relay.service';
import { WorkerMetrics, type MaintenanceAction } from './worker-metrics';

/**
 * Stale searches read per query, and pages per pass: a page's jobs are checked in Redis together (about one
 * round trip), so a pass checks up to 20,000 searches in well under a second.
 */
const PAGE = 200;
const PAGES_PER_PASS = 100;
const DAY_S = 86_400;
/**
 * The error of a search failed because its job is gone: never queued (a gateway died between reserving and
 * enqueueing), removed (on the Bull board), lost with Redis's data, or failed without its release.
 */
const LOST = "the lookup's job was lost before it finished (its queue no longer holds it); nothing was charged";
/** The error of a search failed by the retention pass: still pending past RESULTS_TTL_DAYS. */
const EXPIRED = 'the lookup was not run within RESULTS_TTL_DAYS (no worker took it); nothing was charged';

/**
 * Finds searches left pending with no live job — a gateway that died between reserving and enqueueing, a
 * job removed on the Bull board or lost with Redis's data, a failure whose release could not reach
 * Postgres — fails them and releases their credits (their events go through the outbox, ADR 0062). Settling
 * is idempotent, so several workers may run this at once.
 *
 * A search is a candidate once it is RECONCILE_AFTER_S old (the time a gateway may take between reserving it
 * and queueing its job), and is released only when its job does not exist (or failed for good): a job that
 * waits behind a backlog or runs slowly is alive at any age. Every RECONCILE_INTERVAL_MS a pass pages through
 * every candidate, carrying its place from one pass to the next: a backlog of old searches whose jobs are
 * still queued (the oldest first) cannot hide a lost one behind them. A lost search is so released at the
 * latest RECONCILE_AFTER_S + RECONCILE_INTERVAL_MS after its reservation or RECONCILE_INTERVAL_MS after its
 * job's loss, whichever is later (45 s and 15 s by default).
 */
@Injectable()
export class ReconcilerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('reconciler');
  private timer?: NodeJS.Timeout;
  private running = false;
  /** Where the next pass goes on; null: from the oldest. */
  private after: SearchPosition | null = null;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    private readonly searches: SearchesRepository,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
    private readonly metrics: WorkerMetrics,
    private readonly relay: OutboxRelayService,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.runOnce(), this.config.reconcileIntervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async runOnce(): Promise<number> {
    if (this.running) return 0;
    this.running = true;
    let released = 0;
    try {
      for (let page = 0; page < PAGES_PER_PASS; page++) {
        const stale = await this.searches.findStalePending(this.config.reconcileAfterS, PAGE, this.after);
        released += await this.reconcile(stale);
        this.after = stale.length === PAGE ? stale.at(-1)!.position : null;
        if (this.after === null) break;
      }
    } catch (err) {
      this.logger.warn(`reconcile pass failed: ${String(err)}`);
    } finally {
      this.running = false;
    }
    return released;
  }

  /**
   * Retention (ADR 0016): fails and releases every search still pending `olderThanDays` days after it was
   * made — its job waiting for a worker that never came (no worker consumes its kind) or retrying — and
   * removes its job (which holds its input), so that the pass erases its input as it does a settled one's.
   * A job being run right then is left to the next pass. Returns how many searches this call released.
   */
  async expire(olderThanDays: number): Promise<number> {
    let released = 0;
    let after: SearchPosition | null = null;
    for (let page = 0; page < PAGES_PER_PASS; page++) {
      const stale = await this.searches.findStalePending(olderThanDays * DAY_S, PAGE, after);
      for (const search of stale) {
        const queue = this.queues[search.kind];
        const job = await queue.getJob(search.id);
        const state = job ? await job.getState() : 'missing';
        // 0: locked, a worker runs it now (it settles the search itself, or the next pass fails it).
        if (job && (await queue.remove(search.id)) !== 1) continue;
        released += await this.fail(search.id, state, 'expired', EXPIRED);
      }
      if (stale.length < PAGE) break;
      after = stale.at(-1)!.position;
    }
    return released;
  }

  /** Fails and releases the stale searches whose job is gone; how many this call released. */
  private async reconcile(stale: readonly { id: string; kind: LookupKind }[]): Promise<number> {
    let released = 0;
    for (const kind of LOOKUP_KINDS) {
      const ids = stale.filter((s) => s.kind === kind).map((s) => s.id);
      if (ids.length === 0) continue;
      for (const [id, state] of await goneLookupJobs(this.queues, kind, ids))
        released += await this.fail(id, state, 'released_stale', LOST);
    }
    return released;
  }

  /**
   * Settles a search `failed` with `message` (its credits released, once: a search settles once; its
   * search.failed event and its batch's completion go through the outbox); 1 when this call settled it.
   */
  private async fail(id: string, state: string, action: MaintenanceAction, message: string): Promise<number> {
    const { settled, notify } = await this.searches.settle(id, {
      status: 'failed',
      error: { code: 'unavailable', message },
      sources: [],
    });
    if (!settled) return 0;
    this.metrics.reconciled(action, 1);
    this.logger.warn(`${action === 'expired' ? 'expired' : 'released stale'} search ${id} (job ${state})`);
    // Its search.failed event, and its batch's completion when it was the last one running.
    if (notify) this.relay.wake();
    return 1;
  }
}
