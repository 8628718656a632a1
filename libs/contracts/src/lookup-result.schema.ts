import { z } from 'zod';
import { DELIVERABILITIES, LINE_TYPES, SOURCE_OUTCOMES, WATCHLISTS, type LookupKind } from '@dossier/domain';

/**
 * THE result contract: each result item as a zod schema, and its TypeScript type inferred from it.
 * The OpenAPI document is generated from these schemas, and the shared provider contract test checks
 * every provider's items against them.
 */
const score = z.number().min(0).max(1);
const nstr = z.string().nullable();
/** An account on an online service: found through a profile (Gravatar) or a username presence check. */
const accountSchema = z.object({ service: z.string(), username: nstr, url: nstr });

/**
 * An entry of a sanctions list that a person or company item matches (ADR 0064): which list and entry, the
 * name it is listed under, its programmes, how well the names match (the local search's name matcher) and
 * what agreed. Present on person and company items when the lists were screened (`[]`: no hit); absent
 * when they were not (no list imported, the `watchlists` source failed).
 */
export const watchlistHitSchema = z.object({
  list: z.enum(WATCHLISTS).describe('the list: ofac-sdn, un-sc, eu-fsf, uk-sanctions or opensanctions'),
  entry_id: z.string().describe("the list's own id of the entry (OFAC's uid, the UN's reference number, …)"),
  listed_name: z.string().describe('the name of the entry that matched best, as the list writes it'),
  programme: nstr.describe('the sanctions programmes or regimes it is listed under, `; `-separated'),
  match_score: score.describe('how well the names match, in [0, 1]; a hit scores WATCHLIST_THRESHOLD or more'),
  matched_on: z
    .array(z.enum(['name', 'birth_year', 'country']))
    .describe('what agreed: the name always; the birth year and country when both sides know them'),
});
const watchlistHits = z
  .array(watchlistHitSchema)
  .optional()
  .describe('sanctions-list entries this subject matches; absent when the lists were not screened');

/** A person as one provider's record describes it: what providers answer, before the worker merges them. */
export const personRecordSchema = z.object({
  id: z.string(),
  /** null only on an item a username presence check produced with nothing else known. */
  full_name: z.string().nullable(),
  first_name: nstr,
  last_name: nstr,
  aliases: z.array(z.string()),
  emails: z.array(z.string()),
  phones: z.array(z.string()),
  usernames: z.array(z.string()),
  accounts: z.array(accountSchema),
  locations: z.array(z.object({ city: nstr, region: nstr, country: nstr })),
  age: z.number().int().nullable(),
  birth_year: z.number().int().nullable(),
  match_score: score,
  matched_on: z.array(z.string()),
  sources: z.array(z.string()),
  watchlist_hits: watchlistHits,
});

/** An identifier two records share: an e-mail address, an E.164 phone, a username, or a provider's own identity. */
const sharedIdentifierSchema = z.object({
  type: z.enum(['email', 'phone', 'username', 'identity']),
  value: z.string(),
});

/**
 * A person item: one subject, merged from the records that share a strong identifier and conflict in
 * nothing (API.md, "Result items"). `linked_by` says which records joined it and through what; `kept_apart`
 * names the other items of the answer it shares an identifier with but is not, and why.
 */
export const personResultSchema = personRecordSchema.extend({
  linked_by: z
    .array(
      z.object({
        record: z.string().describe('the id of a record merged into this item'),
        sources: z.array(z.string()).describe('the providers that record came from'),
        to: z.string().describe('the id of the record of this item it was joined to'),
        on: z.array(sharedIdentifierSchema).describe('the identifiers the two records share'),
      }),
    )
    .describe('each record merged into this item beyond the first (whose id is the item id), and why'),
  kept_apart: z
    .array(
      z.object({
        item: z.string().describe('the id of another item in this answer'),
        shared: z.array(sharedIdentifierSchema).describe('what this item shares with it'),
        reason: z.string().describe('why the two are not taken for one person'),
      }),
    )
    .describe('other items of this answer that share an identifier with this one but are kept apart, and why'),
});

