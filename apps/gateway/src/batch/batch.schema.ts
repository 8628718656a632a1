import { z } from 'zod';
import { ERROR_CODES, LOOKUP_KINDS, type LookupKind } from '@dossier/domain';
import {
  anySuccessEnvelope,
  companyBody,
  emailSuccessEnvelope,
  pendingEnvelope,
  personBody,
  phoneSuccessEnvelope,
  verifyEmailBody,
  verifyPhoneBody,
} from '../lookups/lookups.schema';

/** The most requests one batch may carry. */
export const BATCH_MAX_ITEMS = 100;

/** One request of a batch: its kind and that endpoint's body (validated per item, see batch-requests.ts). */
export const batchItemBody = z
  .object({
    kind: z.enum(LOOKUP_KINDS, { error: `must be one of ${LOOKUP_KINDS.join(', ')}` }),
    input: z
      .record(z.string(), z.unknown(), { error: 'must be a JSON object' })
      .describe("that kind's endpoint body: POST /v1/search/person, /search/company, /verify/email, /verify/phone"),
  })
  .strict();

/** Each kind's endpoint body: what an item's `input` is checked with (batch.service.ts, through lookup-requests.ts). */
const INPUT_BODIES: Record<LookupKind, z.ZodType> = {
  person: personBody,
  company: companyBody,
  email: verifyEmailBody,
  phone: verifyPhoneBody,
};

/**
 * A valid item as JSON Schema, for the document: `{kind, input}` with that kind's endpoint body. The array
 * itself takes anything (an invalid item gets its error in its place), so this is only what it shows.
 */
function validItemJsonSchema(): Record<string, unknown> {
  const item = z.union(
    LOOKUP_KINDS.map((kind) => z.object({ kind: z.literal(kind), input: INPUT_BODIES[kind] }).strict()),
  );
  const { $schema: _drop, ...json } = z.toJSONSchema(item, { target: 'draft-2020-12', io: 'input' });
  return json;
}

export const batchBody = z
  .object({
    requests: z
      .array(z.unknown(), { error: 'must be an array of requests' })
      .min(1, 'must hold at least one request')
      .max(BATCH_MAX_ITEMS, `must hold at most ${BATCH_MAX_ITEMS} requests`)
      .meta({
        description: `1 to ${BATCH_MAX_ITEMS} requests, each \`{kind, input}\` with that kind's endpoint body`,
        items: validItemJsonSchema(),
      }),
  })
  .strict()
  .meta({
    examples: [
      {
        requests: [
          { kind: 'phone', input: { phone: '+14155552671' } },
          { kind: 'email', input: { email: 'jane@example.com' } },
          { kind: 'phone', input: { phone: 'not a number' } },
        ],
      },
    ],
  });

const itemError = z.object({
  status: z.literal('error'),
  error: z.object({
    code: z.enum(ERROR_CODES).describe('validation_error, insufficient_credits, unavailable, …'),
    message: z.string(),
    details: z.array(z.object({ field: z.string(), issue: z.string() })).optional(),
  }),
  search_id: z.string().optional().describe('when an accepted lookup failed (nothing charged)'),
  credits_remaining: z.number().int().optional(),
});

/** A schema's first documented example (the lookups' envelopes carry real ones). */
const exampleOf = (schema: z.ZodType): Record<string, unknown> =>
  (z.globalRegistry.get(schema)?.examples as Record<string, unknown>[] | undefined)?.[0] ?? {};

/** One answer states one balance: every item's credits_remaining is the batch's (ADR 0019). */
const PHONE_ITEM: Record<string, unknown> = { ...exampleOf(phoneSuccessEnvelope), credits_remaining: 98 };
const EMAIL_ITEM = {
  ...exampleOf(emailSuccessEnvelope),
  search_id: 'srch_2hGt7yQaMn4kX8sU1wC5pE9f',
  credits_remaining: 98,
};
const EXAMPLE_BATCH = {
  status: 'success',
  batch_id: 'bat_3xKq9LmP2vR7tW4nB8cY1dZf',
  items: [
    PHONE_ITEM,
    EMAIL_ITEM,
    {
      status: 'error',
      error: {
        code: 'validation_error',
        message: 'the request is invalid',
        details: [{ field: 'phone', issue: 'is not a phone number' }],
      },
    },
  ],
  credits_remaining: 98,
};

/** A batch: every item in request order, as the lookup would have answered it alone. */
const batchOf = <S extends z.ZodType>(status: z.ZodType, item: S) =>
  z.object({
    status,
    batch_id: z.string().describe('bat_…'),
    items: z.array(item),
    credits_remaining: z.number().int().describe("the balance at this answer's read, in every item too"),
  });

/** `200`: every item is done (no item is pending). */
export const batchResponse = batchOf(
  z.literal('success').describe('every item is done'),
  z.union([anySuccessEnvelope, itemError]),
).meta({ examples: [EXAMPLE_BATCH] });

/** `202`: some item still runs. */
export const pendingBatchResponse = batchOf(
  z.literal('pending').describe('some item still runs (poll Location)'),
  z.union([anySuccessEnvelope, pendingEnvelope, itemError]),
).meta({
  examples: [
    {
      status: 'pending',
      batch_id: EXAMPLE_BATCH.batch_id,
      items: [
        { status: 'pending', search_id: PHONE_ITEM['search_id'], credits_remaining: 98 },
        EXAMPLE_BATCH.items[1],
        EXAMPLE_BATCH.items[2],
      ],
      credits_remaining: 98,
    },
  ],
});
