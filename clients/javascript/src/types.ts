/**
 * Wire types of the Dossier v1 HTTP contract. Field names are exactly the JSON field names
 * (`snake_case`), so what you read here is what the server sends.
 */

/** The `fetch` function the client uses (the global one unless you pass your own). */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

// ---------------------------------------------------------------------------------------------
// Lookup parameters (request bodies)
// ---------------------------------------------------------------------------------------------

/** `type` of a generic `POST /v1/search`. */
export type SearchType = 'person' | 'company' | 'email' | 'phone' | 'username';

/** Sent with any lookup and stored in the audit trail, e.g. `employment`, `tenant_screening`. */
export interface PurposeParam {
  permissible_purpose?: string;
}

/**
 * Username presence's choice of sites (ADR 0049), for a search with a username: a person search with `username`,
 * or the generic form with `type: "username"` (or `"person"` and an `@handle` as `query`). Each applies only when
 * given: the sites named, of those the ones carrying any of the tags, of those the `top` most popular. Without
 * any, every site is checked. A name or tag no site has is a `ValidationError` naming `sites` or `tags`
 * (`GET /v1/username/sites` lists them); any of them without a username is one too.
 */
export interface UsernameSiteParams {
  /** Check only these sites (1–1000 names, in any case), e.g. `['GitHub', 'Reddit']`. */
  sites?: string[];
  /** Check only the sites carrying any of these tags (1–100): categories (`coding`, `gaming`) or country codes (`de`). */
  tags?: string[];
  /** Check only the N most popular of the sites chosen (a whole number from 1 to 10 000). */
  top?: number;
}

/** Body of `POST /v1/search` (the generic form). */
export interface GenericSearchParams extends PurposeParam, UsernameSiteParams {
  /** 1–256 characters; the main field of the lookup chosen by `type`. */
  query: string;
  type: SearchType;
  /** ISO 3166-1 alpha-2, e.g. `US`. */
  country?: string;
}

/**
 * Body of `POST /v1/search/person`. At least one of name, email, phone, username; `sites`, `tags` and `top` only
 * with `username`.
 */
export interface PersonSearchParams extends PurposeParam, UsernameSiteParams {
  name?: string;
  email?: string;
  phone?: string;
  username?: string;
  location?: string;
  /** `"30-40"`, `"65+"` or `"-25"`. */
  age_range?: string;
  /**
   * ISO 3166-1 alpha-2, e.g. `US`: keeps people known in that country or of no known country, and is the region a
   * national `phone` is read in.
   */
  country?: string;
  /** How many items to answer at most, best first: a whole number from 1 to 100 (the server's default is 25). */
  limit?: number;
  /** From 0 to 1: items whose `match_score` is below it are neither answered nor counted in `total_results`. */
  min_score?: number;
}

/** `search()` takes either the generic form or person fields. */
export type SearchParams = GenericSearchParams | PersonSearchParams;

/** Body of `POST /v1/search/company`. At least one of company_name, domain, registration_number. */
export interface CompanySearchParams extends PurposeParam {
  company_name?: string;
  domain?: string;
  registration_number?: string;
  country?: string;
}

/** Body of `POST /v1/screen` (ADR 0064): a name screened against the imported sanctions lists alone. */
export interface ScreenParams extends PurposeParam {
  /** The subject's name: a person's, or an organisation's with `type: "company"` (1–256 characters). */
  name: string;
  /** `person` (default) or `company`: which entries of the lists the name is screened against. */
  type?: 'person' | 'company';
  /** A person's year of birth (1900–2100): a listed person born more than a year apart is no hit. Not with `company`. */
  birth_year?: number;
  /** ISO 3166-1 alpha-2: an entry of that country says so in `matched_on` (it narrows nothing). */
  country?: string;
}

/** Body of `POST /v1/verify/email`. */
export interface VerifyEmailParams extends PurposeParam {
  email: string;
}

/** Body of `POST /v1/verify/phone`. */
export interface VerifyPhoneParams extends PurposeParam {
  /** E.164 (`+14155552671`) or national format together with `country`. */
  phone: string;
  /** Default region for national-format numbers (ISO 3166-1 alpha-2). */
  country?: string;
}

