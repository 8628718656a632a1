import type { LookupKind } from '@dossier/domain';
import type { ResultItemByKind } from './lookup-result.schema';

/**
 * THE synthetic data set test keys are answered from (ADR 0021), by the worker's sandbox provider. Everything here is
 * fictional: numbers in the +1 555-555-01xx range and Ofcom's drama range (+44 20 7946 0xxx), addresses and domains
 * under example.com. The README's "Test keys" table, the OpenAPI examples and the end-to-end test are all read from
 * this list, so they cannot drift.
 *
 * A phone number or address not listed gets, as from a live key, exactly one item (API.md): the number's own forms
 * and validity, or the address's syntax, and nothing else known — the sandbox's source `unknown` with
 * SANDBOX_UNLISTED as its detail. A person or company not listed is "not found" (`results: []`).
 */
export interface SandboxCase<K extends LookupKind = LookupKind> {
  kind: K;
  /** What the answer shows, as the docs list it. */
  answer: string;
  /** The request body of the kind's own endpoint (`POST /v1/verify/phone`, …) that gives this answer. */
  body: Record<string, string>;
  /** What the lookup returns in `results`: empty for a "not found". */
  items: ResultItemByKind[K][];
  /** The sandbox's outcome in `sources`: `unknown` (with SANDBOX_UNLISTED) for a phone or address not listed. */
  outcome: 'found' | 'not_found' | 'unknown';
}

/** The sandbox's `detail` in `sources`, and an unlisted address's `reason`: it has no data on the input. */
export const SANDBOX_UNLISTED = 'sandbox: not one of the documented test inputs, so nothing is known about it';

const SRC = ['sandbox'];

/** The number +1 555-555-`line` as the phone result shows it (line_type `mobile` when valid). */
const phone = (line: string, valid: boolean): ResultItemByKind['phone'] => ({
  input: `+1555555${line}`,
  e164: `+1555555${line}`,
  valid,
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

/**
 * An e-mail case: the address at example.com, its deliverability and the reason given; `unknown` for an address
 * the sandbox knows nothing about (no MX either).
 */
const email = (
  user: string,
  answer: string,
  deliverability: ResultItemByKind['email']['deliverability'],
  reason: string | null,
  outcome: 'found' | 'unknown' = 'found',
): SandboxCase<'email'> => ({
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
    },
  ],
});

const namesake = (
  id: string,
  city: string,
  region: string,
  birthYear: number,
  user: string,
): ResultItemByKind['person'] => ({
  id,
  full_name: 'Alex Sandbox',
  first_name: 'Alex',
  last_name: 'Sandbox',
  aliases: [],
  emails: [`${user}@example.com`],
  phones: [],
  usernames: [user],
  accounts: [],
  locations: [{ city, region, country: 'US' }],
  age: null,
  birth_year: birthYear,
  match_score: 0.9,
  matched_on: ['name'],
  sources: SRC,
  linked_by: [],
  kept_apart: [],
});

const company = (
  id: string,
  name: string,
  number: string,
  status: string,
  domain: string,
): ResultItemByKind['company'] => ({
  id,
  name,
  registration_number: number,
  jurisdiction: 'GB',
  country: 'GB',
  domain,
  status,
  incorporated_on: '2001-04-01',
  address: '1 Example Street, Exampleton, EX1 0AA',
  industry: 'Software',
  match_score: 1,
  matched_on: ['name'],
  sources: SRC,
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
  email('deliverable', 'a deliverable address', 'deliverable', null),
  email('risky', 'a risky address (accepts every address)', 'risky', 'accept-all domain'),
  email('undeliverable', 'an undeliverable address', 'undeliverable', 'mailbox does not exist'),
  email('nobody', 'any other address: its syntax, deliverability unknown', 'unknown', SANDBOX_UNLISTED, 'unknown'),
  {
    kind: 'person',
    answer: 'a person with namesakes (three people of that name)',
    body: { name: 'Alex Sandbox' },
    items: [
      namesake('sbx_person_1', 'Springfield', 'IL', 1980, 'alex.sandbox'),
      namesake('sbx_person_2', 'Portland', 'OR', 1975, 'asandbox'),
      namesake('sbx_person_3', 'Austin', 'TX', 1992, 'alex.sandbox92'),
    ],
    outcome: 'found',
  },
  { kind: 'person', answer: 'not found', body: { name: 'Nobody Sandbox' }, items: [], outcome: 'not_found' },
  {
    kind: 'company',
    answer: 'an active company',
    body: { company_name: 'Sandbox Widgets Ltd' },
    items: [company('sbx_company_1', 'Sandbox Widgets Ltd', '00000001', 'active', 'widgets.example.com')],
    outcome: 'found',
  },
  {
    kind: 'company',
    answer: 'a dissolved company',
    body: { company_name: 'Sandbox Dissolved Ltd' },
    items: [company('sbx_company_2', 'Sandbox Dissolved Ltd', '00000002', 'dissolved', 'dissolved.example.com')],
    outcome: 'found',
  },
  {
    kind: 'company',
    answer: 'not found',
    body: { company_name: 'Nobody Sandbox Ltd' },
    items: [],
    outcome: 'not_found',
  },
];

/** The endpoint each kind's sandbox inputs are documented against. */
export const SANDBOX_ROUTES: Record<LookupKind, string> = {
  person: '/v1/search/person',
  company: '/v1/search/company',
  email: '/v1/verify/email',
  phone: '/v1/verify/phone',
};
