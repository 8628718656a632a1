import { z } from 'zod';
import { isIsoCountry } from '@dossier/domain';
import {
  companyResultSchema,
  emailResultSchema,
  personResultSchema,
  phoneResultSchema,
  sourceReportSchema,
} from '@dossier/contracts';

const text = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, 'must be a non-empty string')
    .max(max, `must be at most ${max} characters`);

const country = z
  .string({ error: 'must be a string' })
  .trim()
  .toUpperCase()
  .refine(isIsoCountry, 'must be an ISO 3166-1 alpha-2 country code such as US or DE')
  .describe('ISO 3166-1 alpha-2 country code');

const permissiblePurpose = z
  .string({ error: 'must be a string' })
  .trim()
  .regex(/^[a-z][a-z0-9_-]{1,63}$/, 'must be a short code such as employment, tenant_screening or fraud_prevention')
  .describe('Why this lookup is made; stored in the audit trail with the account, key, request id and time.');

const ageRange = text(9)
  .regex(/^(\d{1,3}-\d{1,3}|\d{1,3}\+|-\d{1,3})$/, 'must look like "30-40", "65+" or "-25"')
  .refine((v) => {
    const m = /^(\d+)-(\d+)$/.exec(v);
    return !m || Number(m[1]) <= Number(m[2]);
  }, 'must have its lower bound first')
  .describe('"30-40", "65+" or "-25"');

const domain = text(253)
  .toLowerCase()
  .regex(
    /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
    'must be a domain name such as example.com',
  );

export const SEARCH_TYPES = ['person', 'company', 'email', 'phone', 'username'] as const;

export const searchBody = z
  .object({
    query: text(256),
    type: z.enum(SEARCH_TYPES, { error: `must be one of ${SEARCH_TYPES.join(', ')}` }),
    country: country.optional(),
    permissible_purpose: permissiblePurpose.optional(),
  })
  .strict();

const atLeastOne =
  <K extends string>(keys: readonly K[], field: K) =>
  (v: Partial<Record<K, unknown>>, ctx: z.RefinementCtx) => {
    if (keys.every((k) => v[k] === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [field],
        message: `is required (or give one of ${keys.filter((k) => k !== field).join(', ')})`,
      });
    }
  };

export const personBody = z
  .object({
    name: text(256).optional(),
    email: text(254).optional(),
    phone: text(64).optional(),
    username: text(128).optional(),
    location: text(256).optional(),
    age_range: ageRange.optional(),
    permissible_purpose: permissiblePurpose.optional(),
  })
  .strict()
  .superRefine(atLeastOne(['name', 'email', 'phone', 'username'] as const, 'name'));

export const companyBody = z
  .object({
    company_name: text(256).optional(),
    domain: domain.optional(),
    registration_number: text(64).optional(),
    country: country.optional(),
    permissible_purpose: permissiblePurpose.optional(),
  })
  .strict()
  .superRefine(atLeastOne(['company_name', 'domain', 'registration_number'] as const, 'company_name'));

export const verifyEmailBody = z
  .object({ email: text(320), permissible_purpose: permissiblePurpose.optional() })
  .strict();

export const verifyPhoneBody = z
  .object({
    phone: text(64).describe('E.164 (+14155552671) or national format with `country`'),
    country: country.optional().describe('default region for national-format numbers'),
    permissible_purpose: permissiblePurpose.optional(),
  })
  .strict();

const resultItem = z.union([personResultSchema, companyResultSchema, emailResultSchema, phoneResultSchema]);

export const successEnvelope = z.object({
  status: z.literal('success'),
  search_id: z.string(),
  results: z.array(resultItem),
  credits_remaining: z.number().int(),
  sources: z.array(sourceReportSchema),
});

export const pendingEnvelope = z.object({
  status: z.literal('pending'),
  search_id: z.string(),
  credits_remaining: z.number().int(),
});
