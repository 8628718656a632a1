import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError, SEARCH_ID_PATTERN, newId } from '@dossier/domain';
import { SearchesRepository, type SearchView } from '@dossier/persistence';
import type { AuthContext } from '../auth/auth-context';
import { isBackingServiceDown } from '../http/unavailable';
import { idempotencyConflict, outcomeOf, pendingOutcome, type LookupOutcome } from './lookup-outcome';
import { SubmissionService, type AnyLookupRequest, type LookupCall } from './submission.service';

export type { AnyLookupRequest, LookupCall, LookupRequest } from './submission.service';

/**
 * A single lookup: a submission of one search (SubmissionService), its Idempotency-Key held by the search.
 * Answers in domain terms; the controller makes HTTP of them.
 */
@Injectable()
export class LookupsService {
  private readonly logger = new Logger(LookupsService.name);

  constructor(
    @Inject(SearchesRepository) private readonly searches: SearchesRepository,
    private readonly submission: SubmissionService,
  ) {}

  async submit(req: AnyLookupRequest, call: LookupCall): Promise<LookupOutcome> {
    this.submission.check(req);
    const requestHash = this.submission.requestHash(call);
    if (call.idempotencyKey !== null) {
      const existing = await this.searches.findByIdempotencyKey(call.auth.accountId, call.idempotencyKey);
      if (existing?.status === 'failed' && existing.request_hash === requestHash) {
        // A failure charged nothing and invited a retry: the same key runs the lookup again.
        await this.searches.forgetIdempotencyKey(existing.id);
      } else if (existing) {
        return this.replay(existing, requestHash, call);
      }
    }

    this.submission.assertRoom(req.kind);
    const search = this.submission.searchOf(newId.search(), req, call, {
      idempotencyKey: call.idempotencyKey,
      requestHash,
    });
    const watch = this.submission.watch(call, [search.id]);
    try {
      const reserved = await this.searches.reserve(search);
      if (reserved.kind === 'insufficient') {
        // A request with the same key took the last credits first (parallel retries): this one is its replay.
        const holder = await this.keyHolder(call);
        if (holder) return this.replay(holder, requestHash, call);
        const balance = (await this.searches.balanceOf(call.auth.accountId)) ?? 0;
        throw new DomainError(
          'insufficient_credits',
          `this lookup costs ${search.cost} credit(s) and the balance is ${balance}; nothing was charged`,
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
      await this.submission.enqueue([{ search, request: req }], call, null);
      const accepted = pendingOutcome(search.id, search.cost, reserved.balance);
      if (!watch) return accepted;
      try {
        const states = await this.submission.wait([search.id], call, watch, new Map([[search.id, search.cost]]));
        return outcomeOf(states.get(search.id)!, { replayed: false, retryable: true });
      } catch (err) {
        // Reserved and queued: the lookup goes on and may be charged, so a 503 ("nothing charged")
        // would be wrong. Answer pending with what is known without Postgres; the client polls.
        if (!isBackingServiceDown(err)) throw err;
        this.logger.warn(
          `request_id=${call.requestId}: waiting for ${search.id} failed, answering 202: ${String(err)}`,
        );
        return accepted;
      }
    } finally {
      watch?.dispose();
    }
  }

  /** A search of this account, as it stands (a failed one throws, without inviting a retry). */
  async get(searchId: string, auth: AuthContext): Promise<LookupOutcome> {
    const search = SEARCH_ID_PATTERN.test(searchId)
      ? await this.searches.findForAccount(searchId, auth.accountId, auth.mode)
      : null;
    if (!search) throw new DomainError('not_found', 'no such search');
    return outcomeOf(search, { replayed: false, retryable: false });
  }

  /** The search holding the call's Idempotency-Key now (null without a key): another request's, reserved first. */
  private async keyHolder(call: LookupCall): Promise<SearchView | null> {
    if (call.idempotencyKey === null) return null;
    return this.searches.findByIdempotencyKey(call.auth.accountId, call.idempotencyKey);
  }

  private async replay(existing: SearchView, requestHash: string | null, call: LookupCall): Promise<LookupOutcome> {
    if (existing.request_hash !== requestHash) throw idempotencyConflict();
    const watch = existing.status === 'pending' ? this.submission.watch(call, [existing.id]) : null;
    try {
      const state = watch ? (await this.submission.wait([existing.id], call, watch)).get(existing.id)! : existing;
      return outcomeOf(state, { replayed: true, retryable: true });
    } finally {
      watch?.dispose();
    }
  }
}
