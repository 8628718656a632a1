import { Inject, Injectable, Logger } from '@nestjs/common';
import { BATCH_ID_PATTERN, DomainError, isDomainError, newId, storableText, type LookupKind } from '@dossier/domain';
import { batchBody as bodyOf, type BatchBody, type ItemError, type SearchSnapshot } from '@dossier/contracts';
import {
  BatchesRepository,
  SearchesRepository,
  type BatchView,
  type NewSearch,
  type PlannedItem,
} from '@dossier/persistence';
import type { GatewayConfig } from '@dossier/config';
import type { AuthContext } from '../auth/auth-context';
import { GATEWAY_CONFIG } from '../infra/tokens';
import { SettledEventsService } from '../webhooks/settled-events.service';
import { isBackingServiceDown } from '../http/unavailable';
import { parseBody } from '../http/validation';
import { companyLookup, emailLookup, personLookup, phoneLookup } from '../lookups/lookup-requests';
import { idempotencyConflict } from '../lookups/lookup-outcome';
import { LookupsService, UNQUEUED_ERROR, type AnyLookupRequest, type LookupCall } from '../lookups/lookups.service';
import { ResultWaiterService, type SearchWatch } from '../lookups/result-waiter.service';
import { batchBody, batchItemBody } from './batch.schema';

/**
 * Each kind's endpoint body, validated and mapped onto its lookup: a batch item is checked as its endpoint
 * checks it, with the operator's DEFAULT_REGION as the endpoint has it.
 */
const LOOKUP_OF: Record<LookupKind, (input: unknown, defaultRegion: string) => AnyLookupRequest> = {
  person: personLookup,
  company: companyLookup,
  email: emailLookup,
  phone: phoneLookup,
};

/** A planned item, with the lookup a valid one queues. */
type Planned = (PlannedItem & { search: NewSearch; request: AnyLookupRequest }) | { error: ItemError };

/** A search known only to have been reserved. */
function pendingSnapshot(id: string, balance: number): SearchSnapshot {
  return {
    id,
    status: 'pending',
    results: null,
    result_total: null,
    sources: null,
    error: null,
    progress: null,
    balance,
  };
}

/** A batch as it stands, and whether this answer replays an earlier request with the same Idempotency-Key. */
export interface BatchOutcome {
  body: BatchBody;
  replayed: boolean;
}

/**
 * `POST /v1/batch` (ADR 0019): every item validated on its own, the valid ones reserved one by one and the
 * batch recorded in one transaction, one job per item on its kind's queue, then the same wait as a single
 * lookup — for all of them.
 */
