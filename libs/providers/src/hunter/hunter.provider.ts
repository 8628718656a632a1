import { z } from 'zod';
import { parseEmail, type Deliverability } from '@dossier/domain';
import type { EmailInput, EmailResultItem, EmailSubStatus } from '@dossier/contracts';
import { PLAIN_SUB_STATUS, emailItem, hasValidSyntax } from '../email-item';
import { baseUrlOf, checkBaseUrl, expectJson, parsesAs, request, retryAfterMs, type UpstreamResponse } from '../http';
import { ProviderError, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';

const ID = 'hunter';
const DEFAULT_BASE_URL = 'https://api.hunter.io';

/** Hunter's `data.status` onto a verdict; `webmail` is decided by the SMTP check (see `verdictOf`). */
const STATUS_VERDICTS: ReadonlyMap<string, Deliverability> = new Map<string, Deliverability>([
  ['valid', 'deliverable'],
  ['invalid', 'undeliverable'],
  ['accept_all', 'risky'],
  ['disposable', 'risky'],
  ['unknown', 'unknown'],
]);
/** The deprecated `data.result` of older answers. */
const RESULT_VERDICTS: ReadonlyMap<string, Deliverability> = new Map<string, Deliverability>([
  ['deliverable', 'deliverable'],
  ['undeliverable', 'undeliverable'],
  ['risky', 'risky'],
]);

/** Hunter's words are shown to clients in `reason`: only its short lower-case codes are taken. */
const code = z
  .string()
  .regex(/^[a-z_]{1,32}$/)
  .nullish();

/** The parts of Hunter's e-mail verifier answer (`GET /v2/email-verifier`, API v2) that Dossier reads. */
const verificationSchema = z.object({
  data: z
    .object({
      status: code,
      result: code,
      score: z.number().nullish(),
      disposable: z.boolean().nullish(),
      webmail: z.boolean().nullish(),
      smtp_check: z.boolean().nullish(),
      smtp_server: z.boolean().nullish(),
      accept_all: z.boolean().nullish(),
      block: z.boolean().nullish(),
    })
    .refine((d) => d.status || d.result, 'neither a status nor a result'),
});
type Verification = z.output<typeof verificationSchema>['data'];

/** Hunter's error envelope: `{ errors: [{ id, code, details }] }`. */
const errorsSchema = z.object({ errors: z.array(z.object({ id: z.string().optional() })).min(1) });

/**
 * Hunter's verdict as Dossier's deliverability: valid → deliverable, invalid → undeliverable, a catch-all
 * server or a disposable address → risky, unknown → unknown. Hunter does not verify every webmail
 * address at the SMTP level, so `webmail` is deliverable only where its SMTP check passed. An answer with
 * no status Dossier knows falls back to the deprecated `result`.
 */
function verdictOf(data: Verification): Deliverability {
  if (data.status === 'webmail') return data.smtp_check === true ? 'deliverable' : 'unknown';
  return STATUS_VERDICTS.get(data.status ?? '') ?? RESULT_VERDICTS.get(data.result ?? '') ?? 'unknown';
}

/** What Hunter said, for people: `accept_all (score 70)`. */
function said(data: Verification): string {
  return `${data.status ?? data.result}${typeof data.score === 'number' ? ` (score ${data.score})` : ''}`;
}

/** Hunter's status as a sub-status: its verdict's plain one, `disposable` and `inconclusive` (`unknown`) its own. */
function hunterSubStatus(data: Verification, deliverability: Deliverability): EmailSubStatus {
  if (deliverability === 'risky' && data.status === 'disposable') return 'disposable';
  return deliverability === 'unknown' ? 'inconclusive' : PLAIN_SUB_STATUS[deliverability];
}

/**
 * Hunter's answer as an e-mail item: its verdict and score (in `reason`), and the facts it adds — a catch-all
 * server (`accept_all`, or the status `accept_all`) and whether it reached an SMTP server (`smtp_server`),
 * which the SMTP probe's own facts outrank in the merge. Its sub-status is its verdict's plain one
 * (hunterSubStatus, ADR 0057).
 */
function hunterItem(email: string, data: Verification): EmailResultItem {
  const deliverability = verdictOf(data);
  return emailItem(email, ID, {
    deliverability,
    reason: `Hunter: ${said(data)}`,
    disposable: data.disposable === true || data.status === 'disposable',
    free_provider: data.webmail === true || data.status === 'webmail',
    is_catch_all: data.status === 'accept_all' ? true : (data.accept_all ?? null),
    can_connect_smtp: data.smtp_server ?? null,
    sub_status: hunterSubStatus(data, deliverability),
  });
}

/**
 * A 202 (the verification still runs after Hunter's own 20 s) or a 222 (the remote mail server answered
 * unexpectedly): Hunter could not tell yet. Documented as "ask again later", so no error and no item.
 */
const NOT_YET: Readonly<Record<number, string>> = {
  202: `${ID}: the verification is still running (202); ask again later`,
  222: `${ID}: the mail server answered unexpectedly (222); ask again later`,
};

/**
 * Hunter's own statuses before the usual mapping: its 403 with an error body is its per-second/minute
 * limit (a 403 page without one is a bot wall: `blocked`), its 429 the plan's monthly usage limit.
 */
function throwIfLimited(res: UpstreamResponse): void {
  const limited = res.status === 429 || (res.status === 403 && parsesAs(res.text, errorsSchema));
  if (!limited) return;
  const what = res.status === 429 ? "the plan's usage limit is reached" : 'its rate limit is reached';
  throw new ProviderError('rate_limited', `${ID}: ${what} (${res.status})`, retryAfterMs(res.headers));
}

/**
 * The Hunter e-mail verifier (API v2) as a vendor's opinion on deliverability: merged into the one
 * e-mail item with a precedence below the first-hand checks (`email`, `smtp`), so its verdict is used
 * only where they could not tell; its score is in `reason`; disposable and webmail facts add up.
 * Licensed: off until `HUNTER_API_KEY` is set. The key travels in the query string, as Hunter
 * documents it: no message, detail or log line carries the URL (see `request`). An address Hunter may
 * not process (451 with Hunter's errors body: its owner asked Hunter to stop) is `not_found`.
 */
export const hunterProvider: Provider<'email'> = {
  id: ID,
  kinds: ['email'],
  configKeys: ['HUNTER_API_KEY', 'HUNTER_BASE_URL'],
  // Hunter runs a verification for up to 20 s before it answers 202; a synchronous request's wait
  // ends the call sooner.
  defaultTimeoutMs: 25_000,
  transport: 'http',
  // Hunter publishes 10 calls/s and 300 calls/min per key for the verifier; one token bucket holds only
  // one rate. 5 a second with a burst of 5: never more than 10 in any second (a full bucket plus a
  // second's refill) and 300 a minute sustained (305 in the worst minute: Hunter answers that with 403).
  rateLimit: { max: 5, perMs: 1000 },
  // A vendor's opinion below the first-hand checks (`email` 10, `smtp` 20) and `gravatar` (0).
  precedence: -10,
  validateSettings: (settings) => checkBaseUrl(settings, 'HUNTER_BASE_URL'),
  isConfigured: (settings) => Boolean(settings['HUNTER_API_KEY']) || 'not configured: set HUNTER_API_KEY',
  appliesTo: hasValidSyntax,

  async lookup(_kind, input: EmailInput, ctx: ProviderContext): Promise<ProviderAnswer<'email'>> {
    const base = baseUrlOf(ctx.settings, 'HUNTER_BASE_URL', DEFAULT_BASE_URL);
    const query = new URLSearchParams({
      email: parseEmail(input.email).normalized,
      api_key: ctx.settings['HUNTER_API_KEY'] ?? '',
    });
    const res = await request(
      ID,
      { url: `${base}/v2/email-verifier?${query.toString()}`, headers: { accept: 'application/json' } },
      ctx.signal,
    );
    const notYet = NOT_YET[res.status];
    if (notYet) return { outcome: 'unknown', items: [], detail: notYet };
    throwIfLimited(res);
    // Only with Hunter's own errors body: a filtering proxy answers 451 for what it blocks, too.
    const answer = expectJson(ID, res, verificationSchema, { notFound: { status: [451], body: errorsSchema } });
    if (!answer) return { outcome: 'not_found', items: [] };
    const item = hunterItem(input.email, answer.data);
    if (item.deliverability !== 'unknown') return { outcome: 'found', items: [item] };
    const blocked = answer.data.block ? '; the mail server blocks verification' : '';
    return { outcome: 'unknown', items: [item], detail: `${ID}: no verdict: ${said(answer.data)}${blocked}` };
  },
};
