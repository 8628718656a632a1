import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError, isInfrastructureError, newId, type LookupKind } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import { enqueueLookup, type LookupInputByKind, type LookupJobResult, type LookupQueues } from '@dossier/contracts';
import { SearchesRepository, type SearchView } from '@dossier/persistence';
import type { AuthContext } from '../auth/auth-context';
import { GATEWAY_CONFIG, LOOKUP_QUEUES } from '../infra/tokens';
import type { Preference } from '../http/prefer';
import { QueuePressureService } from './queue-pressure.service';
import { ResultWaiterService, type SearchWatch } from './result-waiter.service';
import { answerFor, pendingAnswer, type LookupAnswer } from './search-envelope';
import { hashRequest } from './request-hash';

const IDEMPOTENCY_TTL_HOURS = 24;

export interface LookupRequest<K extends LookupKind> {
  kind: K;
  input: LookupInputByKind[K];
  purpose: string | null;
  /** Route and raw body, hashed to recognise an Idempotency-Key reused with another body. */
  route: string;
  body: unknown;
}

export interface LookupCall {
  auth: AuthContext;
  requestId: string;
  idempotencyKey: string | null;
  prefer: Preference;
}

/** Accept → reserve → enqueue → wait (or 202). The job contract lives in @dossier/contracts. */
@Injectable()
export class LookupsService {
  private readonly logger = new Logger(LookupsService.name);

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOOKUP_QUEUES) private readonly queues: LookupQueues,
    @Inject(SearchesRepository) private readonly searches: SearchesRepository,
    private readonly waiter: ResultWaiterService,
    private readonly pressure: QueuePressureService,
  ) {}

  async submit<K extends LookupKind>(req: LookupRequest<K>, call: LookupCall): Promise<LookupAnswer> {
    if (this.config.requirePermissiblePurpose && req.kind === 'person' && req.purpose === null) {
      throw DomainError.validation([{ field: 'permissible_purpose', issue: 'is required for person searches' }]);
    }
    const requestHash = call.idempotencyKey === null ? null : hashRequest(req.route, req.body);
    if (call.idempotencyKey !== null) {
      const existing = await this.searches.findByIdempotencyKey(
        call.auth.accountId,
        call.idempotencyKey,
        IDEMPOTENCY_TTL_HOURS,
      );
      if (existing?.status === 'failed' && existing.request_hash === requestHash) {
        // A failure charged nothing and invited a retry: the same key runs the lookup again.
        await this.searches.forgetIdempotencyKey(existing.id);
      } else if (existing) {
        return this.replay(existing, requestHash, call);
      }
    }
    this.pressure.assertRoom(req.kind);

    const searchId = newId.search();
    const watch = call.prefer.respondAsync ? null : this.waiter.watch(searchId);
    try {
      const reserved = await this.searches.reserve({
        id: searchId,
        accountId: call.auth.accountId,
        keyId: call.auth.keyId,
        kind: req.kind,
        input: req.input,
        cost: this.config.costs[req.kind],
        idempotencyKey: call.idempotencyKey,
        requestHash,
        requestId: call.requestId,
        permissiblePurpose: req.purpose,
      });
      if (reserved.kind === 'insufficient') {
        const balance = await this.searches.balanceOf(call.auth.accountId);
        throw new DomainError(
          'insufficient_credits',
          `this lookup costs ${this.config.costs[req.kind]} credit(s) and the balance is ${balance ?? 0}; nothing was charged`,
          { headers: { 'X-Credits-Spent': '0', 'X-Credits-Remaining': String(balance ?? 0) } },
        );
      }
      if (reserved.kind === 'idempotency_race') {
        const winner = await this.searches.findByIdempotencyKey(
          call.auth.accountId,
          call.idempotencyKey!,
          IDEMPOTENCY_TTL_HOURS,
        );
        if (!winner) throw DomainError.unavailable('the idempotent request could not be resolved; retry it');
        return this.replay(winner, requestHash, call);
      }
      await this.enqueue(req, searchId, call);
      const accepted = pendingAnswer(searchId, this.config.costs[req.kind], reserved.balance);
      if (!watch) return accepted;
      try {
        return await this.await(searchId, call, watch, this.config.costs[req.kind]);
      } catch (err) {
        // Reserved and queued: the lookup goes on and may be charged, so a 503 ("nothing charged")
        // would be wrong. Answer 202 with what is known without Postgres; the client polls Location.
        if (!isInfrastructureError(err)) throw err;
        this.logger.warn(`request_id=${call.requestId}: waiting for ${searchId} failed, answering 202: ${String(err)}`);
        return accepted;
      }
    } finally {
      watch?.dispose();
    }
  }

  async get(searchId: string, auth: AuthContext): Promise<LookupAnswer> {
    const search = /^srch_[0-9A-Za-z]{1,64}$/.test(searchId)
      ? await this.searches.findForAccount(searchId, auth.accountId)
      : null;
    if (!search) throw new DomainError('not_found', 'no such search');
    const answer = answerFor(search, { replayed: false });
    // Asking again will not change a failed search: no Retry-After here (a retry of the POST
    // with the same Idempotency-Key runs the lookup again).
    if (search.status === 'failed') delete answer.headers['Retry-After'];
    return answer;
  }

  private async enqueue<K extends LookupKind>(
    req: LookupRequest<K>,
    searchId: string,
    call: LookupCall,
  ): Promise<void> {
    try {
      await enqueueLookup(this.queues, {
        v: 1,
        kind: req.kind,
        search_id: searchId,
        account_id: call.auth.accountId,
        request_id: call.requestId,
        submitted_at: new Date().toISOString(),
        input: req.input,
      } as Parameters<typeof enqueueLookup>[1]);
    } catch (err) {
      // Redis is down: give the reservation back now. If Postgres fails too, the worker's
      // reconciler releases the stale pending search later — a refund is never lost.
      await this.searches
        .settle(searchId, {
          status: 'failed',
          error: { code: 'unavailable', message: 'the lookup could not be queued; nothing was charged' },
          sources: [],
        })
        .catch((e: unknown) => this.logger.error(`release after failed enqueue of ${searchId} failed: ${String(e)}`));
      throw DomainError.unavailable('the lookup queue is unavailable; nothing was charged', err);
    }
  }

  private async replay(existing: SearchView, requestHash: string | null, call: LookupCall): Promise<LookupAnswer> {
    if (existing.request_hash !== requestHash) {
      throw new DomainError('idempotency_conflict', 'this Idempotency-Key was used with a different request');
    }
    if (existing.status !== 'pending' || call.prefer.respondAsync) return answerFor(existing, { replayed: true });
    const watch = this.waiter.watch(existing.id);
    try {
      return { ...(await this.await(existing.id, call, watch, existing.cost)), replayed: true };
    } finally {
      watch.dispose();
    }
  }

  private async await(searchId: string, call: LookupCall, watch: SearchWatch, cost: number): Promise<LookupAnswer> {
    const waitS = Math.min(call.prefer.waitS ?? this.config.syncWaitDefaultS, this.config.syncWaitMaxS);
    const deadline = Date.now() + waitS * 1000;
    for (;;) {
      const remaining = deadline - Date.now();
      const event = remaining > 0 ? await watch.next(remaining) : undefined;
      // The worker's completion carries the settled outcome when it is small: no read-back needed.
      if (event?.outcome && event.search_id === searchId)
        return answerFor(inlineView(event, cost), { replayed: false });
      const search = await this.load(searchId, call);
      if (search.status !== 'pending' || Date.now() >= deadline) return answerFor(search, { replayed: false });
    }
  }

  private async load(searchId: string, call: LookupCall): Promise<SearchView> {
    const search = await this.searches.findForAccount(searchId, call.auth.accountId);
    if (!search) throw new DomainError('internal_error', `search ${searchId} vanished`);
    return search;
  }
}

/** The stored search, as the worker's completion event describes it. */
function inlineView(event: LookupJobResult, cost: number): Parameters<typeof answerFor>[0] {
  const outcome = event.outcome!;
  return {
    id: event.search_id,
    status: event.status,
    cost,
    charged: outcome.charged,
    results: outcome.results,
    sources: outcome.sources,
    error: null,
    balance: outcome.balance,
  };
}