@Injectable()
export class BatchService {
  private readonly logger = new Logger(BatchService.name);

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly lookups: LookupsService,
    private readonly waiter: ResultWaiterService,
    @Inject(BatchesRepository) private readonly batches: BatchesRepository,
    @Inject(SearchesRepository) private readonly searches: SearchesRepository,
    private readonly events: SettledEventsService,
  ) {}

  async submit(raw: unknown, call: LookupCall): Promise<BatchOutcome> {
    // Each item's text is checked with the item (plan): a NUL in one item is that item's error, not the batch's.
    const { requests } = parseBody(batchBody, raw, 'body', 'requests');
    const requestHash = this.lookups.requestHash(call);
    if (call.idempotencyKey !== null) {
      const existing = await this.batches.findByIdempotencyKey(call.auth.accountId, call.idempotencyKey);
      if (existing) return this.replay(existing, requestHash, call);
    }

    const planned = requests.map((item, index) => this.plan(item, index, call));
    const batchId = newId.batch();
    const searchIds = planned.flatMap((p) => ('search' in p ? [p.search.id] : []));
    const watch = call.prefer.respondAsync || searchIds.length === 0 ? null : this.waiter.watch(...searchIds);
    try {
      const created = await this.batches.create(
        {
          id: batchId,
          accountId: call.auth.accountId,
          keyId: call.auth.keyId,
          idempotencyKey: call.idempotencyKey,
          requestHash,
          requestId: call.requestId,
        },
        planned,
      );
      // Keys are per account, across lookups and batches (API.md): a single lookup's key is another request's.
      if (created.kind === 'idempotency_conflict') throw idempotencyConflict();
      if (created.kind === 'idempotency_race') {
        const winner = await this.batches.findByIdempotencyKey(call.auth.accountId, call.idempotencyKey!);
        if (!winner) throw DomainError.unavailable('the idempotent request could not be resolved; retry it');
        return this.replay(winner, requestHash, call);
      }
      const requestOf = new Map(planned.flatMap((p) => ('search' in p ? [[p.search.id, p.request] as const] : [])));
      // Every reserved item as just queued: what is known without reading Postgres.
      const asQueued = (): BatchOutcome => {
        const pending = new Map(created.reserved.map((s) => [s.id, pendingSnapshot(s.id, created.balance)] as const));
        return { body: bodyOf(batchId, created.items, pending, created.balance), replayed: false };
      };
      try {
        // Every add finishes, landed or failed, before any job is taken back: with the first failure alone,
        // an add still in flight could reach Redis after the take-back, and its job run a released search.
        const adds = await Promise.allSettled(
          created.reserved.map((s) => this.lookups.enqueueJob(requestOf.get(s.id)!, s.id, call)),
        );
        const failed = adds.find((a): a is PromiseRejectedResult => a.status === 'rejected');
        if (failed) throw failed.reason;
        // `Prefer: respond-async` answers 202 at once (API.md), as a single lookup does, however fast the
        // items run: reading them first answered 200 when they had all finished.
        if (call.prefer.respondAsync) return asQueued();
      } catch (err) {
        if (await this.releaseUnqueued(batchId, created.reserved, call)) {
          // Redis is down: every reservation went back, and the batch went with them (the 503 names no batch):
          // its key is free, so retrying runs it again, and no batch.completed is ever sent for it.
          throw DomainError.unavailable('the lookup queue is unavailable; nothing was charged', err);
        }
        // Some add did reach Redis and a worker runs its job, or its job already settled (or Postgres failed
        // too, and the reconciler settles the rest): the batch stands, with its key, and is answered as it is.
        // The released items read failed (`unavailable`, nothing charged); a retry with the same key replays it.
        this.logger.warn(
          `request_id=${call.requestId}: queueing batch ${batchId} failed but not all of its searches could be released; answering the batch as it stands: ${String(err)}`,
        );
      }
      const batch = { id: batchId, items: created.items };
      try {
        return { body: await this.collect(batch, call, watch), replayed: false };
      } catch (err) {
        // Reserved and queued: the lookups go on and may be charged, so a 503 ("nothing charged") would be
        // wrong. Answer the batch pending, as far as it is known without Postgres; the client polls it.
        if (!isBackingServiceDown(err)) throw err;
        this.logger.warn(
          `request_id=${call.requestId}: waiting for batch ${batchId} failed, answering pending: ${String(err)}`,
        );
        return asQueued();
      }
    } finally {
      watch?.dispose();
    }
  }

  /**
   * Takes back the jobs of a batch whose queueing failed (LookupsService.withdraw: an add whose reply was lost
   * did reach Redis), releases the searches whose jobs no worker runs, and deletes the batch when every one was
   * released here (one transaction: BatchesRepository.releaseUnqueued); true then. False when a worker runs an
   * item's job (that search is its job's: not released), when an add did reach Redis and its job settled its
   * search first, or when Postgres failed too: the batch stands, with its key. A batch that stands is
   * completed here once none of its searches is pending (a released search's job, taken back, never checks
   * it), after the events of each search settled by a job taken back (SettledEventsService.searchSettled).
   */
  private async releaseUnqueued(batchId: string, reserved: readonly NewSearch[], call: LookupCall): Promise<boolean> {
    const jobs = await Promise.all(reserved.map((s) => this.lookups.withdraw(s.kind, s.id, call)));
    const unqueued = reserved.flatMap((s, i) => (jobs[i] === 'running' ? [] : [{ id: s.id, job: jobs[i] }]));
    if (unqueued.length === 0) return false; // every job runs: each settles its search and checks the batch
    try {
      const { released, voided } = await this.batches.releaseUnqueued(
        batchId,
        unqueued.map((s) => s.id),
        UNQUEUED_ERROR,
        unqueued.length === reserved.length,
      );
      if (voided) return true;
      // Settled by its job before the release, and that job is gone: it may have failed to queue its events.
      const settledByJob = unqueued.filter((s, i) => s.job === 'removed' && !released[i]);
      for (const s of settledByJob) await this.events.searchSettled(s.id, call.requestId);
      await this.events.batchSettled(batchId, call.requestId);
      return false;
    } catch (e) {
      this.logger.error(
        `request_id=${call.requestId}: releasing unqueued batch ${batchId} failed (its jobs or the reconciler settle its searches): ${String(e)}`,
      );
      return false;
    }
  }

  /** The account's batch as it stands now. */
  async get(batchId: string, auth: AuthContext): Promise<BatchBody> {
    const batch = BATCH_ID_PATTERN.test(batchId)
      ? await this.batches.findForAccount(batchId, auth.accountId, auth.mode)
      : null;
    if (!batch) throw new DomainError('not_found', 'no such batch');
    return this.read(batch, auth.accountId, new Map());
  }

  /**
   * One request of the batch as a search to start, or the error it gets in its place: checked exactly
   * as its endpoint checks a body (and its purpose and queue room as a single lookup's), costing nothing.
   * An item that is not an object is named by its place (`requests.2`): the request's body itself is fine.
   */
  private plan(item: unknown, index: number, call: LookupCall): Planned {
    try {
      // The input's text is checked by its endpoint's validator, which names its fields as the endpoint does.
      const { kind, input } = parseBody(batchItemBody, item, `requests.${index}`, 'input');
      const request = LOOKUP_OF[kind](input, this.config.defaultRegion);
      this.lookups.checkPurpose(request);
      this.lookups.checkSites(request);
      this.lookups.assertRoom(kind);
      return {
        request,
        search: {
          id: newId.search(),
          accountId: call.auth.accountId,
          keyId: call.auth.keyId,
          kind,
          input: request.input,
          cost: this.lookups.costOf(kind, call),
          idempotencyKey: null,
          requestHash: null,
          requestId: call.requestId,
          permissiblePurpose: request.purpose,
        },
      };
    } catch (err) {
      if (!isDomainError(err)) throw err;
      // Stored with the batch: a field named by the bad text it holds (`{"x\u0000": 1}`) is named storably.
      const error: ItemError = {
        code: err.code,
        message: storableText(err.message),
        ...(err.details
          ? { details: err.details.map((d) => ({ field: storableText(d.field), issue: storableText(d.issue) })) }
          : {}),
      };
      return { error };
    }
  }

  private async replay(existing: BatchView, requestHash: string | null, call: LookupCall): Promise<BatchOutcome> {
    if (existing.request_hash !== requestHash) {
      throw idempotencyConflict();
    }
    const searchIds = existing.items.flatMap((i) => ('search_id' in i ? [i.search_id] : []));
    const watch = call.prefer.respondAsync || searchIds.length === 0 ? null : this.waiter.watch(...searchIds);
    try {
      return { body: await this.collect(existing, call, watch), replayed: true };
    } finally {
      watch?.dispose();
    }
  }

  /** Waits until no item is pending or the request's wait runs out; the batch as it stands then. */
  private async collect(
    batch: Pick<BatchView, 'id' | 'items'>,
    call: LookupCall,
    watch: SearchWatch | null,
  ): Promise<BatchBody> {
    const deadline = Date.now() + this.lookups.waitS(call) * 1000;
    const settled = new Map<string, SearchSnapshot>();
    for (;;) {
      const body = await this.read(batch, call.auth.accountId, settled);
      const remaining = deadline - Date.now();
      if (body.status !== 'pending' || watch === null || remaining <= 0) return body;
      await watch.next(remaining);
    }
  }

  /**
   * The batch's body, reading only the searches not already known settled (`settled` is filled as they
   * settle: a 100-item batch re-reads only what still runs).
   */
  private async read(
    batch: Pick<BatchView, 'id' | 'items'>,
    accountId: string,
    settled: Map<string, SearchSnapshot>,
  ): Promise<BatchBody> {
    const unsettled = batch.items.flatMap((i) => ('search_id' in i && !settled.has(i.search_id) ? [i.search_id] : []));
    const views = await this.searches.findManyForAccount(unsettled, accountId);
    const current = new Map(settled);
    for (const v of views) {
      current.set(v.id, v);
      if (v.status !== 'pending') settled.set(v.id, v);
    }
    // The latest balance: the batch's credits_remaining, and every item's (batchBody).
    const balance = views[0]?.balance ?? (await this.searches.balanceOf(accountId)) ?? 0;
    return bodyOf(batch.id, batch.items, current, balance);
  }
}
