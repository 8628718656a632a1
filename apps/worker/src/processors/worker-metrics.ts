import { Counter, Histogram, type Registry } from 'prom-client';

/** Seconds: a lookup job runs its providers within their deadlines (30 s at most) and settles. */
const JOB_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What the reconciler (and the retention pass) did: released stale searches, purged searches. */
export type MaintenanceAction = 'released_stale' | 'expired' | 'purged';

/** The worker's own Prometheus metrics: job durations per queue, and reconciler actions. */
export class WorkerMetrics {
  private readonly jobs: Histogram<'queue' | 'outcome'>;
  private readonly reconciler: Counter<'action'>;

  constructor(registry: Registry) {
    this.jobs = new Histogram({
      name: 'dossier_job_duration_seconds',
      help: 'How long this process took over lookup jobs, by queue and outcome (completed, failed)',
      labelNames: ['queue', 'outcome'],
      buckets: JOB_BUCKETS,
      registers: [registry],
    });
    this.reconciler = new Counter({
      name: 'dossier_reconciler_actions_total',
      help: 'Searches the reconciler acted on, by action: released_stale (failed a search left pending with no job, released its credits), expired (failed and released a search still pending past RESULTS_TTL_DAYS, its job removed), purged (erased its input and results past RESULTS_TTL_DAYS)',
      labelNames: ['action'],
      registers: [registry],
    });
    for (const action of ['released_stale', 'expired', 'purged'] as const) this.reconciler.inc({ action }, 0);
  }

  /** Runs one job's work and records how long it took and whether it completed. */
  async timeJob<T>(queue: string, work: () => Promise<T>): Promise<T> {
    const end = this.jobs.startTimer({ queue });
    try {
      const result = await work();
      end({ outcome: 'completed' });
      return result;
    } catch (err) {
      end({ outcome: 'failed' });
      throw err;
    }
  }

  reconciled(action: MaintenanceAction, searches: number): void {
    this.reconciler.inc({ action }, searches);
  }
}
