import type { LookupKind, SourceOutcome } from '@dossier/domain';
import type { LookupInputByKind, ProviderItemByKind } from '@dossier/contracts';
import type { Provider } from './provider';

export interface ContractRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

/** The cases every HTTP provider is run through against a loopback fake of its vendor. */
export const CONTRACT_CASES = [
  'found',
  'not-found',
  '429',
  '401',
  '403',
  '500',
  'malformed',
  'foreign-404',
  'hang',
  'refused',
  'unreachable',
  'lying-dns',
] as const;
export type ContractCase = (typeof CONTRACT_CASES)[number];

/** The outcome each case must be reported as, for a JSON API (a provider may say otherwise, with reason). */
export const API_OUTCOMES: Record<ContractCase, SourceOutcome> = {
  found: 'found',
  'not-found': 'not_found',
  '429': 'rate_limited',
  '401': 'error',
  '403': 'blocked',
  '500': 'error',
  malformed: 'error',
  // A 404 that is not the vendor's (a proxy's page, a base URL that reaches no vendor API): nothing was
  // looked up, so never `not_found`.
  'foreign-404': 'error',
  hang: 'timeout',
  refused: 'error',
  // A base URL where no connection is ever made (a dropped SYN, no network): given up on at the connect
  // timeout, well before the call's deadline.
  unreachable: 'timeout',
  // The upstream's host behind a resolver that answers NXDOMAIN for every name (a captive portal, broken DNS):
  // nothing was asked of the upstream, and nothing is known.
  'lying-dns': 'unknown',
};

/**
 * What the shared contract test needs to run an HTTP provider against a fake of its vendor: exported as
 * `contract` from `<id>/<id>.contract.ts`. The vendor's answers live in `<id>/fixtures/ok/` (`found.json`,
 * `not-found.json`) and `<id>/fixtures/not-ok/` (`429.json`, `401.json`, `403.json`, `500.json`,
 * `malformed.json`), each `{ "status", "headers"?, "body" }` in the vendor's documented format (a string
 * body is sent as is).
 */
export interface HttpContract<K extends LookupKind = LookupKind> {
  provider: Provider<K>;
  kind: K;
  input: LookupInputByKind[K];
  /** Settings that configure the provider against the fake at `baseUrl`. */
  settings(baseUrl: string): Record<string, string>;
  /** Where a case's outcome differs from API_OUTCOMES (e.g. a web page's 401 is a login wall: blocked). */
  outcomes?: Partial<Record<ContractCase, SourceOutcome>>;
  /** Further checks of the found answer's items (the fields the vendor's answer maps onto). */
  checkFound?(items: ProviderItemByKind[K][]): void;
  /** Checks of the requests the provider made in the found case (path, query, auth header). */
  checkRequest?(request: ContractRequest): void;
  /** Checks of every request of the found case, in order (a provider that asks more than once). */
  checkRequests?(requests: ContractRequest[]): void;
}

/**
 * A found case's requests as `METHOD url`: the first as asked, the rest (calls made in parallel, which reach
 * the fake in any order) sorted.
 */
export function requestLines(requests: readonly ContractRequest[]): string[] {
  const [first, ...rest] = requests.map((r) => `${r.method} ${r.url}`);
  return first === undefined ? [] : [first, ...rest.sort()];
}
