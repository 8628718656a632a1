import { z } from 'zod';
import { WEBHOOK_EVENTS } from '@dossier/contracts';
import { serverCheck } from '../http/validation';

/**
 * The longest webhook URL, as given and as stored: normalised (WHATWG URL), where each non-ASCII character
 * is percent-encoded (`€` is 9 characters), so the service checks the stored form too.
 */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

export const createWebhookBody = z
  .object({
    url: z
      .string({ error: 'must be a URL' })
      .max(WEBHOOK_URL_MAX_LENGTH, `must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`)
      // What any URL the service takes looks like (the URL parser drops leading blanks and controls, and a
      // #fragment is refused); the rest — a host that resolves, allowed addresses — no pattern can state.
      .meta({
        pattern: '^[\\x00-\\x20]*[Hh][Tt][Tt][Pp][Ss]?:[^#]*$',
        ...serverCheck(
          'a URL that is not absolute https (http only where the operator allows private targets), whose host ' +
            'does not resolve in time to an address webhooks may reach, that is longer than the limit as stored, ' +
            'or one more than the webhooks an account may have',
          ['https://203.0.113.10/dossier'],
        ),
      })
      .describe(
        `where events are POSTed: https (http only where the operator allows private targets); at most ${WEBHOOK_URL_MAX_LENGTH} characters also as stored, with non-ASCII characters percent-encoded`,
      ),
    events: z
      .array(z.enum(WEBHOOK_EVENTS, { error: `must be one of ${WEBHOOK_EVENTS.join(', ')}` }))
      .min(1, 'must name at least one event')
      .optional()
      .describe('the events to send (default: all)'),
  })
  .strict()
  // An address literal from the documentation range (RFC 5737): the example resolves without DNS, so it registers.
  .meta({ examples: [{ url: 'https://203.0.113.10/dossier', events: ['search.completed', 'search.failed'] }] });

const timestamp = z.string().describe('RFC 3339 UTC timestamp');

export const webhookView = z.object({
  id: z.string().describe('wh_…'),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  created_at: timestamp,
});

const EXAMPLE_WEBHOOK = {
  id: 'wh_4kP9xQ2mLr7TzW1bN8cV',
  url: 'https://203.0.113.10/dossier',
  events: ['search.completed', 'search.failed'],
  created_at: '2026-11-23T09:00:00.000Z',
};

export const webhookCreatedResponse = z
  .object({
    status: z.literal('success'),
    webhook: webhookView,
    secret: z.string().describe('whsec_…: signs every delivery (Dossier-Signature). Shown only here, once.'),
  })
  .meta({
    examples: [
      { status: 'success', webhook: EXAMPLE_WEBHOOK, secret: 'whsec_3q2-7wVbQ0nLk9sYt4XcZr1mA8uHf6dJ5pGe0iBo2Nw' },
    ],
  });

export const webhookListResponse = z
  .object({ status: z.literal('success'), webhooks: z.array(webhookView).describe('oldest first; no secrets') })
  .meta({ examples: [{ status: 'success', webhooks: [EXAMPLE_WEBHOOK] }] });

export const webhookDeletedResponse = z
  .object({ status: z.literal('success'), webhook: webhookView })
  .meta({ examples: [{ status: 'success', webhook: EXAMPLE_WEBHOOK }] });

export const deliveryView = z.object({
  event_id: z.string().describe('evt_…, the same on every attempt of one event'),
  type: z.enum(WEBHOOK_EVENTS),
  attempt: z.number().int().describe('1 for the first try'),
  outcome: z
    .enum(['delivered', 'retrying', 'failed'])
    .describe('`delivered`: a 2xx in time; `retrying`: another attempt follows; `failed`: the last attempt, given up'),
  status_code: z.number().int().nullable().describe("the receiver's HTTP status; null when it did not answer"),
  error: z.string().nullable().describe('why the attempt failed (timeout, connection refused, …); null when delivered'),
  duration_ms: z.number().int(),
  attempted_at: timestamp,
});

export const deliveryListResponse = z
  .object({ status: z.literal('success'), deliveries: z.array(deliveryView).describe('newest first, at most 100') })
  .meta({
    examples: [
      {
        status: 'success',
        deliveries: [
          {
            event_id: 'evt_8cFq3xPzLk2mW9rT4vB7nY1d',
            type: 'search.completed',
            attempt: 2,
            outcome: 'delivered',
            status_code: 200,
            error: null,
            duration_ms: 41,
            attempted_at: '2026-11-23T09:01:02.120Z',
          },
          {
            event_id: 'evt_8cFq3xPzLk2mW9rT4vB7nY1d',
            type: 'search.completed',
            attempt: 1,
            outcome: 'retrying',
            status_code: 500,
            error: 'answered 500',
            duration_ms: 12,
            attempted_at: '2026-11-23T09:01:01.030Z',
          },
        ],
      },
    ],
  });
