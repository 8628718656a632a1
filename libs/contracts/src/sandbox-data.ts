import type { CompanyRecord, LookupKind, PersonRecord } from '@dossier/domain';
import { EMAIL_SCORES, type EmailSubStatus, type ResultItemByKind } from './lookup-result.schema';

/**
 * THE synthetic data set test keys are answered from (ADR 0021, ADR 0045), by the worker's sandbox provider.
 * Everything here is fictional: numbers in the +1 555-555-01xx range and Ofcom's drama range (+44 20 7946 0xxx),
 * addresses and domains under example.com. The "Test keys" table (docs/walkthrough.md), the OpenAPI examples and
 * the end-to-end test are all read from this list, so they cannot drift.
 *
 * Phone and e-mail answers are listed item for item. Person and company answers are the live local search's
 * (searchPeople, searchCompanies, their scoring) over the synthetic records SANDBOX_PEOPLE and
 * SANDBOX_COMPANIES, so any search of them answers as a live key's over the same records would; a case
 * documents what it finds (SandboxFind), which the sandbox provider's spec checks against that code.
 *
 * A phone number or address not listed gets, as from a live key, exactly one item (API.md): the number's own forms
 * and validity, or the address's syntax, and nothing else known — the sandbox's source `unknown` with
 * SANDBOX_UNLISTED as its detail. A person or company search that matches none of the records is "not found"
 * (`results: []`).
 */
interface SandboxCaseOf<K extends LookupKind> {
  kind: K;
  /** What the answer shows, as the docs list it. */
  answer: string;
  /** The request body of the kind's own endpoint (`POST /v1/verify/phone`, …) that gives this answer. */
  body: Record<string, string>;
  /** The sandbox's outcome in `sources`: `unknown` (with SANDBOX_UNLISTED) for a phone or address not listed. */
  outcome: 'found' | 'not_found' | 'unknown';
}

/** A phone or e-mail case: the one item the lookup returns in `results`, exactly. */
export interface SandboxCheckCase<K extends 'phone' | 'email'> extends SandboxCaseOf<K> {
  items: ResultItemByKind[K][];
}

/** One item of a person or company answer: the synthetic record it shows (its `external_id`), as scored. */
export interface SandboxFind {
  record: string;
  match_score: number;
  matched_on: string[];
}

/**
 * A person or company case: the items the live search answers over the synthetic records, best first (those of
 * one score in the order of their ids, as live ones are) — each the record as a live item shows it (`age` from
 * `birth_year`, the year the lookup runs), with the score and `matched_on` given here. Empty for a "not found".
 */
export interface SandboxSearchCase<K extends 'person' | 'company'> extends SandboxCaseOf<K> {
  finds: SandboxFind[];
}

export type SandboxCase =
  SandboxCheckCase<'phone'> | SandboxCheckCase<'email'> | SandboxSearchCase<'person'> | SandboxSearchCase<'company'>;

/** The `source` of the synthetic records, and the provider id in their items' `sources`. */
export const SANDBOX_SOURCE = 'sandbox';

/** The sandbox's `detail` in `sources`, and an unlisted address's `reason`: it has no data on the input. */
export const SANDBOX_UNLISTED = 'sandbox: not one of the documented test inputs, so nothing is known about it';

const SRC = [SANDBOX_SOURCE];

/** The number +1 555-555-`line` as the phone result shows it (line_type `mobile` when valid). */
const phone = (line: string, valid: boolean): ResultItemByKind['phone'] => ({
  input: `+1555555${line}`,
  e164: `+1555555${line}`,
  valid,
  // 555-55xx is of a possible length for the US, in no range it assigns (what libphonenumber says of it).
  validation_errors: valid ? [] : ['INVALID_BUT_POSSIBLE'],
  possible: true,
  country_code: '1',
  region: 'US',
  location: valid ? 'Springfield, IL' : null,
  carrier: valid ? 'Sandbox Mobile' : null,
  line_type: valid ? 'mobile' : 'unknown',
  time_zones: valid ? ['America/Chicago'] : [],
  national_format: `(555) 555-${line}`,
  international_format: `+1 555 555 ${line}`,
  sources: SRC,
});

