import { sourceSummary, type SearchProgress, type SourceReport, type SourceSummary } from './lookup-result.schema';

/**
 * The envelopes a search and a batch are answered with — by `GET /v1/searches/{id}`'s shape, in a
 * batch's items and in webhook events — built in one place for the gateway and the worker.
 */

/** What an envelope needs from a search: the stored row as SearchesRepository reads it. */
export interface SearchSnapshot {
  id: string;
  status: 'pending' | 'succeeded' | 'failed';
  results: unknown[] | null;
  /** A person search: how many items passed its min_score before its limit cut them (null: not counted). */
  result_total?: number | null;
  sources: SourceReport[] | null;
  error: { code: string; message: string } | null;
  /** What a pending search has found so far (ADR 0049); null or absent: nothing written. */
  progress?: SearchProgress | null;
  /** The account's balance when it was read. */
  balance: number;
}

export interface ItemError {
  code: string;
  message: string;
  details?: { field: string; issue: string }[];
}

export type SearchEnvelope =
  | {
      status: 'success';
      search_id: string;
      results: unknown[];
      total_results?: number;
      credits_remaining: number;
      sources: SourceReport[];
      source_summary: SourceSummary;
    }
  | { status: 'pending'; search_id: string; credits_remaining: number; progress?: SearchProgress }
  | { status: 'error'; error: ItemError; search_id?: string; credits_remaining?: number };

type Success = Extract<SearchEnvelope, { status: 'success' }>;
type Pending = Extract<SearchEnvelope, { status: 'pending' }>;

/**
 * The success envelope (a lookup's 200, `GET /v1/searches/{id}` of a finished search, a batch item), with
 * `total_results` where the search counted its items (a person search: ADR 0047), and `sources` counted by
 * outcome (`source_summary`, ADR 0049).
 */
export function successBody(
  searchId: string,
  results: unknown[],
  sources: SourceReport[],
  balance: number,
  total: number | null = null,
): Success {
  return {
    status: 'success',
    search_id: searchId,
    results,
    ...(total === null ? {} : { total_results: total }),
    credits_remaining: balance,
    sources,
    source_summary: sourceSummary(sources),
  };
}

/** The pending envelope (a lookup's 202, a batch item still running), with what it found so far when known. */
export function pendingBody(searchId: string, balance: number, progress: SearchProgress | null = null): Pending {
  return {
    status: 'pending',
    search_id: searchId,
    credits_remaining: balance,
    ...(progress === null ? {} : { progress }),
  };
}

/** A search as its envelope: success, pending, or (failed, nothing charged) the error envelope. */
export function searchEnvelope(search: SearchSnapshot): SearchEnvelope {
  switch (search.status) {
    case 'pending':
      return pendingBody(search.id, search.balance, search.progress ?? null);
    case 'failed':
      return {
        status: 'error',
        error: { code: 'unavailable', message: search.error?.message ?? 'the lookup failed; nothing was charged' },
        search_id: search.id,
        credits_remaining: search.balance,
      };
    case 'succeeded':
      return successBody(
        search.id,
        search.results ?? [],
        search.sources ?? [],
        search.balance,
        search.result_total ?? null,
      );
  }
}

/** One item of a batch as stored: the search it started, or the error it got instead (nothing charged). */
export type BatchItemRef = { search_id: string } | { error: ItemError };

export interface BatchBody {
  status: 'success' | 'pending';
  batch_id: string;
  items: SearchEnvelope[];
  credits_remaining: number;
}

/**
 * A batch as `POST /v1/batch` and `GET /v1/batches/{id}` answer it (and `batch.completed` carries it):
 * every item in request order, `pending` while any of its searches runs. One answer states one balance:
 * `balance` (the last read) is every item's `credits_remaining` and the batch's — an item read settled at
 * an earlier read does not keep the balance of that read (ADR 0019).
 */
export function batchBody(
  batchId: string,
  items: readonly BatchItemRef[],
  searches: ReadonlyMap<string, SearchSnapshot>,
  balance: number,
): BatchBody {
  const envelopes = items.map((item): SearchEnvelope => {
    if ('error' in item) return { status: 'error', error: item.error };
    const search = searches.get(item.search_id);
    return search
      ? searchEnvelope({ ...search, balance })
      : { status: 'error', error: { code: 'not_found', message: 'this search is gone' }, search_id: item.search_id };
  });
  return {
    status: envelopes.some((e) => e.status === 'pending') ? 'pending' : 'success',
    batch_id: batchId,
    items: envelopes,
    credits_remaining: balance,
  };
}

/** A batch completes once, so its event id derives from the batch id (like searchEventId). */
export function batchEventId(batchId: string): string {
  return `evt_${batchId.replace(/^bat_/, '')}`;
}
