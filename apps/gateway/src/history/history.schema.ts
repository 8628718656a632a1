import { z } from 'zod';
import { LOOKUP_KINDS, SEARCH_STATUSES, microsecondInstant } from '@dossier/domain';
import { serverCheck } from '../http/validation';

const once = (what: string) => z.string({ error: `must be given once, as ${what}` });

const DATE_TIME = z.iso.datetime({ offset: true, error: 'must be an RFC 3339 timestamp such as 2026-11-01T00:00:00Z' });

// `format` and `pattern` for the document: `z.toJSONSchema` describes a pipe's input, the string before the
// check, so the document states the check's own pattern (upper-case T and Z, no leap second: stricter than
// `date-time` alone). The bound is exact UTC text to the microsecond (created_at's precision), not a Date.
const instant = once('an RFC 3339 timestamp')
  .pipe(DATE_TIME)
  .transform((v) => microsecondInstant(v)!)
  .meta({ format: 'date-time', pattern: z.toJSONSchema(DATE_TIME).pattern });

/**
 * The query string of `GET /v1/searches`. Unknown parameters are refused (as unknown body fields are), so
 * a misspelt filter is a 400 instead of a silently unfiltered list.
 */
export const historyQuery = z
  .object({
    kind: once(`one of ${LOOKUP_KINDS.join(', ')}`)
      .pipe(z.enum(LOOKUP_KINDS, { error: `must be one of ${LOOKUP_KINDS.join(', ')}` }))
      // The document shows the kinds, not only the text the pipe reads.
      .meta({ enum: [...LOOKUP_KINDS] })
      .optional()
      .describe('only searches of this kind (a `type: username` search is a person search)'),
    since: instant
      .optional()
      .describe('only searches created at or after this time (RFC 3339; compared to the microsecond)'),
    until: instant
      .meta(serverCheck('an `until` that is not later than `since`', ['2026-12-01T00:00:00Z']))
      .optional()
      .describe('only searches created before this time (RFC 3339; compared to the microsecond)'),
    limit: once('a whole number')
      .regex(/^\d{1,3}$/, 'must be a whole number from 1 to 100')
      .transform(Number)
      .pipe(z.number().min(1, 'must be a whole number from 1 to 100').max(100, 'must be a whole number from 1 to 100'))
      // The document shows the number it reads from the text, not the text (`pattern` dropped).
      .meta({ type: 'integer', minimum: 1, maximum: 100, pattern: undefined })
      .optional()
      .describe('searches per page, 1–100 (default 20)'),
    cursor: once('text')
      // decodeCursor's first test (base64url, at most 400 characters); what it holds, no pattern can state.
      .meta({
        pattern: '^[A-Za-z0-9_-]{1,400}$',
        ...serverCheck('text that is not a `next_cursor` this server answered'),
      })
      .optional()
      .describe('`next_cursor` of the previous page; send the same filters with it'),
  })
  .strict()
  .superRefine((q, ctx) => {
    // microsecondInstant's texts order as their instants do.
    if (q.since && q.until && q.since >= q.until)
      ctx.addIssue({ code: 'custom', path: ['until'], message: 'must be later than since' });
  });

export type HistoryQuery = z.output<typeof historyQuery>;

const timestamp = z.string().describe('RFC 3339 UTC timestamp');

export const historyItem = z.object({
  search_id: z.string(),
  kind: z.enum(LOOKUP_KINDS),
  status: z
    .enum(SEARCH_STATUSES)
    .describe(
      '`pending` (GET /v1/searches/{id} answers 202), `succeeded` (200, the success envelope), `failed` (503, the error envelope)',
    ),
  created_at: timestamp,
  completed_at: timestamp.nullable().describe('null while pending'),
  credits_spent: z
    .number()
    .int()
    .describe(
      'as X-Credits-Spent: the reserved cost while pending, the cost when charged, 0 when nothing was found or it failed',
    ),
  permissible_purpose: z.string().nullable(),
  result_count: z.number().int().nullable().describe('null while pending and when it failed'),
});

export const historyResponse = z
  .object({
    status: z.literal('success'),
    searches: z.array(historyItem).describe('newest first'),
    next_cursor: z.string().nullable().describe('pass as `cursor` for the next page; null on the last page'),
  })
  .meta({
    examples: [
      {
        status: 'success',
        searches: [
          {
            search_id: 'srch_8cFq3xPzLk2mW9rT4vB7nY1d',
            kind: 'person',
            status: 'succeeded',
            created_at: '2026-11-22T09:31:12.418Z',
            completed_at: '2026-11-22T09:31:12.502Z',
            credits_spent: 1,
            permissible_purpose: 'employment',
            result_count: 3,
          },
          {
            search_id: 'srch_Vb2n8QkL0xR5tW1mZ7pC4yHd',
            kind: 'phone',
            status: 'succeeded',
            created_at: '2026-11-22T09:30:40.007Z',
            completed_at: '2026-11-22T09:30:40.019Z',
            credits_spent: 1,
            permissible_purpose: null,
            result_count: 1,
          },
        ],
        next_cursor:
          'eyJ2IjoxLCJhdCI6IjIwMjYtMTEtMjJUMDk6MzA6NDAuMDA3MjEyWiIsImlkIjoic3JjaF9WYjJuOFFrTDB4UjV0VzFtWjdwQzR5SGQifQ',
      },
    ],
  });

export type HistoryResponse = z.output<typeof historyResponse>;