// ---------------------------------------------------------------------------------------------
// Result items
// ---------------------------------------------------------------------------------------------

export type SourceOutcome =
  'found' | 'not_found' | 'unknown' | 'rate_limited' | 'blocked' | 'timeout' | 'error' | 'skipped';

/** One entry of the envelope's `sources`: a provider tried for this search. */
export interface SourceReport {
  provider: string;
  outcome: SourceOutcome | (string & {});
  took_ms: number;
  /** A short human-readable reason, present when the outcome is neither `found` nor `not_found`. */
  detail?: string;
}

export interface PersonResult {
  id: string;
  /** null only on an item a username presence check produced with nothing else known. */
  full_name: string | null;
  first_name: string | null;
  last_name: string | null;
  aliases: string[];
  emails: string[];
  /** In E.164 (+14155552671) where the number can be read; as recorded otherwise. */
  phones: string[];
  usernames: string[];
  accounts: { service: string; username: string | null; url: string | null }[];
  locations: { city: string | null; region: string | null; country: string | null }[];
  age: number | null;
  birth_year: number | null;
  match_score: number;
  matched_on: string[];
  sources: string[];
  /** Each record merged into this item beyond the first (whose id is the item's), and the identifiers that joined it. */
  linked_by?: { record: string; sources: string[]; to: string; on: SharedIdentifier[] }[];
  /** Other items of this answer that share an identifier with this one but are kept apart, and why. */
  kept_apart?: { item: string; shared: SharedIdentifier[]; reason: string }[];
  /** Sanctions-list entries this person matches (`[]`: screened, no hit); absent when the lists were not screened. */
  watchlist_hits?: WatchlistHit[];
}

/** The sanctions lists a `WatchlistHit` can name. */
export type Watchlist = 'ofac-sdn' | 'un-sc' | 'eu-fsf' | 'uk-sanctions' | 'opensanctions';

/** An entry of a sanctions list that a person or company item matches (ADR 0064). */
export interface WatchlistHit {
  list: Watchlist | (string & {});
  /** The list's own id of the entry. */
  entry_id: string;
  /** The name of the entry that matched best, as the list writes it. */
  listed_name: string;
  /** The programmes or regimes it is listed under, `; `-separated. */
  programme: string | null;
  /** How well the names match, in [0, 1]. */
  match_score: number;
  /** What agreed: the name always; the birth year and country when both sides know them. */
  matched_on: ('name' | 'birth_year' | 'country')[];
}

/** Where one fact of a company item came from: the provider and the upstream record's id or link. */
export interface FactSource {
  provider: string;
  record_id: string;
}

/** An officer of a company (ADR 0066). */
export interface CompanyOfficer {
  name: string;
  /** As the register writes it: `director`, `secretary`, `llp-member`… */
  role: string | null;
  appointed_on: string | null;
  /** null while serving. */
  resigned_on: string | null;
  nationality: string | null;
  country_of_residence: string | null;
  birth_year: number | null;
  birth_month: number | null;
  source: FactSource;
}

/** A person with significant control over a company (ADR 0066). */
export interface CompanyController {
  /** null where the register withholds it. */
  name: string | null;
  kind: 'individual' | 'corporate' | 'legal_person' | 'other';
  natures_of_control: string[];
  notified_on: string | null;
  /** null while in control. */
  ceased_on: string | null;
  source: FactSource;
}

/** An accounting consolidation parent (GLEIF Level 2). */
export interface CompanyParent {
  lei: string;
  name: string | null;
  source: FactSource;
}

/** The fields of a company item that `field_sources` credits. */
export type CompanySourcedField =
  | 'name'
  | 'registration_number'
  | 'jurisdiction'
  | 'country'
  | 'domain'
  | 'status'
  | 'incorporated_on'
  | 'address'
  | 'industry';

/** An identifier two person records share. */
export interface SharedIdentifier {
  type: 'email' | 'phone' | 'username' | 'identity';
  value: string;
}

