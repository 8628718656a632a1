import { z } from 'zod';

/** A person search answers this many items at most unless it asks for another `limit` (ADR 0047)… */
export const PERSON_LIMIT_DEFAULT = 25;
/** …which may be up to this. */
export const PERSON_LIMIT_MAX = 100;

/**
 * Normalised lookup inputs: what a job carries and what providers receive. The gateway maps
 * every HTTP body (generic search, person, company, …) onto one of these.
 */
export const personInputSchema = z
  .object({
    name: z.string().optional(),
    email: z.string().optional(),
    /** E.164: the gateway reads a national number in its region (ADR 0044) before the job exists. */
    phone: z.string().optional(),
    username: z.string().optional(),
    location: z.string().optional(),
    age_range: z.string().optional(),
    country: z.string().length(2).optional(),
    /** Items answered at most, best first (PERSON_LIMIT_DEFAULT when absent). */
    limit: z.number().int().min(1).max(PERSON_LIMIT_MAX).optional(),
    /** Items scoring below this are not answered, nor counted. */
    min_score: z.number().min(0).max(1).optional(),
    /** The subject's year of birth (`POST /v1/screen`): a listed entry born more than a year apart is no hit. */
    birth_year: z.number().int().optional(),
    /** Screening only (`POST /v1/screen`, ADR 0064): the sanctions lists alone are asked. */
    screening: z.literal(true).optional(),
    /** Username presence (ADR 0049): only the sites of these names (any case)… */
    sites: z.array(z.string().min(1)).min(1).optional(),
    /** …carrying any of these tags… */
    tags: z.array(z.string().min(1)).min(1).optional(),
    /** …the `top` most popular of them. */
    top: z.number().int().min(1).optional(),
  })
  .strict();

export const companyInputSchema = z
  .object({
    company_name: z.string().optional(),
    domain: z.string().optional(),
    registration_number: z.string().optional(),
    country: z.string().length(2).optional(),
    /** Screening only (`POST /v1/screen`, ADR 0064): the sanctions lists alone are asked. */
    screening: z.literal(true).optional(),
  })
  .strict();

export const emailInputSchema = z.object({ email: z.string() }).strict();

export const phoneInputSchema = z
  .object({
    phone: z.string(),
    country: z.string().length(2).optional(),
  })
  .strict();

export type PersonInput = z.infer<typeof personInputSchema>;
export type CompanyInput = z.infer<typeof companyInputSchema>;
export type EmailInput = z.infer<typeof emailInputSchema>;
export type PhoneInput = z.infer<typeof phoneInputSchema>;

export interface LookupInputByKind {
  person: PersonInput;
  company: CompanyInput;
  email: EmailInput;
  phone: PhoneInput;
}
