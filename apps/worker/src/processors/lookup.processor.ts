import { Logger } from '@nestjs/common';
import { UnrecoverableError, type Job } from 'bullmq';
import { SEARCH_ID_PATTERN, type LookupKind, type WatchlistIndex } from '@dossier/domain';
import {
  INLINE_OUTCOME_MAX_BYTES,
  PERSON_LIMIT_DEFAULT,
  LOOKUP_RESULT_VERSION,
  anyLookupJobSchema,
  sourceSummary,
  type LookupJobOf,
  type LookupJobResult,
  type SearchProgress,
  type SourceReport,
} from '@dossier/contracts';
import { attachWatchlistHits, type Provider } from '@dossier/providers';
import type { SearchesRepository } from '@dossier/persistence';
import {
  chargeable,
  narrowed,
  outcomeOf,
  type FanOut,
  type FanOutProgress,
  type FanOutResult,
} from '../fan-out/fan-out';
import type { SuppressionFilter } from '../fan-out/suppression';

/** How often at most a running search's progress is written (ADR 0049): what `GET /v1/searches/{id}` shows. */
export const PROGRESS_EVERY_MS = 1000;

/**
 * Processes one kind's jobs: parse the payload with the shared schema, fan out to the kind's
 * providers, drop what the suppression list covers, store the outcome and settle the credits in Postgres (idempotently), then complete
 * with a pointer. A redelivered job finds its search settled and does nothing twice.
 */
export class LookupProcessor<K extends LookupKind> {
  private readonly logger: Logger;

  constructor(
    readonly kind: K,
    private readonly providers: readonly Provider<K>[],
    /** A test key's lookups go to these alone (the sandbox provider) and are never charged (ADR 0021). */
    private readonly sandbox: readonly Provider<K>[],
    private readonly searches: SearchesRepository,
    private readonly fanOut: FanOut,
    private readonly suppression: SuppressionFilter,
    /** Called when a settle wrote an outbox row (ADR 0062): wakes the relay that queues its events. */
    private readonly onSettled: () => void = () => {},
    /** The imported sanctions lists: an answer's items not found by their name are screened against them. */
    private readonly watchlists?: WatchlistIndex,
  ) {
    this.logger = new Logger(`${kind}-lookup`);
    this.screeners = providers.filter((p) => p.findsOnly === 'watchlist_hits');
    this.screenerIds = new Set(this.screeners.map((p) => p.id));
    this.settles = searches.settleCoalescer();
  }

  /** Jobs finishing while a settle runs settle together in the next statement (no window: idle, a settle goes at once). */
  private readonly settles: ReturnType<SearchesRepository['settleCoalescer']>;
  /** The providers a screening-only lookup asks (`POST /v1/screen`, ADR 0064): the sanctions lists. */
  private readonly screeners: readonly Provider<K>[];
  private readonly screenerIds: ReadonlySet<string>;

  /**
   * What a lookup answers of what its fan-out found (so far): opted-out subjects left out (ADR 0015) — a test
   * key's synthetic answer is neither the operator's data nor charged, and stays as the docs list it — then the
   * sanctions-list hits put on the subjects they are (ADR 0064) and, for the final answer of a live lookup, the
   * items not found by their name screened against the lists (ADR 0071: one query; a progress write does not
   * query), then a person search's min_score and limit: what suppression dropped is neither answered nor
   * counted, nor screened.
   */
  private async answerOf(input: LookupJobOf<K>['input'], fanned: FanOutResult<K>, test: boolean, final: boolean) {
    const kept = test ? fanned : await this.suppression.apply(this.kind, input, fanned);
    const index = final && !test ? this.watchlists : undefined;
    const limit = 'limit' in input && input.limit !== undefined ? input.limit : PERSON_LIMIT_DEFAULT;
    const screened = await attachWatchlistHits(this.kind, kept.items, kept.sources, this.screenerIds, index, limit);
    const answer = narrowed(this.kind, input, outcomeOf(screened.items, screened.sources));
    // Screening is not a lookup: its report never makes one charged that would not be without it.
    return { ...answer, charge: answer.charge && chargeable(answer.items, kept.sources) };
  }

