import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError, type LookupKind } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import {
  LOOKUP_JOB_VERSION,
  enqueueLookup,
  withdrawLookup,
  type LookupInputByKind,
  type LookupJobResult,
  type LookupQueues,
} from '@dossier/contracts';
import { SearchesRepository, type NewSearch } from '@dossier/persistence';
import type { AuthContext } from '../auth/auth-context';
import { GATEWAY_CONFIG, LOOKUP_QUEUES } from '../infra/tokens';
import type { Preference } from '../http/prefer';
import { QueuePressureService } from './queue-pressure.service';
import { ResultWaiterService, type SearchWatch } from './result-waiter.service';
import type { SearchState } from './lookup-outcome';
import { hashRequest } from './request-hash';
import { UsernameSitesService } from './username-sites.service';

/** A lookup to run: its kind, the normalised input its job carries, and why it is made. */
export interface LookupRequest<K extends LookupKind> {
  kind: K;
  input: LookupInputByKind[K];
  purpose: string | null;
}

/** A lookup request of any kind. */
export type AnyLookupRequest = { [K in LookupKind]: LookupRequest<K> }[LookupKind];

/** Who asks, and how: what the HTTP request says about the call besides its body's lookups. */
export interface LookupCall {
  auth: AuthContext;
  requestId: string;
  idempotencyKey: string | null;
  prefer: Preference;
  /** Route and raw body, hashed to recognise an Idempotency-Key reused with another request. */
  route: string;
  body: unknown;
}

/** A reserved search and the lookup its job runs. */
export interface Reserved {
  search: NewSearch;
  request: AnyLookupRequest;
}

/** The error of a search released because its job could not be queued. */
export const UNQUEUED_ERROR = { code: 'unavailable', message: 'the lookup could not be queued; nothing was charged' };

/**
 * The one submission sequence of a single lookup and of a batch (issue 42): the checks made before anything is
 * charged, the search each request reserves, the jobs queued for the reserved searches — taken back and
 * released when queueing fails — and the wait for their outcomes. A single lookup is a submission of one
 * search; a batch, of its valid items, recorded with the batch in one transaction.
 */