export interface CompanyResult {
  id: string;
  name: string;
  registration_number: string | null;
  jurisdiction: string | null;
  country: string | null;
  domain: string | null;
  status: string | null;
  incorporated_on: string | null;
  address: string | null;
  industry: string | null;
  match_score: number;
  matched_on: string[];
  sources: string[];
  /** Sanctions-list entries this company matches (`[]`: screened, no hit); absent when the lists were not screened. */
  watchlist_hits?: WatchlistHit[];
  /** Its officers, serving ones first (at most 50); null when not known. */
  officers?: CompanyOfficer[] | null;
  /** Its persons with significant control, current ones first (at most 50); null when not known. */
  controllers?: CompanyController[] | null;
  /** Its accounting consolidation parents; null when not known. */
  parents?: { direct: CompanyParent | null; ultimate: CompanyParent | null } | null;
  /** Where each field with a value came from: every record that gave exactly that value, first the one it was taken from. */
  field_sources?: Partial<Record<CompanySourcedField, FactSource[]>>;
}

export interface EmailResult {
  email: string;
  normalized: string;
  syntax_valid: boolean;
  domain: string | null;
  mx_records: string[];
  deliverability: 'deliverable' | 'undeliverable' | 'risky' | 'unknown';
  reason: string | null;
  disposable: boolean;
  free_provider: boolean;
  role_account: boolean;
  did_you_mean: string | null;
  accounts: { service: string; username: string | null; url: string | null }[];
  sources: string[];
  /** The domain accepts mail for any address; `null` when no probe could tell. */
  is_catch_all: boolean | null;
  /** The mailbox is full; `null` when no probe could tell. */
  has_full_inbox: boolean | null;
  /** The mailbox exists but is disabled; `null` when no probe could tell. */
  is_disabled: boolean | null;
  /** A mail host held an SMTP session; `null` when no probe ran. */
  can_connect_smtp: boolean | null;
  /** 0–100: how likely mail reaches a person, the score of `sub_status`. */
  score: number;
  /** Why the address has its `deliverability`. */
  sub_status: EmailSubStatus;
}

export type EmailSubStatus =
  | 'accepted'
  | 'invalid_syntax'
  | 'no_domain'
  | 'no_mail_host'
  | 'mailbox_not_found'
  | 'mailbox_disabled'
  | 'disposable'
  | 'mailbox_full'
  | 'catch_all'
  | 'role_account'
  | 'dns_failure'
  | 'smtp_unreachable'
  | 'inconclusive'
  | 'not_probed';

export type LineType =
  | 'mobile'
  | 'fixed_line'
  | 'fixed_line_or_mobile'
  | 'toll_free'
  | 'premium_rate'
  | 'shared_cost'
  | 'voip'
  | 'personal_number'
  | 'pager'
  | 'uan'
  | 'voicemail'
  | 'unknown';

export type PhoneValidationError =
  'TOO_SHORT' | 'TOO_LONG' | 'INVALID_LENGTH' | 'INVALID_COUNTRY_CODE' | 'NOT_A_NUMBER' | 'INVALID_BUT_POSSIBLE';

export interface PhoneResult {
  input: string;
  e164: string;
  valid: boolean;
  /** Why the number is not valid (Twilio Lookup v2's vocabulary); empty when it is. */
  validation_errors: PhoneValidationError[];
  possible: boolean;
  country_code: string;
  region: string | null;
  location: string | null;
  carrier: string | null;
  line_type: LineType;
  time_zones: string[];
  national_format: string;
  international_format: string;
  sources: string[];
}

export type AnyResult = PersonResult | CompanyResult | EmailResult | PhoneResult;

// ---------------------------------------------------------------------------------------------
// Envelopes
// ---------------------------------------------------------------------------------------------

/** `200` body of a lookup or of `GET /v1/searches/{id}`. */
export interface SuccessEnvelope<T = AnyResult> {
  status: 'success';
  search_id: string;
  results: T[];
  /** A person search: how many items passed `min_score` before `limit` cut them. */
  total_results?: number;
  credits_remaining: number;
  sources: SourceReport[];
  /** How many entries of `sources` had each outcome (every outcome, 0 where none had it). */
  source_summary?: SourceSummary;
}

/** The counts of an answer's `sources` by outcome. */
export type SourceSummary = Record<SourceOutcome, number>;