  async process(job: Job<unknown>): Promise<LookupJobResult> {
    const parsed = anyLookupJobSchema.safeParse(job.data);
    if (!parsed.success || parsed.data.kind !== this.kind) {
      throw new UnrecoverableError(`job ${job.id} has an invalid ${this.kind} payload`);
    }
    const data = parsed.data as LookupJobOf<K>;
    const startedAt = performance.now();
    if (job.attemptsMade > 0 || (job.stalledCounter ?? 0) > 0) {
      // A retry or a redelivery after a crash: the search may already be settled (its events are in the
      // outbox since that settle committed: nothing to queue again).
      const status = await this.searches.statusOf(data.search_id);
      if (status === 'succeeded' || status === 'failed') {
        this.logJob(job, data, startedAt, { outcome: 'already_settled' });
        return this.pointer(data, status);
      }
    }

    // Upstream failures do not fail the job: they are reported in `sources`, and a lookup that found
    // nothing (or knew nothing) is free. BullMQ's retries are for the worker's own failures (Postgres).
    const deadlineAt = data.deadline_at === null ? null : Date.parse(data.deadline_at);
    const test = data.mode === 'test';
    const screening = 'screening' in data.input && data.input.screening === true;
    const providers = test ? this.sandbox : screening ? this.screeners : this.providers;
    const fanned = await this.fanOut.run(this.kind, data.input, providers, deadlineAt, {
      live: !test,
      progress: this.progress(data, test),
    });
    // Opted-out subjects go before anything is stored, answered or charged.
    const kept = await this.answerOf(data.input, fanned, test, true);
    const outcome = test ? { ...kept, charge: false } : kept;
    for (const s of outcome.sources) {
      if (s.outcome === 'error')
        this.logger.warn({
          msg: `search ${data.search_id}: ${s.provider}: ${s.detail ?? 'error'}`,
          search_id: data.search_id,
          request_id: data.request_id,
        });
    }
    const settled = await this.settles.submit({
      searchId: data.search_id,
      outcome: {
        status: 'succeeded',
        results: outcome.items,
        sources: outcome.sources,
        charge: outcome.charge,
        total: outcome.total ?? null,
      },
    });
    if (settled.notify) this.onSettled();
    this.logJob(job, data, startedAt, {
      outcome: !settled.settled ? 'already_settled' : settled.charged ? 'charged' : 'free',
      results: outcome.items.length,
      sources: outcome.sources,
    });
    if (!settled.settled || settled.balance === null) return this.pointer(data, 'succeeded');
    const inline = {
      charged: settled.charged,
      balance: settled.balance,
      results: outcome.items,
      ...(outcome.total === undefined ? {} : { total: outcome.total }),
      sources: outcome.sources,
    };
    return Buffer.byteLength(JSON.stringify(inline)) <= INLINE_OUTCOME_MAX_BYTES
      ? { ...this.pointer(data, 'succeeded'), outcome: inline }
      : this.pointer(data, 'succeeded');
  }

  /**
   * Where the lookup's progress goes (ADR 0049): onto its search, as its answer will be — suppressed subjects
   * left out, its min_score and limit applied — for `GET /v1/searches/{id}` to show while it is pending. Best
   * effort: a write that fails is logged and the lookup goes on.
   */
  private progress(data: LookupJobOf<K>, test: boolean): FanOutProgress<K> {
    return {
      everyMs: PROGRESS_EVERY_MS,
      publish: async (partial) => {
        try {
          const kept = await this.answerOf(data.input, partial, test, false);
          const progress: SearchProgress = {
            results: kept.items as SearchProgress['results'],
            source_summary: sourceSummary(kept.sources),
            sources_pending: partial.pending,
            updated_at: new Date().toISOString(),
          };
          await this.searches.recordProgress(data.search_id, progress);
        } catch (err) {
          this.logger.warn({
            msg: `search ${data.search_id}: could not write its progress: ${String(err)}`,
            search_id: data.search_id,
            request_id: data.request_id,
          });
        }
      },
    };
  }

  /** Called when a job has failed for good (attempts exhausted, unrecoverable, stalled too often). */
  async fail(job: Job<unknown>, reason: string): Promise<void> {
    const searchId = searchIdOf(job);
    if (!searchId) return;
    const settled = await this.searches.settle(searchId, {
      status: 'failed',
      error: { code: 'unavailable', message: 'the lookup failed; nothing was charged' },
      sources: [],
    });
    if (settled.notify) this.onSettled();
    this.logger.warn({
      msg: `search ${searchId} failed for good and was released: ${reason}`,
      queue: job.queueName,
      job_id: job.id,
      search_id: searchId,
      request_id: requestIdOf(job),
      outcome: 'failed',
    });
  }

  /**
   * The job's one line: queue, job id, search id, the id of the request that queued it (the gateway's
   * request line has the same), the lookup's outcome (`charged`, `free`: settled without a charge,
   * `already_settled`: a redelivery) and each provider's outcome and duration. Never the input, nor the
   * results.
   */
  private logJob(
    job: Job<unknown>,
    data: { search_id: string; request_id: string },
    startedAt: number,
    line: { outcome: 'charged' | 'free' | 'already_settled'; results?: number; sources?: SourceReport[] },
  ): void {
    this.logger.log({
      msg: 'job',
      queue: job.queueName,
      job_id: job.id,
      search_id: data.search_id,
      request_id: data.request_id,
      attempt: job.attemptsMade + 1,
      outcome: line.outcome,
      ...(line.results !== undefined ? { results: line.results } : {}),
      duration_ms: Math.round((performance.now() - startedAt) * 100) / 100,
      ...(line.sources
        ? { providers: line.sources.map((s) => ({ provider: s.provider, outcome: s.outcome, took_ms: s.took_ms })) }
        : {}),
    });
  }

  private pointer(data: { search_id: string }, status: LookupJobResult['status']): LookupJobResult {
    return { v: LOOKUP_RESULT_VERSION, search_id: data.search_id, status };
  }
}

/** The id of the request that queued a job whose payload may not parse (a failure's line); undefined: none. */
function requestIdOf(job: Job<unknown>): string | undefined {
  const id = (job.data as { request_id?: unknown } | null)?.request_id;
  return typeof id === 'string' && id.length <= 128 ? id : undefined;
}

export function searchIdOf(job: Job<unknown>): string | null {
  const id = (job.data as { search_id?: unknown } | null)?.search_id;
  return typeof id === 'string' && SEARCH_ID_PATTERN.test(id) ? id : null;
}
