/** Lookup kinds: each has its own queue, processor, cost and providers. */
export const LOOKUP_KINDS = ['person', 'company', 'email', 'phone'] as const;
export type LookupKind = (typeof LOOKUP_KINDS)[number];

export function isLookupKind(value: string): value is LookupKind {
  return (LOOKUP_KINDS as readonly string[]).includes(value);
}

/** How one provider's call ended, as reported in `sources`. An upstream that failed is never "not_found". */
export const SOURCE_OUTCOMES = [
  'found',
  'not_found',
  'unknown',
  'rate_limited',
  'blocked',
  'timeout',
  'error',
  'skipped',
] as const;
export type SourceOutcome = (typeof SOURCE_OUTCOMES)[number];

export const SEARCH_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type SearchStatus = (typeof SEARCH_STATUSES)[number];

export const LINE_TYPES = [
  'mobile',
  'fixed_line',
  'fixed_line_or_mobile',
  'toll_free',
  'premium_rate',
  'shared_cost',
  'voip',
  'personal_number',
  'pager',
  'uan',
  'voicemail',
  'unknown',
] as const;
export type LineType = (typeof LINE_TYPES)[number];

export const DELIVERABILITIES = ['deliverable', 'undeliverable', 'risky', 'unknown'] as const;
export type Deliverability = (typeof DELIVERABILITIES)[number];

/**
 * What a search has cost its account, as `X-Credits-Spent` reports it: the reservation while it is
 * pending (the credits are held), its cost once captured, 0 when released (nothing found) or failed.
 */
export function creditsSpent(search: { status: SearchStatus; cost: number; charged: boolean | null }): number {
  switch (search.status) {
    case 'pending':
      return search.cost;
    case 'succeeded':
      return search.charged === false ? 0 : search.cost;
    case 'failed':
      return 0;
  }
}
