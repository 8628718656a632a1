import { DomainError, creditsSpent } from '@dossier/domain';
import type { SearchProgress, SourceReport } from '@dossier/contracts';
import type { SearchView } from '@dossier/persistence';

/**
 * How a lookup stands, in domain terms: done with its results, or accepted and still running. A failed
 * lookup is not an outcome but a `DomainError` (`unavailable`, carrying the search id and the balance),
 * so the one error filter answers it like every other failure. The controller makes HTTP of outcomes.
 */
export type LookupOutcome =
  | {
      status: 'succeeded';
      searchId: string;
      results: unknown[];
      /** A person search's count of items before its limit (ADR 0047); null when not counted. */
      total: number | null;
      sources: SourceReport[];
      /** Credits this lookup charged (0 when it found nothing). */
      spent: number;
      balance: number;
      /** The stored outcome of an earlier request with the same Idempotency-Key. */
      replayed: boolean;
    }
  | {
      status: 'pending';
      searchId: string;
      /** Credits held for it until it settles. */
      reserved: number;
      balance: number;
      replayed: boolean;
      /** What it has found so far (ADR 0049), null when the worker has written nothing. */
      progress: SearchProgress | null;
    };

/** What an outcome needs from a search: the stored row, or what a completion event carried. */
export type SearchState = Pick<
  SearchView,
  'id' | 'status' | 'cost' | 'charged' | 'results' | 'result_total' | 'sources' | 'error' | 'progress' | 'balance'
>;

export function pendingOutcome(
  searchId: string,
  reserved: number,
  balance: number,
  progress: SearchProgress | null = null,
): LookupOutcome {
  return { status: 'pending', searchId, reserved, balance, replayed: false, progress };
}

/**
 * The outcome of a search as stored. A failed search throws: `retryable` says whether asking again can
 * help (a POST, which re-runs it under the same Idempotency-Key) or not (a GET of the same search).
 */
export function outcomeOf(search: SearchState, opts: { replayed: boolean; retryable: boolean }): LookupOutcome {
  switch (search.status) {
    case 'pending':
      return { ...pendingOutcome(search.id, search.cost, search.balance, search.progress), replayed: opts.replayed };
    case 'failed':
      throw new DomainError('unavailable', search.error?.message ?? 'the lookup failed; nothing was charged', {
        retryAfterS: opts.retryable ? 1 : undefined,
        credits: { spent: 0, remaining: search.balance },
        searchId: search.id,
      });
    case 'succeeded':
      return {
        status: 'succeeded',
        searchId: search.id,
        results: search.results ?? [],
        total: search.result_total,
        sources: search.sources ?? [],
        spent: creditsSpent(search),
        balance: search.balance,
        replayed: opts.replayed,
      };
  }
}

/** An Idempotency-Key this account already used, within its 24 hours, for another request (a lookup or a batch). */
export function idempotencyConflict(): DomainError {
  return new DomainError('idempotency_conflict', 'this Idempotency-Key was used with a different request');
}
