import { z } from 'zod';
import { DELIVERABILITIES, LINE_TYPES, SOURCE_OUTCOMES, type LookupKind } from '@dossier/domain';

/**
 * THE result contract: each result item as a zod schema, and its TypeScript type inferred from it.
 * The OpenAPI document is generated from these schemas, and the shared provider contract test checks
 * every provider's items against them.
 */
const score = z.number().min(0).max(1);
const nstr = z.string().nullable();
/** An account on an online service: found through a profile (Gravatar) or a username presence check. */
const accountSchema = z.object({ service: z.string(), username: nstr, url: nstr });

export const personResultSchema = z.object({
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
});

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
});

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
});

export const phoneResultSchema = z.object({
  input: z.string(),
  e164: z.string(),
  valid: z.boolean(),
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

export type PersonResultItem = z.infer<typeof personResultSchema>;
export type CompanyResultItem = z.infer<typeof companyResultSchema>;
export type EmailResultItem = z.infer<typeof emailResultSchema>;
export type PhoneResultItem = z.infer<typeof phoneResultSchema>;
export type SourceReport = z.infer<typeof sourceReportSchema>;

export interface ResultItemByKind {
  person: PersonResultItem;
  company: CompanyResultItem;
  email: EmailResultItem;
  phone: PhoneResultItem;
}
export type ResultItem = ResultItemByKind[LookupKind];
