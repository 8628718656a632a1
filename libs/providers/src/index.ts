export * from './provider';
export * from './registry';
export { libphonenumberProvider } from './libphonenumber/libphonenumber.provider';
export { createUsernameProvider, usernameSiteCatalog } from './username/username.provider';
export * from './merge';
export {
  MAX_HOLDERS,
  linkingIdentifiers,
  resolvePeople,
  sharedIdentifiers,
  type PersonCandidate,
  type SharedIdentifiers,
} from './identity/resolve-people';
export { conflictOf } from './identity/person-conflict';
export { areVariants, nameVariants } from './identity/nicknames';
export * from './http';
export * from './email-item';
export * from './http-contract';
export { localProvider, searchPeople, searchCompanies, birthYearsOf } from './local/local.provider';
export { nameMatchScore } from './local/name-match';
export { sandboxProvider } from './sandbox/sandbox.provider';
export { RESOLVER_CANARY, ResolverSanityCache, type ResolverSanity } from './resolver-sanity';
export { providerStatus } from './provider-status';
export { watchlistsProvider, WATCHLISTS_ID } from './watchlists/watchlists.provider';
export { WATCHLIST_THRESHOLD, matchesOf, type ScreenedSubject } from './watchlists/screening';
export { attachWatchlistHits } from './watchlists/attach-hits';
export { controllerOf, isPscKind, pscSchema, pscSnapshotLineSchema } from './companies-house/company-people';
export { companyNumberOf } from './companies-house/companies-house.provider';
export { RELATIONSHIP_TYPES, relationshipKey, type ParentLevel } from './gleif/gleif-parents';
