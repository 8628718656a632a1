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

export interface SourceReport {
  provider: string;
  outcome: SourceOutcome;
  took_ms: number;
}

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

export interface PhoneResultItem {
  input: string;
  e164: string;
  valid: boolean;
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

export interface PersonLocation {
  city: string | null;
  region: string | null;
  country: string | null;
}

export interface PersonResultItem {
  id: string;
  full_name: string;
  first_name: string | null;
  last_name: string | null;
  aliases: string[];
  emails: string[];
  phones: string[];
  usernames: string[];
  locations: PersonLocation[];
  age: number | null;
  birth_year: number | null;
  match_score: number;
  matched_on: string[];
  sources: string[];
}

export interface CompanyResultItem {
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
}

export type Deliverability = 'deliverable' | 'undeliverable' | 'risky' | 'unknown';

export interface EmailAccount {
  service: string;
  username: string | null;
  url: string | null;
}

export interface EmailResultItem {
  email: string;
  normalized: string;
  syntax_valid: boolean;
  domain: string | null;
  mx_records: string[];
  deliverability: Deliverability;
  reason: string | null;
  disposable: boolean;
  free_provider: boolean;
  role_account: boolean;
  did_you_mean: string | null;
  accounts: EmailAccount[];
  sources: string[];
}

export interface ResultItemByKind {
  person: PersonResultItem;
  company: CompanyResultItem;
  email: EmailResultItem;
  phone: PhoneResultItem;
}

export type ResultItem = ResultItemByKind[LookupKind];
