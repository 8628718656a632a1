import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError, SEARCH_ID_PATTERN, newId, type LookupKind } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import {
  LOOKUP_JOB_VERSION,
  enqueueLookup,
  withdrawLookup,
  type LookupInputByKind,
  type LookupJobResult,
  type LookupQueues,
} from '@dossier/contracts';
import { SearchesRepository, type SearchView } from '@dossier/persistence';
import type { AuthContext } from '../auth/auth-context';
import { GATEWAY_CONFIG, LOOKUP_QUEUES } from '../infra/tokens';
import { isBackingServiceDown } from '../http/unavailable';
import type { Preference } from '../http/prefer';
import { QueuePressureService } from './queue-pressure.service';
import { ResultWaiterService, type SearchWatch } from './result-waiter.service';
import { idempotencyConflict, outcomeOf, pendingOutcome, type LookupOutcome, type SearchState } from './lookup-outcome';
import { hashRequest } from './request-hash';
import { SettledEventsService } from '../webhooks/settled-events.service';
import { UsernameSitesService } from './username-sites.service';

/** A lookup to run: its kind, the normalised input its job carries, and why it is made. */
export interface LookupRequest<K extends LookupKind> {
  kind: K;
  input: LookupInputByKind[K];
  purpose: string | null;
}

/** A lookup request of any kind. */
export type AnyLookupRequest = { [K in LookupKind]: LookupRequest<K> }[LookupKind];

/** Who asks, and how: what the HTTP request says about the call besides its body's lookup. */
export interface LookupCall {
  auth: AuthContext;
  requestId: string;
  idempotencyKey: string | null;
  prefer: Preference;
  /** Route and raw body, hashed to recognise an Idempotency-Key reused with another request. */
  route: string;
  body: unknown;
}

/** The error of a search released because its job could not be queued. */
export const UNQUEUED_ERROR = { code: 'unavailable', message: 'the lookup could not be queued; nothing was charged' };

