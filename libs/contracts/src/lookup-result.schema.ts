import { z } from 'zod';
import {
  LINE_TYPES,
  SOURCE_OUTCOMES,
  type CompanyResultItem,
  type EmailResultItem,
  type PersonResultItem,
  type PhoneResultItem,
  type SourceReport,
} from '@dossier/domain';

/** Result items as JSON schemas: documented in OpenAPI and checked against every provider's output. */
const score = z.number().min(0).max(1);
const nstr = z.string().nullable();

export const personResultSchema = z.object({
  id: z.string(),
  full_name: z.string(),
  first_name: nstr,
  last_name: nstr,
  aliases: z.array(z.string()),
  emails: z.array(z.string()),
  phones: z.array(z.string()),
  usernames: z.array(z.string()),
  locations: z.array(z.object({ city: nstr, region: nstr, country: nstr })),
  age: z.number().int().nullable(),
  birth_year: z.number().int().nullable(),
  match_score: score,
  matched_on: z.array(z.string()),
  sources: z.array(z.string()),
}) satisfies z.ZodType<PersonResultItem>;

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
}) satisfies z.ZodType<CompanyResultItem>;

export const emailResultSchema = z.object({
  email: z.string(),
  normalized: z.string(),
  syntax_valid: z.boolean(),
  domain: nstr,
  mx_records: z.array(z.string()),
  deliverability: z.enum(['deliverable', 'undeliverable', 'risky', 'unknown']),
  reason: nstr,
  disposable: z.boolean(),
  free_provider: z.boolean(),
  role_account: z.boolean(),
  did_you_mean: nstr,
  accounts: z.array(z.object({ service: z.string(), username: nstr, url: nstr })),
  sources: z.array(z.string()),
}) satisfies z.ZodType<EmailResultItem>;

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
}) satisfies z.ZodType<PhoneResultItem>;

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
}) satisfies z.ZodType<SourceReport>;