@Injectable()
export class SubmissionService {
  private readonly logger = new Logger('submission');

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
    @Inject(SearchesRepository) private readonly searches: SearchesRepository,
    private readonly waiter: ResultWaiterService,
    private readonly pressure: QueuePressureService,
    private readonly sites: UsernameSitesService,
  ) {}

  /**
   * What a request is refused for, before anything is charged: a person search without a permissible purpose
   * where the operator requires one, a username search naming no site of the workers' list (ADR 0049).
   */
  check(req: AnyLookupRequest): void {
    if (this.config.requirePermissiblePurpose && req.kind === 'person' && req.purpose === null) {
      throw DomainError.validation([{ field: 'permissible_purpose', issue: 'is required for person searches' }]);
    }
    this.sites.check(req);
  }

  /** Whether a lookup of this kind may be queued now (its queue has room): throws `unavailable` when not. */
  assertRoom(kind: LookupKind): void {
    this.pressure.assertRoom(kind);
  }

  /** The search a request reserves: a test key's costs nothing, no credits move, no ledger entry (ADR 0021). */
  searchOf(
    id: string,
    req: AnyLookupRequest,
    call: LookupCall,
    key: { idempotencyKey: string | null; requestHash: string | null },
  ): NewSearch {
    return {
      id,
      accountId: call.auth.accountId,
      keyId: call.auth.keyId,
      kind: req.kind,
      input: req.input,
      cost: call.auth.mode === 'test' ? 0 : this.config.costs[req.kind],
      idempotencyKey: key.idempotencyKey,
      requestHash: key.requestHash,
      requestId: call.requestId,
      permissiblePurpose: req.purpose,
    };
  }

  /**
   * The hash that recognises an Idempotency-Key reused with another request (null without a key). A test
   * key's request never replays a live one's answer (nor the reverse): the mode is part of what is hashed.
   */
  requestHash(call: LookupCall): string | null {
    if (call.idempotencyKey === null) return null;
    return hashRequest(call.auth.mode === 'test' ? `${call.route} (test key)` : call.route, call.body);
  }

  /** How long the caller waits for a synchronous answer: `Prefer: wait=N`, capped by the server. */
  waitS(call: LookupCall): number {
    return Math.min(call.prefer.waitS ?? this.config.syncWaitDefaultS, this.config.syncWaitMaxS);
  }

  /** Watches the searches' outcomes (before their jobs exist, so none comes first); null for `respond-async`. */
  watch(call: LookupCall, ids: string[]): SearchWatch | null {
    return call.prefer.respondAsync || ids.length === 0 ? null : this.waiter.watch(...ids);
  }

  /**
   * Queues the reserved searches' jobs (a search's id is its job's id, so a second add is a no-op). Every add
   * finishes, landed or failed, before any job is taken back: with the first failure alone, an add still in
   * flight could reach Redis after the take-back, and its job run a released search. When an add failed,
   * every job is taken back (an add whose reply was lost did reach Redis, ADR 0006) and the searches no worker
   * runs are released, failed and charged nothing (with their batch, when that was all of them: one
   * transaction). `queued`: every job is queued. When every search went back (and its batch, if any), it throws
   * `unavailable`: the caller answers 503, nothing charged. `stands`: a worker runs some job, a job settled its
   * search first, or Postgres failed too (the reconciler releases the rest): answered as it stands.
   */
  async enqueue(reserved: readonly Reserved[], call: LookupCall, batchId: string | null) {
    const adds = await Promise.allSettled(reserved.map((r) => this.enqueueJob(r, call)));
    const failed = adds.find((a): a is PromiseRejectedResult => a.status === 'rejected');
    if (!failed) return 'queued' as const;
    const jobs = await Promise.all(reserved.map((r) => this.withdraw(r.search, call)));
    const unqueued = reserved.filter((_, k) => jobs[k] !== 'running').map((r) => r.search.id);
    const what = batchId === null ? reserved[0]!.search.id : `batch ${batchId}`;
    if (unqueued.length > 0) {
      try {
        const whole = unqueued.length === reserved.length;
        const { voided } = await this.searches.releaseUnqueued(unqueued, UNQUEUED_ERROR, whole, batchId);
        if (voided)
          throw DomainError.unavailable('the lookup queue is unavailable; nothing was charged', failed.reason);
      } catch (e) {
        if (e instanceof DomainError) throw e;
        this.logger.error(`request_id=${call.requestId}: releasing ${what} after its adds failed failed: ${String(e)}`);
      }
    }
    this.logger.warn(
      `request_id=${call.requestId}: queueing ${what} failed but a worker runs or settled a job of it (or Postgres failed too); answering it as it stands: ${String(failed.reason)}`,
    );
    return 'stands' as const;
  }

  /** Queues one reserved search's job. */
  private async enqueueJob({ search, request }: Reserved, call: LookupCall): Promise<void> {
    const now = Date.now();
    await enqueueLookup(this.queues, {
      v: LOOKUP_JOB_VERSION,
      kind: request.kind,
      search_id: search.id,
      account_id: call.auth.accountId,
      request_id: call.requestId,
      submitted_at: new Date(now).toISOString(),
      // Providers answer within the caller's wait where they can (a slow one is reported `timeout`).
      deadline_at: call.prefer.respondAsync ? null : new Date(now + providerBudgetMs(this.waitS(call))).toISOString(),
      input: request.input,
      mode: call.auth.mode,
      reply_to: this.waiter.replyTo,
    });
  }

  /**
   * Takes back the job of a search whose add failed, before it is released (ADR 0006). `removed`: no job will
   * run; `running`: a worker holds it — the search is its job's, not released; `unreachable`: Redis could not
   * be asked — released all the same. Never throws; one Redis call, only when an add failed.
   */
  private async withdraw(search: NewSearch, call: LookupCall): Promise<'removed' | 'running' | 'unreachable'> {
    try {
      return await withdrawLookup(this.queues, search.kind, search.id);
    } catch (e) {
      this.logger.error(`request_id=${call.requestId}: taking back the job of ${search.id} failed: ${String(e)}`);
      return 'unreachable';
    }
  }

  /**
   * Waits until none of the searches is pending or the caller's wait runs out; their states then, by id. A
   * worker's completion that carries the settled outcome answers its search without a read (`costs` names the
   * searches whose reservation is known); otherwise the searches not yet settled are read back from Postgres.
   */
  async wait(
    ids: readonly string[],
    call: LookupCall,
    watch: SearchWatch | null,
    costs: ReadonlyMap<string, number> = new Map(),
  ): Promise<Map<string, SearchState>> {
    const deadline = Date.now() + this.waitS(call) * 1000;
    const states = new Map<string, SearchState>();
    const settled = (id: string) => (states.get(id)?.status ?? 'pending') !== 'pending';
    // Without every cost (a replay), a carried outcome cannot answer alone: read first, as without a watch.
    let read = watch === null || costs.size < ids.length;
    for (;;) {
      if (read) {
        const pending = ids.filter((id) => !settled(id));
        for (const view of await this.searches.findManyForAccount(pending, call.auth.accountId))
          states.set(view.id, view);
        if (ids.some((id) => !states.has(id))) throw new DomainError('internal_error', 'a search vanished');
      }
      const remaining = deadline - Date.now();
      if (ids.every(settled)) return states;
      if (watch === null || remaining <= 0) {
        if (read) return states;
        read = true; // the wait is over: the searches as they stand
        continue;
      }
      const event = await watch.next(remaining);
      const cost = event?.outcome ? costs.get(event.search_id) : undefined;
      if (event?.outcome && cost !== undefined) {
        states.set(event.search_id, carried(event, cost));
        read = false;
      } else {
        read = true;
      }
    }
  }
}

/**
 * How much of the caller's wait the providers get (the job's `deadline_at`): the rest, a tenth of the wait
 * up to 500 ms, is left for the worker to merge, store and settle the outcome and for its completion to
 * reach the gateway. With the whole wait, a lookup whose upstream hangs settled a few ms after the gateway
 * had answered `202`, instead of answering in time with that source `timeout`.
 */
export function providerBudgetMs(waitS: number): number {
  const waitMs = waitS * 1000;
  return waitMs - Math.min(500, waitMs / 10);
}

/** The stored search, as the worker's completion event describes it. */
function carried(event: LookupJobResult, cost: number): SearchState {
  const outcome = event.outcome!;
  return {
    id: event.search_id,
    status: event.status,
    cost,
    charged: outcome.charged,
    results: outcome.results,
    result_total: outcome.total ?? null,
    sources: outcome.sources,
    error: null,
    progress: null,
    balance: outcome.balance,
  };
}
