import { z } from 'zod';
import type { LookupKind } from '@dossier/domain';
import {
  companyInputSchema,
  emailInputSchema,
  personInputSchema,
  phoneInputSchema,
  type LookupInputByKind,
} from './lookup-input.schema';

/** Current payload version. Workers accept every version listed in the union below. */
export const LOOKUP_JOB_VERSION = 1;

const envelope = {
  v: z.literal(LOOKUP_JOB_VERSION),
  search_id: z.string().regex(/^srch_[0-9A-Za-z]+$/),
  account_id: z.string().min(1),
  request_id: z.string().min(1),
  submitted_at: z.string().datetime(),
};

export const lookupJobSchema = z.discriminatedUnion('kind', [
  z.object({ ...envelope, kind: z.literal('person'), input: personInputSchema }).strict(),
  z.object({ ...envelope, kind: z.literal('company'), input: companyInputSchema }).strict(),
  z.object({ ...envelope, kind: z.literal('email'), input: emailInputSchema }).strict(),
  z.object({ ...envelope, kind: z.literal('phone'), input: phoneInputSchema }).strict(),
]);

export type LookupJob = z.infer<typeof lookupJobSchema>;
export type LookupJobOf<K extends LookupKind> = Extract<LookupJob, { kind: K }> & { input: LookupInputByKind[K] };

/**
 * A job's return value is a pointer, never the results: the events stream is trimmed and carries
 * return values, and the durable outcome lives in Postgres.
 */
export const lookupJobResultSchema = z
  .object({
    v: z.literal(LOOKUP_JOB_VERSION),
    search_id: z.string(),
    status: z.enum(['succeeded', 'failed']),
  })
  .strict();
export type LookupJobResult = z.infer<typeof lookupJobResultSchema>;
