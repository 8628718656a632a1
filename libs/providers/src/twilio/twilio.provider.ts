import { z } from 'zod';
import type { LineType } from '@dossier/domain';
import {
  PHONE_VALIDATION_ERRORS,
  type PhoneInput,
  type PhoneResultItem,
  type PhoneValidationError,
} from '@dossier/contracts';
import { baseUrlOf, checkBaseUrl, expectJson, request } from '../http';
import { parsePhoneInput, verdictOf } from '../phone-input';
import type { Provider, ProviderAnswer, ProviderContext } from '../provider';

const ID = 'twilio';
const DEFAULT_BASE_URL = 'https://lookups.twilio.com';

/** Twilio's `line_type_intelligence.type` values onto Dossier's `line_type`. */
const TWILIO_LINE_TYPES: ReadonlyMap<string, LineType> = new Map<string, LineType>([
  ['landline', 'fixed_line'],
  ['mobile', 'mobile'],
  ['fixedVoip', 'voip'],
  ['nonFixedVoip', 'voip'],
  ['personal', 'personal_number'],
  ['tollFree', 'toll_free'],
  ['premium', 'premium_rate'],
  ['sharedCost', 'shared_cost'],
  ['uan', 'uan'],
  ['voicemail', 'voicemail'],
  ['pager', 'pager'],
  ['unknown', 'unknown'],
]);

/**
 * The parts of Twilio's Lookup v2 phone number resource (`GET /v2/PhoneNumbers/{number}`) that Dossier
 * reads. For a number that is not valid Twilio answers 200 with `valid: false`, its `validation_errors`,
 * and nulls where it could tell nothing.
 */
const phoneNumberSchema = z.object({
  calling_country_code: z.string().nullish(),
  country_code: z.string().nullish(),
  phone_number: z.string(),
  national_format: z.string().nullish(),
  valid: z.boolean(),
  validation_errors: z.array(z.string()).nullish(),
  line_type_intelligence: z
    .object({
      carrier_name: z.string().nullish(),
      type: z.string().nullish(),
      mobile_country_code: z.string().nullish(),
      mobile_network_code: z.string().nullish(),
      error_code: z.number().nullish(),
    })
    .nullish(),
});
type TwilioPhoneNumber = z.output<typeof phoneNumberSchema>;

/**
 * The `validation_errors` Twilio documents that say a number is not even possible (its length or country
 * code rules it out, or it is no number). INVALID_BUT_POSSIBLE says it is possible.
 */
const IMPOSSIBLE_REASONS: ReadonlySet<string> = new Set([
  'TOO_SHORT',
  'TOO_LONG',
  'INVALID_LENGTH',
  'INVALID_COUNTRY_CODE',
  'NOT_A_NUMBER',
]);

/**
 * Whether the number is possible, as far as Twilio tells: a valid number is; a number that is not valid
 * is what its `validation_errors` say. Twilio gives a reason only "in some cases": with none (or only one
 * it has added since), it said nothing, and the number's own parse (libphonenumber's) answers.
 */
function isPossible(input: PhoneInput, answer: TwilioPhoneNumber): boolean {
  const errors = answer.validation_errors ?? [];
  if (answer.valid || errors.includes('INVALID_BUT_POSSIBLE')) return true;
  if (errors.some((reason) => IMPOSSIBLE_REASONS.has(reason))) return false;
  return parsePhoneInput(input).isPossible();
}

/**
 * Why Twilio finds the number not valid: its `validation_errors` in the vocabulary Dossier knows (a reason it
 * adds later is left out); when it gives none it knows, the number's own parse says why.
 */
function validationErrors(input: PhoneInput, answer: TwilioPhoneNumber): PhoneResultItem['validation_errors'] {
  if (answer.valid) return [];
  const known = (answer.validation_errors ?? []).filter((reason): reason is PhoneValidationError =>
    (PHONE_VALIDATION_ERRORS as readonly string[]).includes(reason),
  );
  return known.length > 0 ? known : verdictOf(parsePhoneInput(input), false).validation_errors;
}

/** Twilio's REST error body (`{code, message, more_info, status}`), which its own 404 (code 20404) carries. */
const errorSchema = z.object({ code: z.number(), message: z.string() });