/** Accept → reserve → enqueue → wait (or pending). Answers in domain terms; the controller makes HTTP of them. */
@Injectable()
export class LookupsService {
  private readonly logger = new Logger(LookupsService.name);

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
    @Inject(SearchesRepository) private readonly searches: SearchesRepository,
    private readonly waiter: ResultWaiterService,
    private readonly pressure: QueuePressureService,
    private readonly events: SettledEventsService,
    private readonly sites: UsernameSitesService,
  ) {}

  async submit<K extends LookupKind>(req: LookupRequest<K>, call: LookupCall): Promise<LookupOutcome> {
    this.checkPurpose(req);
    this.checkSites(req);
    const requestHash = this.requestHash(call);
    if (call.idempotencyKey !== null) {
      const existing = await this.searches.findByIdempotencyKey(call.auth.accountId, call.idempotencyKey);
      if (existing?.status === 'failed' && existing.request_hash === requestHash) {
        // A failure charged nothing and invited a retry: the same key runs the lookup again.
        await this.searches.forgetIdempotencyKey(existing.id);
      } else if (existing) {
        return this.replay(existing, requestHash, call);
      }
    }
    this.assertRoom(req.kind);

    const cost = this.costOf(req.kind, call);
    const searchId = newId.search();
    const watch = call.prefer.respondAsync ? null : this.waiter.watch(searchId);
    try {
      const reserved = await this.searches.reserve({
        id: searchId,
        accountId: call.auth.accountId,
        keyId: call.auth.keyId,
        kind: req.kind,
        input: req.input,
        cost,
        idempotencyKey: call.idempotencyKey,
        requestHash,
        requestId: call.requestId,
        permissiblePurpose: req.purpose,
      });
      if (reserved.kind === 'insufficient') {
        // A request with the same key took the last credits first (parallel retries): this one is its replay.
        const holder = await this.keyHolder(call);
        if (holder) return this.replay(holder, requestHash, call);
        const balance = (await this.searches.balanceOf(call.auth.accountId)) ?? 0;
        throw new DomainError(
          'insufficient_credits',
          `this lookup costs ${cost} credit(s) and the balance is ${balance}; nothing was charged`,
          { credits: { spent: 0, remaining: balance } },
        );
      }
      // Keys are per account, across lookups and batches (API.md): a batch's key is another request's.
      if (reserved.kind === 'idempotency_conflict') throw idempotencyConflict();
      if (reserved.kind === 'idempotency_race') {
        const winner = await this.keyHolder(call);
        if (!winner) throw DomainError.unavailable('the idempotent request could not be resolved; retry it');
        return this.replay(winner, requestHash, call);
      }
      await this.enqueue(req, searchId, call);
      const accepted = pendingOutcome(searchId, cost, reserved.balance);
      if (!watch) return accepted;
      try {
        return await this.await(searchId, call, watch, cost, false);
      } catch (err) {
        // Reserved and queued: the lookup goes on and may be charged, so a 503 ("nothing charged")
        // would be wrong. Answer pending with what is known without Postgres; the client polls.
        if (!isBackingServiceDown(err)) throw err;
        this.logger.warn(`request_id=${call.requestId}: waiting for ${searchId} failed, answering 202: ${String(err)}`);
        return accepted;
      }
    } finally {
      watch?.dispose();
    }
  }

  /** A person search without a permissible purpose is refused where the operator requires one (nothing charged). */
  checkPurpose(req: { kind: LookupKind; purpose: string | null }): void {
    if (this.config.requirePermissiblePurpose && req.kind === 'person' && req.purpose === null) {
      throw DomainError.validation([{ field: 'permissible_purpose', issue: 'is required for person searches' }]);
    }
  }

  /** A username search naming sites or tags that no site of the workers' list has is refused (ADR 0049; nothing charged). */
  checkSites(req: { kind: LookupKind; input: unknown }): void {
    this.sites.check(req);
  }

  /** Whether the lookup may be queued now (its queue has room): throws `unavailable` when not. */
  assertRoom(kind: LookupKind): void {
    this.pressure.assertRoom(kind);
  }

  /** What a lookup of this kind reserves: a test key's reserves nothing, no credits move, no ledger entry (ADR 0021). */
  costOf(kind: LookupKind, call: LookupCall): number {
    return call.auth.mode === 'test' ? 0 : this.config.costs[kind];
  }

  /**
   * The hash that recognises an Idempotency-Key reused with another request (null without a key). A test
   * key's request never replays a live one's answer (nor the reverse): the mode is part of what is hashed.
   */
  requestHash(call: LookupCall): string | null {
    if (call.idempotencyKey === null) return null;
    return hashRequest(call.auth.mode === 'test' ? `${call.route} (test key)` : call.route, call.body);
  }

  /** A search of this account, as it stands (a failed one throws, without inviting a retry). */
  async get(searchId: string, auth: AuthContext): Promise<LookupOutcome> {
    const search = SEARCH_ID_PATTERN.test(searchId)
      ? await this.searches.findForAccount(searchId, auth.accountId, auth.mode)
      : null;
    if (!search) throw new DomainError('not_found', 'no such search');
    return outcomeOf(search, { replayed: false, retryable: false });
  }

  /**
   * Queues the reserved search's job. When the add fails, its job is taken back (an add whose reply was lost
   * to a timeout or a reset did reach Redis: see withdraw), then the reservation goes back and the caller gets
   * a 503 ("nothing charged") — unless a worker already runs the job, or the job already settled the search:
   * the lookup then stands, and the caller gets its outcome as for any other (a job taken back after it
   * settled the search may not have queued its webhook events: they are queued here). When Postgres fails
   * too, nobody can tell yet: the search stays pending (the reconciler releases it) and the caller gets it as
   * pending.
   */
  private async enqueue<K extends LookupKind>(
    req: LookupRequest<K>,
    searchId: string,
    call: LookupCall,
  ): Promise<void> {
    try {
      await this.enqueueJob(req, searchId, call);
    } catch (err) {
      const job = await this.withdraw(req.kind, searchId, call);
      if (job === 'running') {
        this.logger.warn(
          `request_id=${call.requestId}: queueing ${searchId} failed but a worker runs its job; answering the search as it stands: ${String(err)}`,
        );
        return;
      }
      const release = await this.releaseUnqueued(searchId);
      if (release === 'released')
        throw DomainError.unavailable('the lookup queue is unavailable; nothing was charged', err);
      // Its job settled it, then was taken back: it may have been waiting to retry queueing the events.
      if (release === 'settled' && job === 'removed') await this.events.searchSettled(searchId, call.requestId);
      this.logger.warn(
        `request_id=${call.requestId}: queueing ${searchId} failed but its search is ${release === 'settled' ? 'settled by its job' : 'not yet released'}; answering the search as it stands: ${String(err)}`,
      );
    }
  }

  /** Queues the reserved search's job (the search id is its job id, so a second add is a no-op). */
  async enqueueJob<K extends LookupKind>(req: LookupRequest<K>, searchId: string, call: LookupCall): Promise<void> {
    const now = Date.now();
    await enqueueLookup(this.queues, {
      v: LOOKUP_JOB_VERSION,
      kind: req.kind,
      search_id: searchId,
      account_id: call.auth.accountId,
      request_id: call.requestId,
      submitted_at: new Date(now).toISOString(),
      // Providers answer within the caller's wait where they can (a slow one is reported `timeout`).
      deadline_at: call.prefer.respondAsync ? null : new Date(now + providerBudgetMs(this.waitS(call))).toISOString(),
      input: req.input,
      mode: call.auth.mode,
      reply_to: this.waiter.replyTo,
    });
  }

  /**
   * Takes back the job of a search whose add failed, before it is released (ADR 0006): an add whose reply was
   * lost did reach Redis, and its job would call the upstreams (billed) for a released search. `removed`: no
   * job will run; `running`: a worker holds it — the search is its job's, not released; `unreachable`: Redis
   * could not be asked — released all the same. Never throws; one Redis call, only when an add failed.
   */
  async withdraw(kind: LookupKind, searchId: string, call: LookupCall): Promise<'removed' | 'running' | 'unreachable'> {
    try {
      return await withdrawLookup(this.queues, kind, searchId);
    } catch (e) {
      this.logger.error(`request_id=${call.requestId}: taking back the job of ${searchId} failed: ${String(e)}`);
      return 'unreachable';
    }
  }

  /**
   * Releases a reserved search whose job could not be queued (failed, nothing charged). Never throws. What
   * it did: `released`; `settled`, when the search was settled before (its add did reach Redis and the job
   * ran); `unknown`, when Postgres failed too.
   */
  async releaseUnqueued(searchId: string): Promise<'released' | 'settled' | 'unknown'> {
    try {
      const result = await this.searches.settle(searchId, {
        status: 'failed',
        error: UNQUEUED_ERROR,
        sources: [],
      });
      return result.settled ? 'released' : 'settled';
    } catch (e) {
      this.logger.error(`release after failed enqueue of ${searchId} failed: ${String(e)}`);
      return 'unknown';
    }
  }

  /** The search holding the call's Idempotency-Key now (null without a key): another request's, reserved first. */
  private async keyHolder(call: LookupCall): Promise<SearchView | null> {
    if (call.idempotencyKey === null) return null;
    return this.searches.findByIdempotencyKey(call.auth.accountId, call.idempotencyKey);
  }

  private async replay(existing: SearchView, requestHash: string | null, call: LookupCall): Promise<LookupOutcome> {
    if (existing.request_hash !== requestHash) {
      throw idempotencyConflict();
    }
    if (existing.status !== 'pending' || call.prefer.respondAsync) {
      return outcomeOf(existing, { replayed: true, retryable: true });
    }
    const watch = this.waiter.watch(existing.id);
    try {
      return await this.await(existing.id, call, watch, existing.cost, true);
    } finally {
      watch.dispose();
    }
  }

  /** How long the caller waits for a synchronous answer: `Prefer: wait=N`, capped by the server. */
  waitS(call: LookupCall): number {
    return Math.min(call.prefer.waitS ?? this.config.syncWaitDefaultS, this.config.syncWaitMaxS);
  }

  /** Waits for the search to settle, up to the request's wait; the outcome as it stands then. */
  private async await(
    searchId: string,
    call: LookupCall,
    watch: SearchWatch,
    cost: number,
    replayed: boolean,
  ): Promise<LookupOutcome> {
    const deadline = Date.now() + this.waitS(call) * 1000;
    for (;;) {
      const remaining = deadline - Date.now();
      const event = remaining > 0 ? await watch.next(remaining) : undefined;
      // The worker's completion carries the settled outcome when it is small: no read-back needed.
      if (event?.outcome && event.search_id === searchId) {
        return outcomeOf(carried(event, cost), { replayed, retryable: true });
      }
      const search = await this.searches.findForAccount(searchId, call.auth.accountId, call.auth.mode);
      if (!search) throw new DomainError('internal_error', `search ${searchId} vanished`);
      if (search.status !== 'pending' || Date.now() >= deadline) {
        return outcomeOf(search, { replayed, retryable: true });
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
