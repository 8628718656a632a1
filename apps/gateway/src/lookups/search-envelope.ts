import type { SearchView } from '@dossier/persistence';

/** What a lookup endpoint sends: status, headers and body, built only from the stored search. */
export interface LookupAnswer {
  httpStatus: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
  replayed: boolean;
}

export function answerFor(search: SearchView, opts: { replayed: boolean }): LookupAnswer {
  const spent = search.status === 'failed' || search.charged === false ? 0 : search.cost;
  const headers: Record<string, string> = {
    'X-Credits-Spent': String(spent),
    'X-Credits-Remaining': String(search.balance),
  };
  if (search.status === 'pending') {
    return {
      httpStatus: 202,
      headers: { ...headers, Location: `/v1/searches/${search.id}`, 'Retry-After': '1' },
      body: { status: 'pending', search_id: search.id, credits_remaining: search.balance },
      replayed: opts.replayed,
    };
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