type MailboxFacts = Pick<
  ResultItemByKind['email'],
  'is_catch_all' | 'has_full_inbox' | 'is_disabled' | 'can_connect_smtp'
>;

/** What a probe that reached the mail host says of a mailbox it accepted, refused or found on a catch-all domain. */
const probed = (is_catch_all: boolean | null): MailboxFacts => ({
  is_catch_all,
  has_full_inbox: false,
  is_disabled: false,
  can_connect_smtp: true,
});

/**
 * An e-mail case: the address at example.com, its deliverability, the reason given, its sub-status and the
 * probe's facts (ADR 0057); `unknown` for an address the sandbox knows nothing about (no MX, no probe either).
 */
const email = (
  user: string,
  answer: string,
  deliverability: ResultItemByKind['email']['deliverability'],
  reason: string | null,
  sub_status: EmailSubStatus,
  facts: MailboxFacts,
  outcome: 'found' | 'unknown' = 'found',
): SandboxCheckCase<'email'> => ({
  kind: 'email',
  answer,
  outcome,
  body: { email: `${user}@example.com` },
  items: [
    {
      email: `${user}@example.com`,
      normalized: `${user}@example.com`,
      syntax_valid: true,
      domain: 'example.com',
      mx_records: outcome === 'found' ? ['mx.example.com'] : [],
      deliverability,
      reason,
      disposable: false,
      free_provider: false,
      role_account: false,
      did_you_mean: null,
      accounts: [],
      sources: SRC,
      ...facts,
      score: EMAIL_SCORES[sub_status],
      sub_status,
    },
  ],
});

/** A namesake of the person with namesakes: city, birth year, e-mail user, username, phone +1 555-555-`line`. */
const alex = (
  place: string,
  city: string,
  region: string,
  birthYear: number,
  user: string,
  line: string,
): PersonRecord => ({
  source: SANDBOX_SOURCE,
  external_id: `alex-${place}`,
  full_name: 'Alex Sandbox',
  emails: [`${user}@example.com`],
  phones: [`+1555555${line}`],
  usernames: [user],
  locations: [{ city, region, country: 'US' }],
  birth_year: birthYear,
});

/** The people person searches with a test key find: three namesakes in the US. */
export const SANDBOX_PEOPLE: readonly PersonRecord[] = [
  alex('springfield', 'Springfield', 'IL', 1980, 'alex.sandbox', '0100'),
  alex('portland', 'Portland', 'OR', 1975, 'asandbox', '0101'),
  alex('austin', 'Austin', 'TX', 1992, 'alex.sandbox92', '0102'),
];

const company = (id: string, name: string, number: string, status: string, domain: string): CompanyRecord => ({
  source: SANDBOX_SOURCE,
  external_id: id,
  name,
  registration_number: number,
  jurisdiction: 'GB',
  country: 'GB',
  domain,
  status,
  incorporated_on: '2001-04-01',
  address: '1 Example Street, Exampleton, EX1 0AA',
  industry: 'Software',
});

/** The companies company searches with a test key find: an active one and a dissolved one in the UK. */
export const SANDBOX_COMPANIES: readonly CompanyRecord[] = [
  company('widgets', 'Sandbox Widgets Ltd', '00000001', 'active', 'widgets.example.com'),
  company('dissolved', 'Sandbox Dissolved Ltd', '00000002', 'dissolved', 'dissolved.example.com'),
];

/** A person or company case: `found` with its finds, `not_found` with none. */
const search = <K extends 'person' | 'company'>(
  kind: K,
  answer: string,
  body: Record<string, string>,
  ...finds: SandboxFind[]
): SandboxSearchCase<K> => ({ kind, answer, body, finds, outcome: finds.length > 0 ? 'found' : 'not_found' });

