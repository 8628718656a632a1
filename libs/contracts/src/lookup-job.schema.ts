import { z } from 'zod';
import { API_KEY_MODES, SEARCH_ID_PATTERN, type LookupKind } from '@dossier/domain';
import { sourceReportSchema } from './lookup-result.schema';
import {
  companyInputSchema,
  emailInputSchema,
  personInputSchema,
  phoneInputSchema,
  type LookupInputByKind,
} from './lookup-input.schema';

/**
 * Current payload version. v2 added `deadline_at`, v3 `mode`, v4 `reply_to`. Workers accept every
 * version (v1 is read as a live job without a deadline, v2 as a live one, v1–v3 with no reply
 * channel), so workers are deployed before the gateways that write a new version.
 */
export const LOOKUP_JOB_VERSION = 4;

/**
 * The channel a gateway hears its own lookups' completions on (ADR 0024): the worker publishes each
 * job's result there, so a gateway parses only what its own requests wait for.
 */
export function replyChannel(queuePrefix: string, gatewayId: string): string {
  return `${queuePrefix}:replies:${gatewayId}`;
}

const common = {
  search_id: z.string().regex(SEARCH_ID_PATTERN),
  account_id: z.string().min(1),
  request_id: z.string().min(1),
  submitted_at: z.string().datetime(),
};

const v2 = {
  ...common,
  /** When the caller stops waiting for a synchronous answer (null: it asked for 202 at once). */
  deadline_at: z.string().datetime().nullable(),
};

const v3 = {
  ...v2,
  /**
   * `test`: made with a test key (ADR 0021) — answered by the sandbox provider alone, from synthetic
   * data, and settled without a charge; `live`: the kind's providers, as always.
   */
  mode: z.enum(API_KEY_MODES),
};

const v4 = {
  v: z.literal(LOOKUP_JOB_VERSION),
  ...v3,
  /** Where the worker publishes the result (replyChannel); null: nobody waits on a channel (Postgres is read). */
  reply_to: z.string().min(1).max(200).nullable(),
};

const byKind = <E extends z.ZodRawShape>(envelope: E) =>
  z.discriminatedUnion('kind', [
    z.object({ ...envelope, kind: z.literal('person'), input: personInputSchema }).strict(),
    z.object({ ...envelope, kind: z.literal('company'), input: companyInputSchema }).strict(),
    z.object({ ...envelope, kind: z.literal('email'), input: emailInputSchema }).strict(),
    z.object({ ...envelope, kind: z.literal('phone'), input: phoneInputSchema }).strict(),
  ]);

/** The current payload, as the gateway writes it. */
export const lookupJobSchema = byKind(v4);
export type LookupJob = z.infer<typeof lookupJobSchema>;

/** What a worker reads: the current payload, or an older one brought up to it. */
export const anyLookupJobSchema = z.union([
  lookupJobSchema,
  byKind({ v: z.literal(3), ...v3 }).transform((job): LookupJob => ({ ...job, v: LOOKUP_JOB_VERSION, reply_to: null })),
  byKind({ v: z.literal(2), ...v2 }).transform((job): LookupJob => ({
    ...job,
    v: LOOKUP_JOB_VERSION,
    mode: 'live',
    reply_to: null,
  })),
  byKind({ v: z.literal(1), ...common }).transform((job): LookupJob => ({
    ...job,
    v: LOOKUP_JOB_VERSION,
    deadline_at: null,
    mode: 'live',
    reply_to: null,
  })),
]);

/** A lookup job of one kind, generic over the kind: its `input` is that kind's input. */
export type LookupJobOf<K extends LookupKind> = Omit<LookupJob, 'kind' | 'input'> & {
  kind: K;
  input: LookupInputByKind[K];
};

/** The version of a job's result (a pointer and, when small, the settled outcome). */
export const LOOKUP_RESULT_VERSION = 1;

/** Largest serialised outcome carried inline in a job's result; bigger ones stay in Postgres only. */
export const INLINE_OUTCOME_MAX_BYTES = 8 * 1024;

/**
 * A job's result, as published on its `reply_to` channel: a pointer to the search, plus — when it is
 * small — the settled outcome, so a waiting gateway can answer without reading it back; anything larger
 * than INLINE_OUTCOME_MAX_BYTES is left out: Postgres is always the durable truth and the gateway falls
 * back to it. BullMQ's return value is the pointer alone: it is kept in the job and in the queue's events
 * stream, which is trimmed by length and never by age, so results there would outlive RESULTS_TTL_DAYS.
 */
export const lookupJobResultSchema = z
  .object({
    v: z.literal(LOOKUP_RESULT_VERSION),
    search_id: z.string().regex(SEARCH_ID_PATTERN),
    status: z.enum(['succeeded', 'failed']),
    outcome: z
      .object({
        charged: z.boolean(),
        balance: z.number().int(),
        results: z.array(z.unknown()),
        /** A person search's count before its limit (ADR 0047). */
        total: z.number().int().min(0).optional(),
        sources: z.array(sourceReportSchema),
      })
      .strict()
      .optional(),
  })
  .strict();
export type LookupJobResult = z.infer<typeof lookupJobResultSchema>;
