import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '@dossier/domain';
import {
  companyResultSchema,
  emailResultSchema,
  personResultSchema,
  phoneResultSchema,
  sourceReportSchema,
} from '@dossier/contracts';
import type { ErrorEnvelope } from '../http/error-envelope';
import {
  companySuccessEnvelope,
  emailSuccessEnvelope,
  pendingEnvelope,
  personSuccessEnvelope,
  phoneSuccessEnvelope,
} from '../lookups/lookups.schema';

/** When each error code is answered: the `description` of the error responses in the document. */
export const ERROR_CODE_MEANINGS: Record<ErrorCode, string> = {
  invalid_json: 'the body is not parseable JSON: not JSON, not UTF-8, or not data of its Content-Encoding',
  validation_error:
    'missing field, wrong type, unknown field or bad value (`details` names each field); or two Content-Type headers',
  unauthorized: 'no key, malformed Authorization header, unknown or revoked key',
  invalid_credentials: 'wrong e-mail or password (the same answer for an unknown e-mail)',
  insufficient_credits: "the balance is below the lookup's cost; nothing is charged",
  not_found: 'unknown route, or an id that does not exist or belongs to another account',
  method_not_allowed: 'known path, wrong method (`Allow` lists the right ones)',
  email_taken: 'an account with this e-mail exists (compared case-insensitively)',
  idempotency_conflict: 'the Idempotency-Key was used with a different body',
  payload_too_large: 'the body is over 64 KiB, as sent or once decoded (Content-Encoding)',
  unsupported_media_type:
    'a body without Content-Type: application/json, with a charset other than UTF-8, or a Content-Encoding other than gzip, deflate or br',
  rate_limited: "over the key's rate (or the client address's, on public routes); see Retry-After",
  unavailable:
    'Redis or Postgres unreachable, a queue saturated, or the lookup failed; nothing charged; see Retry-After',
  request_timeout:
    "the request (headers, or headers and body) did not arrive within the server's receive limits; the connection is closed",
  internal_error: 'an unexpected failure (logged with the request id)',
};

export const errorEnvelopeSchema = z.object({
  status: z.literal('error'),
  error: z.object({
    code: z.enum(ERROR_CODES),
    message: z.string().describe('for people; match on `code`'),
    details: z
      .array(z.object({ field: z.string(), issue: z.string() }))
      .optional()
      .describe('one entry per bad field'),
  }),
  request_id: z.string().describe('the X-Request-Id of the answer'),
  search_id: z.string().optional().describe('set when an accepted lookup failed'),
  credits_remaining: z.number().int().optional().describe('set when an accepted lookup failed'),
}) satisfies z.ZodType<ErrorEnvelope>;

/**
 * The schemas the document puts in `components.schemas` and references by `$ref`: ids are recorded in
 * zod's global registry (the one `z.toJSONSchema` reads ids and descriptions from), on the very
 * instances the handlers validate and answer with.
 */
export const COMPONENT_SCHEMAS = {
  ErrorEnvelope: errorEnvelopeSchema,
  PersonSuccessEnvelope: personSuccessEnvelope,
  CompanySuccessEnvelope: companySuccessEnvelope,
  EmailSuccessEnvelope: emailSuccessEnvelope,
  PhoneSuccessEnvelope: phoneSuccessEnvelope,
  PendingEnvelope: pendingEnvelope,
  PersonResult: personResultSchema,
  CompanyResult: companyResultSchema,
  EmailResult: emailResultSchema,
  PhoneResult: phoneResultSchema,
  SourceReport: sourceReportSchema,
} as const satisfies Record<string, z.ZodType>;

export type ComponentId = keyof typeof COMPONENT_SCHEMAS;

for (const [id, schema] of Object.entries(COMPONENT_SCHEMAS)) {
  if (z.globalRegistry.get(schema)?.id !== id) z.globalRegistry.add(schema, { ...z.globalRegistry.get(schema), id });
}