/**
 * Twilio's answer as a phone item. What Twilio does not tell (location, time zones, the international
 * format) stays null, empty or `unknown`, so the merge keeps libphonenumber's there; its carrier and
 * line type, and its validity, win (a higher precedence).
 */
function twilioItem(input: PhoneInput, answer: TwilioPhoneNumber): PhoneResultItem {
  const line = answer.line_type_intelligence;
  return {
    input: input.phone,
    e164: answer.phone_number,
    valid: answer.valid,
    validation_errors: validationErrors(input, answer),
    possible: isPossible(input, answer),
    country_code: answer.calling_country_code ?? '',
    region: answer.country_code ?? null,
    location: null,
    carrier: line?.carrier_name ?? null,
    // A type Twilio adds later reads as `unknown`.
    line_type: TWILIO_LINE_TYPES.get(line?.type ?? '') ?? 'unknown',
    time_zones: [],
    national_format: answer.national_format ?? '',
    international_format: '',
    sources: [ID],
  };
}

/**
 * Live carrier and line type of a phone number from Twilio Lookup v2 (Line Type Intelligence), merged
 * into the one phone item over libphonenumber's range data: the number may have been ported, and
 * Twilio knows the carrier that serves it now. Licensed: off until `TWILIO_ACCOUNT_SID` and
 * `TWILIO_AUTH_TOKEN` are set (HTTP Basic auth). A number Twilio cannot look up (404 with its error
 * body, code 20404) is `not_found`, a 404 without that body an error; a number it knows without line data
 * (`line_type_intelligence.error_code`, e.g. 60601 for Canadian numbers without approval) is `unknown`
 * with that code.
 */
export const twilioProvider: Provider<'phone'> = {
  id: ID,
  kinds: ['phone'],
  configKeys: ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_BASE_URL'],
  defaultTimeoutMs: 5000,
  transport: 'http',
  // Twilio publishes no calls-per-second figure for Lookup: its REST API limits an account's concurrent
  // requests (429, error 20429; 100 by default). 100 calls/s keeps within that at Lookup's sub-second
  // latency; an account with a different allowance sets TWILIO_RATE_LIMIT.
  rateLimit: { max: 100, perMs: 1000 },
  // Live line data over libphonenumber's range data (precedence 0).
  precedence: 10,
  validateSettings: (settings) => checkBaseUrl(settings, 'TWILIO_BASE_URL'),
  // A number no numbering plan allows (too short, too long for its country): Twilio could only answer
  // `valid: false` with no line data, as libphonenumber already does, and would bill the operator for it.
  // Not called, so not listed in `sources` (ADR 0039). A possible number that is not valid here is still
  // asked about: Twilio's numbering data may be newer than ours (a range opened since).
  appliesTo: (input) => parsePhoneInput(input).isPossible(),
  isConfigured(settings) {
    const missing = ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN'].filter((key) => !settings[key]);
    return missing.length === 0 || `not configured: set ${missing.join(' and ')}`;
  },

  async lookup(_kind, input: PhoneInput, ctx: ProviderContext): Promise<ProviderAnswer<'phone'>> {
    const e164 = parsePhoneInput(input).number;
    const base = baseUrlOf(ctx.settings, 'TWILIO_BASE_URL', DEFAULT_BASE_URL);
    const credentials = Buffer.from(
      `${ctx.settings['TWILIO_ACCOUNT_SID'] ?? ''}:${ctx.settings['TWILIO_AUTH_TOKEN'] ?? ''}`,
    ).toString('base64');
    const res = await request(
      ID,
      {
        url: `${base}/v2/PhoneNumbers/${e164}?Fields=line_type_intelligence`,
        headers: { accept: 'application/json', authorization: `Basic ${credentials}` },
      },
      ctx.signal,
    );
    // Only Twilio's own 404 says it has no such number: a proxy's page, or a base URL that reaches no Twilio
    // API, looked nothing up (expectJson: `malformed`, never not_found).
    const answer = expectJson(ID, res, phoneNumberSchema, { notFound: { status: [404], body: errorSchema } });
    if (!answer) return { outcome: 'not_found', items: [] };
    const items = [twilioItem(input, answer)];
    const lineError = answer.line_type_intelligence?.error_code;
    if (lineError !== null && lineError !== undefined) {
      return { outcome: 'unknown', items, detail: `${ID}: no line type data for this number (error ${lineError})` };
    }
    return { outcome: 'found', items };
  },
};