/** Where one fact of a company item came from (ADR 0066): the provider and the upstream record's id or link. */
export const factSourceSchema = z
  .object({
    provider: z.string().describe('the provider id, as in `sources`'),
    record_id: z
      .string()
      .describe("the upstream record's id or link (`/company/00102498/appointments/…`, an LEI pair)"),
  })
  .describe('where this fact came from');

/** At most this many officers on an item, the serving ones first (ADR 0066). */
export const MAX_OFFICERS = 50;
/** At most this many persons with significant control on an item, the current ones first (ADR 0066). */
export const MAX_CONTROLLERS = 50;

export const officerSchema = z.object({
  name: z.string(),
  role: nstr.describe('as the register writes it: `director`, `secretary`, `llp-member`…'),
  appointed_on: nstr,
  resigned_on: nstr.describe('null while serving'),
  nationality: nstr,
  country_of_residence: nstr,
  birth_year: z.number().int().nullable().describe('never a full birth date: the register shows month and year'),
  birth_month: z.number().int().min(1).max(12).nullable(),
  source: factSourceSchema,
});

export const CONTROLLER_KINDS = ['individual', 'corporate', 'legal_person', 'other'] as const;

export const controllerSchema = z.object({
  name: nstr.describe('null where the register withholds it (a super-secure person)'),
  kind: z.enum(CONTROLLER_KINDS),
  natures_of_control: z.array(z.string()).describe("the register's codes: `ownership-of-shares-75-to-100-percent`…"),
  notified_on: nstr,
  ceased_on: nstr.describe('null while in control'),
  source: factSourceSchema,
});

export const parentSchema = z.object({
  lei: z.string(),
  name: nstr,
  source: factSourceSchema,
});

export const parentsSchema = z
  .object({
    direct: parentSchema.nullable().describe('the direct accounting parent; null when none is reported'),
    ultimate: parentSchema.nullable().describe('the ultimate accounting parent; null when none is reported'),
  })
  .describe('GLEIF Level 2 accounting consolidation parents');

/** The fields of a company item that `field_sources` credits (ADR 0068). */
export const COMPANY_SOURCED_FIELDS = [
  'name',
  'registration_number',
  'jurisdiction',
  'country',
  'domain',
  'status',
  'incorporated_on',
  'address',
  'industry',
] as const;
export type CompanySourcedField = (typeof COMPANY_SOURCED_FIELDS)[number];

const fieldSourceListSchema = z
  .array(factSourceSchema)
  .min(1)
  .optional()
  .describe('every record that gave exactly the value shown, first the one it was taken from');

/**
 * Where each field of a company item came from (ADR 0068): a field with a value lists every record merged into
 * the item that gave exactly that value, first the one it was taken from; a field without one is absent.
 */
export const fieldSourcesSchema = z
  .object(
    Object.fromEntries(COMPANY_SOURCED_FIELDS.map((f) => [f, fieldSourceListSchema])) as Record<
      CompanySourcedField,
      typeof fieldSourceListSchema
    >,
  )
  .describe(
    'Where each field came from: for each field with a value, every record that gave exactly that value ' +
      '(`{provider, record_id}`), first the one it was taken from; a field without a value is absent.',
  );

export const companyResultSchema = z.object({
  id: z.string(),
  name: z.string(),
  registration_number: nstr,
  jurisdiction: nstr,
  country: nstr,
  domain: nstr,
  status: nstr,
  incorporated_on: nstr,
  address: nstr,
  industry: nstr,
  match_score: score,
  matched_on: z.array(z.string()),
  sources: z.array(z.string()),
  watchlist_hits: watchlistHits,
  // Additions of ADR 0066: who runs and controls the company, and who consolidates it. null: not looked up,
  // or the lookup failed; [] (parents with both null): looked up, none reported.
  officers: z
    .array(officerSchema)
    .nullable()
    .describe(`its officers, serving ones first, at most ${MAX_OFFICERS}; null when not known`),
  controllers: z
    .array(controllerSchema)
    .nullable()
    .describe(
      `its persons with significant control, current ones first, at most ${MAX_CONTROLLERS}; null when not known`,
    ),
  parents: parentsSchema.nullable().describe('null when not known'),
  // Addition of ADR 0068: the provider and upstream record of each field's value.
  field_sources: fieldSourcesSchema,
});