/** What a pending search has found so far (a username search: the accounts found on the sites that answered). */
export interface SearchProgress {
  /** The items found so far, as `results` will hold them. */
  results: PersonResult[];
  /** How many sources (sites) have answered so far, by outcome. */
  source_summary: SourceSummary;
  /** How many sources (sites) have still to answer. */
  sources_pending: number;
  /** When the worker wrote this (RFC 3339). */
  updated_at: string;
}

/** `202` body: accepted (credits reserved) and still running. */
export interface PendingEnvelope {
  status: 'pending';
  search_id: string;
  credits_remaining: number;
  /** What the search has found so far; absent until the worker has written some. */
  progress?: SearchProgress;
}

/** The `RateLimit-*` headers of an answer (`result.rateLimit`): `null` for one absent or not a whole number. */
export interface RateLimit {
  /** `RateLimit-Limit`: requests the calling key may make in a burst. */
  limit: number | null;
  /** `RateLimit-Remaining`: requests left in the current burst. */
  remaining: number | null;
  /** `RateLimit-Reset`: seconds until the burst allowance is full again. */
  reset: number | null;
}

/** One entry of a `validation_error`'s `details`. */
export interface FieldIssue {
  field: string;
  issue: string;
}

/** Every error the server sends has this shape. */
export interface ErrorEnvelope {
  status: 'error';
  error: { code: string; message: string; details?: FieldIssue[] };
  request_id: string;
  [extra: string]: unknown;
}

// ---------------------------------------------------------------------------------------------
// Accounts and keys
// ---------------------------------------------------------------------------------------------

export interface AccountInfo {
  id: string;
  email: string;
  created_at: string;
}

/** `POST /v1/auth/register` → `201`. */
export interface RegisterResponse {
  status: 'success';
  account: AccountInfo;
  /** The account's first API key; shown once. */
  api_key: string;
  credits_remaining: number;
}

/** `POST /v1/auth/login` and `POST /v1/auth/keys` → a new key, shown once. */
export interface KeyIssuedResponse {
  status: 'success';
  api_key: string;
  key_id: string;
}

/** `live` (the default) or `test`: a sandbox key (`dsk_test_…`) whose lookups are free and synthetic. */
export type KeyMode = 'live' | 'test';

/** Body of `createKey()`. */
export interface CreateKeyParams {
  name?: string | undefined;
  mode?: KeyMode | undefined;
}

/** `POST /v1/auth/login`. */
export type LoginResponse = KeyIssuedResponse;