/** A find of `record` at `match_score`, on `matched_on`. */
const find = (record: string, match_score: number, ...matched_on: string[]): SandboxFind => ({
  record,
  match_score,
  matched_on,
});

export const SANDBOX_CASES: readonly SandboxCase[] = [
  {
    kind: 'phone',
    answer: 'a valid mobile number',
    body: { phone: '+15555550100' },
    items: [phone('0100', true)],
    outcome: 'found',
  },
  {
    kind: 'phone',
    answer: 'an invalid number',
    body: { phone: '+15555550199' },
    items: [phone('0199', false)],
    outcome: 'found',
  },
  {
    kind: 'phone',
    answer: 'any other number: its formats and validity, nothing else known',
    body: { phone: '+44 20 7946 0142' },
    items: [
      {
        input: '+44 20 7946 0142',
        e164: '+442079460142',
        valid: true,
        validation_errors: [],
        possible: true,
        country_code: '44',
        region: 'GB',
        location: null,
        carrier: null,
        line_type: 'unknown',
        time_zones: [],
        national_format: '020 7946 0142',
        international_format: '+44 20 7946 0142',
        sources: SRC,
      },
    ],
    outcome: 'unknown',
  },
  email('deliverable', 'a deliverable address', 'deliverable', null, 'accepted', probed(false)),
  email('risky', 'a risky address (accepts every address)', 'risky', 'accept-all domain', 'catch_all', probed(true)),
  email(
    'undeliverable',
    'an undeliverable address',
    'undeliverable',
    'mailbox does not exist',
    'mailbox_not_found',
    probed(null),
  ),
  email('disabled', 'a disabled mailbox', 'undeliverable', 'mailbox disabled', 'mailbox_disabled', {
    ...probed(null),
    is_disabled: true,
  }),
  email('full', 'a full mailbox', 'risky', 'mailbox full', 'mailbox_full', { ...probed(null), has_full_inbox: true }),
  email(
    'nobody',
    'any other address: its syntax, deliverability unknown',
    'unknown',
    SANDBOX_UNLISTED,
    'not_probed',
    { is_catch_all: null, has_full_inbox: null, is_disabled: null, can_connect_smtp: null },
    'unknown',
  ),
  search(
    'person',
    'a person with namesakes (three people of that name)',
    { name: 'Alex Sandbox' },
    find('alex-austin', 0.75, 'name'),
    find('alex-portland', 0.75, 'name'),
    find('alex-springfield', 0.75, 'name'),
  ),
  search(
    'person',
    'the namesake in that place first',
    { name: 'Alex Sandbox', location: 'Springfield, IL' },
    find('alex-springfield', 0.825, 'name', 'location'),
    find('alex-austin', 0.638, 'name'),
    find('alex-portland', 0.638, 'name'),
  ),
  search(
    'person',
    'a person by e-mail',
    { email: 'alex.sandbox@example.com' },
    find('alex-springfield', 0.95, 'email'),
  ),
  search('person', 'not found', { name: 'Nobody Sandbox' }),
  search(
    'company',
    'an active company',
    { company_name: 'Sandbox Widgets Ltd' },
    find('widgets', 0.75, 'company_name'),
  ),
  search(
    'company',
    'the active company by its registration number',
    { registration_number: '00000001' },
    find('widgets', 0.95, 'registration_number'),
  ),
  search(
    'company',
    'the active company by its domain',
    { domain: 'widgets.example.com' },
    find('widgets', 0.9, 'domain'),
  ),
  search(
    'company',
    'a dissolved company',
    { company_name: 'Sandbox Dissolved Ltd' },
    find('dissolved', 0.75, 'company_name'),
  ),
  search('company', 'not found', { company_name: 'Nobody Sandbox Ltd' }),
];

/** The endpoint each kind's sandbox inputs are documented against. */
export const SANDBOX_ROUTES: Record<LookupKind, string> = {
  person: '/v1/search/person',
  company: '/v1/search/company',
  email: '/v1/verify/email',
  phone: '/v1/verify/phone',
};