/**
 * Why an e-mail item has its `deliverability` (ADR 0057, docs/providers.md "score and sub_status"): each value
 * belongs to one deliverability, after Reacher's `is_reachable` and Hunter's `status`.
 */
export const EMAIL_SUB_STATUSES = [
  // deliverable
  'accepted',
  // undeliverable
  'invalid_syntax',
  'no_domain',
  'no_mail_host',
  'mailbox_not_found',
  'mailbox_disabled',
  // risky
  'disposable',
  'mailbox_full',
  'catch_all',
  'role_account',
  // unknown
  'dns_failure',
  'smtp_unreachable',
  'inconclusive',
  'not_probed',
] as const;
export type EmailSubStatus = (typeof EMAIL_SUB_STATUSES)[number];

/**
 * The `score` (0–100) of each sub-status (ADR 0057): how likely mail to the address reaches a person, in
 * bands by deliverability — deliverable 95; risky 20–70; unknown 10–40; undeliverable 0.
 */
export const EMAIL_SCORES: Readonly<Record<EmailSubStatus, number>> = {
  accepted: 95,
  role_account: 70,
  catch_all: 50,
  mailbox_full: 30,
  disposable: 20,
  not_probed: 40,
  inconclusive: 40,
  smtp_unreachable: 30,
  dns_failure: 10,
  invalid_syntax: 0,
  no_domain: 0,
  no_mail_host: 0,
  mailbox_not_found: 0,
  mailbox_disabled: 0,
};

export const emailResultSchema = z.object({
  email: z.string(),
  normalized: z.string(),
  syntax_valid: z.boolean(),
  domain: nstr,
  mx_records: z.array(z.string()),
  deliverability: z.enum(DELIVERABILITIES),
  reason: nstr,
  disposable: z.boolean(),
  free_provider: z.boolean(),
  role_account: z.boolean(),
  did_you_mean: nstr,
  accounts: z.array(accountSchema),
  sources: z.array(z.string()),
  // Additions of ADR 0057: the SMTP probe's facts (null: not asked, or the probe could not tell), and a grade.
  is_catch_all: z.boolean().nullable(),
  has_full_inbox: z.boolean().nullable(),
  is_disabled: z.boolean().nullable(),
  can_connect_smtp: z.boolean().nullable(),
  score: z.number().int().min(0).max(100),
  sub_status: z.enum(EMAIL_SUB_STATUSES),
});

/**
 * Why a number is not valid, in Twilio Lookup v2's `validation_errors` vocabulary: its length for its country
 * (TOO_SHORT, TOO_LONG, INVALID_LENGTH: between the two but no length its country uses), an unknown country
 * calling code, not a number, or of a possible length but in no range its country assigns.
 */
export const PHONE_VALIDATION_ERRORS = [
  'TOO_SHORT',
  'TOO_LONG',
  'INVALID_LENGTH',
  'INVALID_COUNTRY_CODE',
  'NOT_A_NUMBER',
  'INVALID_BUT_POSSIBLE',
] as const;
export type PhoneValidationError = (typeof PHONE_VALIDATION_ERRORS)[number];

export const phoneResultSchema = z.object({
  input: z.string(),
  e164: z.string(),
  valid: z.boolean(),
  /** Empty when the number is valid. */
  validation_errors: z.array(z.enum(PHONE_VALIDATION_ERRORS)),
  possible: z.boolean(),
  country_code: z.string(),
  region: nstr,
  location: nstr,
  carrier: nstr,
  line_type: z.enum(LINE_TYPES),
  time_zones: z.array(z.string()),
  national_format: z.string(),
  international_format: z.string(),
  sources: z.array(z.string()),
});

