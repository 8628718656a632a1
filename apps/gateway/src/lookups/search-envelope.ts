import type { SearchView } from '@dossier/persistence';

/** What a lookup endpoint sends: status, headers and body, built only from the stored search. */
export interface LookupAnswer {
  httpStatus: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
  replayed: boolean;
}

/** What an answer needs from a search: the stored row, or the outcome a completion event carried. */
export type SearchOutcome = Pick<
  SearchView,
  'id' | 'status' | 'cost' | 'charged' | 'results' | 'sources' | 'error' | 'balance'
>;

export function answerFor(search: SearchOutcome, opts: { replayed: boolean }): LookupAnswer {
  const spent = search.status === 'failed' || search.charged === false ? 0 : search.cost;
  const headers: Record<string, string> = {
    'X-Credits-Spent': String(spent),
    'X-Credits-Remaining': String(search.balance),
  };
  if (search.status === 'pending') {
    return { ...pendingAnswer(search.id, search.cost, search.balance), replayed: opts.replayed };
  }
  if (search.status === 'failed') {
    return {
      httpStatus: 503,
      headers: { ...headers, 'Retry-After': '1' },
      body: {
        status: 'error',
        error: {
          code: 'unavailable',
          message: search.error?.message ?? 'the lookup failed; nothing was charged',
        },
        search_id: search.id,
        credits_remaining: search.balance,
      },
      replayed: opts.replayed,
    };
  }
  return {
    httpStatus: 200,
    headers,
    body: {
      status: 'success',
      search_id: search.id,
      results: search.results ?? [],
      credits_remaining: search.balance,
      sources: search.sources ?? [],
    },
    replayed: opts.replayed,
  };
}

/** `202`: accepted (credits reserved) and still running; the client polls Location. */
export function pendingAnswer(searchId: string, cost: number, balance: number): LookupAnswer {
  return {
    httpStatus: 202,
    headers: {
      'X-Credits-Spent': String(cost),
      'X-Credits-Remaining': String(balance),
      Location: `/v1/searches/${searchId}`,
      'Retry-After': '1',
    },
    body: { status: 'pending', search_id: searchId, credits_remaining: balance },
    replayed: false,
  };
}