export interface ApiKeyInfo {
  id: string;
  /** The first characters of the key (e.g. `dsk_AbCd`); the full key is never shown again. */
  prefix: string;
  name: string | null;
  /** `test` for a sandbox key (`dsk_test_…`). */
  mode: KeyMode;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** `GET /v1/auth/keys`. */
export interface KeyListResponse {
  status: 'success';
  keys: ApiKeyInfo[];
}

/** `DELETE /v1/auth/keys/{id}`. */
export interface KeyRevokedResponse {
  status: 'success';
  /** null when the first answer was lost and the retry found the key already gone (404): the revoke was done. */
  key: ApiKeyInfo | null;
}

/** `GET /v1/account`. */
export interface AccountResponse {
  status: 'success';
  account: AccountInfo;
  credits_remaining: number;
}

// ---------------------------------------------------------------------------------------------
// Search history
// ---------------------------------------------------------------------------------------------

/** The filters of `listSearches()` / `iterSearches()` (`GET /v1/searches`); every one is optional. */
export interface SearchHistoryParams {
  /** Only searches of this kind (a `type: username` search is a `person` search). */
  kind?: BatchKind | undefined;
  /** Searches created at or after it: a `Date` (sent as RFC 3339 in UTC) or an RFC 3339 string (sent as given). */
  since?: string | Date | undefined;
  /** Searches created before it: a `Date` (sent as RFC 3339 in UTC) or an RFC 3339 string (sent as given). */
  until?: string | Date | undefined;
  /** Searches per page, 1–100 (server default 20). */
  limit?: number | undefined;
  /** The previous page's `next_cursor`, sent with the same filters. */
  cursor?: string | undefined;
}

/** One search in the history (its inputs and results are at `getSearch(search_id)`). */
export interface SearchHistoryItem {
  search_id: string;
  kind: BatchKind;
  /** What `GET /v1/searches/{id}` answers as `202`, `200` or the `503` error envelope. */
  status: 'pending' | 'succeeded' | 'failed';
  created_at: string;
  /** `null` while pending. */
  completed_at: string | null;
  credits_spent: number;
  permissible_purpose: string | null;
  /** `null` while pending and for a failed search. */
  result_count: number | null;
}

/** `GET /v1/searches`: one page, newest first. */
export interface SearchHistoryResponse {
  status: 'success';
  searches: SearchHistoryItem[];
  /** Pass as `cursor` (with the same filters) for the next page; `null` on the last page. */
  next_cursor: string | null;
}

// ---------------------------------------------------------------------------------------------
// Batch
// ---------------------------------------------------------------------------------------------

/** The lookups a batch can run. */
export type BatchKind = 'person' | 'company' | 'email' | 'phone';

/** One request of a batch: `input` is the body of that kind's endpoint. */
export type BatchRequest =
  | { kind: 'person'; input: PersonSearchParams }
  | { kind: 'company'; input: CompanySearchParams }
  | { kind: 'email'; input: VerifyEmailParams }
  | { kind: 'phone'; input: VerifyPhoneParams };

/**
 * An item of a batch that was not run (invalid: `validation_error`; not covered by the balance:
 * `insufficient_credits`) or whose lookup failed (`unavailable`, with its `search_id`). It cost nothing.
 */
export interface BatchErrorItem {
  status: 'error';
  error: { code: string; message: string; details?: FieldIssue[] };
  /** Set when an accepted lookup failed. */
  search_id?: string;
  credits_remaining?: number;
}

/** One item of a batch as sent, in request order (read as a `BatchItem`): tell them apart by `status`. */
export type BatchItemEnvelope<T = AnyResult> = SuccessEnvelope<T> | PendingEnvelope | BatchErrorItem;

/** `POST /v1/batch` and `GET /v1/batches/{id}`. */
export interface BatchEnvelope<T = AnyResult> {
  /** `success` when every item is settled, `pending` while one still runs. */
  status: 'success' | 'pending';
  batch_id: string;
  items: BatchItemEnvelope<T>[];
  credits_remaining: number;
}

// ---------------------------------------------------------------------------------------------
// Webhooks
// ---------------------------------------------------------------------------------------------

export type WebhookEventType = 'search.completed' | 'search.failed' | 'batch.completed';

export interface WebhookInfo {
  /** `wh_…` */
  id: string;
  url: string;
  events: WebhookEventType[];
  created_at: string;
}

export interface WebhookCreatedResponse {
  status: 'success';
  webhook: WebhookInfo;
  /** `whsec_…`: signs every delivery. Shown only here, once. */
  secret: string;
}

export interface WebhookListResponse {
  status: 'success';
  webhooks: WebhookInfo[];
}

export interface WebhookDeletedResponse {
  status: 'success';
  /** null when the first answer was lost and the retry found the webhook already gone (404): the delete was done. */
  webhook: WebhookInfo | null;
}

/** One delivery attempt. */
export interface WebhookDelivery {
  /** `evt_…`, the same on every attempt of one event. */
  event_id: string;
  type: WebhookEventType;
  /** 1 for the first try. */
  attempt: number;
  outcome: 'delivered' | 'retrying' | 'failed';
  /** The receiver's HTTP status; `null` when it did not answer. */
  status_code: number | null;
  /** Why the attempt failed; `null` when delivered. */
  error: string | null;
  duration_ms: number;
  attempted_at: string;
}

export interface WebhookDeliveryListResponse {
  status: 'success';
  /** Newest first, at most 100. */
  deliveries: WebhookDelivery[];
}

/** A verified delivery (see `Webhook.verify`). Receivers dedupe on `id`. */
export interface WebhookEvent {
  /** `evt_…`, the same on every redelivery. */
  id: string;
  type: WebhookEventType | (string & {});
  created_at: string;
  /** The search envelope (`search.*`) or the batch (`batch.completed`). */
  data: unknown;
}