/** What a provider answers for each kind: a person as its record says; the other kinds as the client gets them. */
export const PROVIDER_ITEM_SCHEMAS = {
  person: personRecordSchema,
  company: companyResultSchema,
  email: emailResultSchema,
  phone: phoneResultSchema,
} as const;

export const RESULT_SCHEMAS = {
  person: personResultSchema,
  company: companyResultSchema,
  email: emailResultSchema,
  phone: phoneResultSchema,
} as const;

export const sourceReportSchema = z.object({
  provider: z.string(),
  outcome: z.enum(SOURCE_OUTCOMES),
  took_ms: z.number().int().min(0),
  /** Why, when the outcome is neither `found` nor `not_found`: a short reason for people. */
  detail: z.string().optional(),
});

/** How many of an answer's `sources` had each outcome: every outcome, 0 where none had it (ADR 0049). */
export const sourceSummarySchema = z
  .object(
    Object.fromEntries(SOURCE_OUTCOMES.map((o) => [o, z.number().int().min(0)])) as Record<
      (typeof SOURCE_OUTCOMES)[number],
      z.ZodNumber
    >,
  )
  .describe(
    'How many entries of `sources` had each outcome (every outcome, 0 where none had it): a username search ' +
      'checks hundreds of sites, one entry each.',
  );
export type SourceSummary = z.infer<typeof sourceSummarySchema>;

/** The counts of `sources` by outcome. */
export function sourceSummary(sources: readonly Pick<SourceReport, 'outcome'>[]): SourceSummary {
  const counts = Object.fromEntries(SOURCE_OUTCOMES.map((o) => [o, 0])) as SourceSummary;
  for (const s of sources) counts[s.outcome]++;
  return counts;
}

/**
 * What a pending search has found so far (ADR 0049): the worker writes it while a username search's sites
 * answer, at most once a second; `GET /v1/searches/{id}` shows it with `status: "pending"`. Gone once the search
 * is done: its answer replaces it.
 */
export const searchProgressSchema = z.object({
  results: z
    .array(personResultSchema)
    .describe(
      'The items found so far, as `results` will hold them (username presence: the one item whose `accounts` ' +
        'are the profiles found so far); the finished search may answer more, or fewer (its other sources ' +
        'merged in, its limit applied).',
    ),
  source_summary: sourceSummarySchema.describe('How many sources (sites) have answered so far, by outcome.'),
  sources_pending: z.number().int().min(0).describe('How many sources (sites) have still to answer.'),
  updated_at: z.string().describe('When the worker wrote this (RFC 3339).'),
});
export type SearchProgress = z.infer<typeof searchProgressSchema>;

export type PersonRecordItem = z.infer<typeof personRecordSchema>;
export type PersonResultItem = z.infer<typeof personResultSchema>;
export type SharedIdentifier = z.infer<typeof sharedIdentifierSchema>;
export type CompanyResultItem = z.infer<typeof companyResultSchema>;
export type Officer = z.infer<typeof officerSchema>;
export type Controller = z.infer<typeof controllerSchema>;
export type ControllerKind = (typeof CONTROLLER_KINDS)[number];
export type CompanyParent = z.infer<typeof parentSchema>;
export type CompanyParents = z.infer<typeof parentsSchema>;
export type FactSource = z.infer<typeof factSourceSchema>;
export type FieldSources = z.infer<typeof fieldSourcesSchema>;
export type EmailResultItem = z.infer<typeof emailResultSchema>;
export type PhoneResultItem = z.infer<typeof phoneResultSchema>;
export type SourceReport = z.infer<typeof sourceReportSchema>;
export type WatchlistHit = z.infer<typeof watchlistHitSchema>;

export interface ResultItemByKind {
  person: PersonResultItem;
  company: CompanyResultItem;
  email: EmailResultItem;
  phone: PhoneResultItem;
}
export type ResultItem = ResultItemByKind[LookupKind];

export interface ProviderItemByKind {
  person: PersonRecordItem;
  company: CompanyResultItem;
  email: EmailResultItem;
  phone: PhoneResultItem;
}
