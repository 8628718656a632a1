import { Inject, Injectable } from '@nestjs/common';
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
import { isBackingServiceDown } from '../http/unavailable';
import { parseBody } from '../http/validation';
import { companyLookup, emailLookup, personLookup, phoneLookup } from '../lookups/lookup-requests';
import { idempotencyConflict } from '../lookups/lookup-outcome';
import type { SearchWatch } from '../lookups/result-waiter.service';
import { SubmissionService, type AnyLookupRequest, type LookupCall } from '../lookups/submission.service';
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
 * batch recorded in one transaction, then the one submission sequence (SubmissionService) for all of them.
 */
@Injectable()
export class BatchService {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly submission: SubmissionService,
    @Inject(BatchesRepository) private readonly batches: BatchesRepository,
    @Inject(SearchesRepository) private readonly searches: SearchesRepository,
  ) {}

  async submit(raw: unknown, call: LookupCall): Promise<BatchOutcome> {
    // Each item's text is checked with the item (plan): a NUL in one item is that item's error, not the batch's.
    const { requests } = parseBody(batchBody, raw, 'body', 'requests');
    const requestHash = this.submission.requestHash(call);
    if (call.idempotencyKey !== null) {
      const existing = await this.batches.findByIdempotencyKey(call.auth.accountId, call.idempotencyKey);
      if (existing) return this.replay(existing, requestHash, call);
    }

    const planned = requests.map((item, index) => this.plan(item, index, call));
    const batchId = newId.batch();
    const searchIds = planned.flatMap((p) => ('search' in p ? [p.search.id] : []));
    const watch = this.submission.watch(call, searchIds);
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
      // A batch whose every reservation went back (Redis down) goes with them: the 503 names no batch, its key is
      // free, so retrying runs it again, and no batch.completed is ever sent for it. A batch that stands is
      // answered as it is; its released items read failed (`unavailable`, nothing charged).
      const reserved = created.reserved.map((search) => ({ search, request: requestOf.get(search.id)! }));
      const queued = (await this.submission.enqueue(reserved, call, batchId)) === 'queued';
      // `Prefer: respond-async` answers 202 at once (API.md), as a single lookup does, however fast the items run.
      if (queued && call.prefer.respondAsync) return asQueued();
      try {
        const costs = new Map(created.reserved.map((s) => [s.id, s.cost] as const));
        return { body: await this.collect({ id: batchId, items: created.items }, call, watch, costs), replayed: false };
      } catch (err) {
        // Reserved and queued: the lookups go on and may be charged, so a 503 ("nothing charged") would be
        // wrong. Answer the batch pending, as far as it is known without Postgres; the client polls it.
        if (!isBackingServiceDown(err)) throw err;
        return asQueued();
      }
    } finally {
      watch?.dispose();
    }
  }

  /** The account's batch as it stands now. */
  async get(batchId: string, auth: AuthContext): Promise<BatchBody> {
    const batch = BATCH_ID_PATTERN.test(batchId)
      ? await this.batches.findForAccount(batchId, auth.accountId, auth.mode)
      : null;
    if (!batch) throw new DomainError('not_found', 'no such batch');
    const ids = searchIdsOf(batch);
    const found = await this.searches.findManyForAccount(ids, auth.accountId);
    return this.bodyOf(batch, auth.accountId, new Map(found.map((s) => [s.id, s])));
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
      this.submission.check(request);
      this.submission.assertRoom(kind);
      const search = this.submission.searchOf(newId.search(), request, call, {
        idempotencyKey: null,
        requestHash: null,
      });
      return { request, search };
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
    if (existing.request_hash !== requestHash) throw idempotencyConflict();
    const watch = this.submission.watch(call, searchIdsOf(existing));
    try {
      return { body: await this.collect(existing, call, watch), replayed: true };
    } finally {
      watch?.dispose();
    }
  }

  /** Waits until no item is pending or the request's wait runs out (SubmissionService.wait); the batch then. */
  private async collect(
    batch: Pick<BatchView, 'id' | 'items'>,
    call: LookupCall,
    watch: SearchWatch | null,
    costs?: ReadonlyMap<string, number>,
  ): Promise<BatchBody> {
    const states = await this.submission.wait(searchIdsOf(batch), call, watch, costs);
    return this.bodyOf(batch, call.auth.accountId, states);
  }

  /** The batch's body, with the account's latest balance: the batch's credits_remaining, and every item's. */
  private async bodyOf(
    batch: Pick<BatchView, 'id' | 'items'>,
    accountId: string,
    states: ReadonlyMap<string, SearchSnapshot>,
  ): Promise<BatchBody> {
    const balance = (await this.searches.balanceOf(accountId)) ?? 0;
    return bodyOf(batch.id, batch.items, states, balance);
  }
}

function searchIdsOf(batch: Pick<BatchView, 'items'>): string[] {
  return batch.items.flatMap((i) => ('search_id' in i ? [i.search_id] : []));
}
