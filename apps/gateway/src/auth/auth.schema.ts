import { z } from 'zod';
import { API_KEY_MODES } from '@dossier/domain';
import { oneOfRequired, serverCheck, trimmedPattern, trimmedText } from '../http/validation';

const str = () => z.string({ error: 'must be a string' });

const EMAIL = z.email({ error: 'must be an e-mail address' });

/**
 * An e-mail address, trimmed. The document shows the pipe's input (a string), so it states what that must hold:
 * zod's own e-mail pattern around blanks (`format: email` would be another, looser check than the server's).
 */
export const emailField = trimmedText(254)
  .pipe(EMAIL)
  .meta({ pattern: trimmedPattern(new RegExp(z.toJSONSchema(EMAIL).pattern as string)) })
  .describe('an e-mail address (compared case-insensitively)');

const passwordField = str().min(8, 'must be at least 8 characters').max(128, 'must be at most 128 characters');

/** At login only presence is checked: an account keeps working if the register rules ever tighten. */
const loginPasswordField = str().min(1, 'must be a non-empty string').max(128, 'must be at most 128 characters');

/**
 * `email` plus `password` or its alias `passwort` (the German rendering of the same request), as
 * register and login both take them: one of the two is required, both are fine when they agree. The
 * document states "exactly one" (`oneOf`): JSON Schema cannot compare two values, and a request it allows
 * must be one the server takes (ADR 0069); the server still takes both when they agree.
 */
function credentials(password: typeof passwordField) {
  return z
    .object({
      email: emailField,
      password: password
        .optional()
        .describe('compared in Unicode NFC: an accent typed composed or decomposed is the same character (ADR 0043)'),
      passwort: password.optional().describe('alias of `password`; send one of the two, not both'),
    })
    .strict()
    .superRefine((v, ctx) => {
      if (v.password === undefined && v.passwort === undefined) {
        ctx.addIssue({ code: 'custom', path: ['password'], message: 'is required' });
      } else if (
        v.password !== undefined &&
        v.passwort !== undefined &&
        v.password.normalize('NFC') !== v.passwort.normalize('NFC')
      ) {
        ctx.addIssue({ code: 'custom', path: ['passwort'], message: 'differs from password; send only one of them' });
      }
    })
    .meta(oneOfRequired(['password', 'passwort']))
    .transform((v) => ({ email: v.email, password: (v.password ?? v.passwort) as string }));
}

export const registerBody = credentials(passwordField);

export const loginBody = credentials(loginPasswordField);

export const createKeyBody = z
  .object({
    name: trimmedText(100, { noControls: true })
      .optional()
      .describe(
        'a label of your own: 1 to 100 characters once trimmed, no control characters (line breaks, tabs, escapes)',
      ),
    mode: z
      .enum(API_KEY_MODES, { error: 'must be "live" or "test"' })
      .meta(serverCheck('`live` from a test key: a test key can only create test keys', ['test']))
      .optional()
      .describe('`live` (default) or `test`: a `dsk_test_…` key whose lookups are free and synthetic'),
  })
  .strict();

const timestamp = z.string().describe('RFC 3339 UTC timestamp');

export const accountSchema = z.object({ id: z.string(), email: z.string(), created_at: timestamp });

export const registerResponse = z.object({
  status: z.literal('success'),
  account: accountSchema,
  api_key: z.string().describe('dsk_… — shown once, store it'),
  credits_remaining: z.number().int(),
});

export const keyIssuedResponse = z.object({
  status: z.literal('success'),
  api_key: z.string().describe('dsk_… — shown once, store it'),
  key_id: z.string(),
});

export const keyView = z.object({
  id: z.string(),
  prefix: z.string(),
  name: z.string().nullable(),
  mode: z.enum(API_KEY_MODES).describe('`test`: a sandbox key (free, synthetic answers)'),
  created_at: timestamp,
  last_used_at: timestamp.nullable(),
  revoked_at: timestamp.nullable(),
});

export const keyListResponse = z.object({ status: z.literal('success'), keys: z.array(keyView) });
export const keyRevokedResponse = z.object({ status: z.literal('success'), key: keyView });

export const accountResponse = z.object({
  status: z.literal('success'),
  account: accountSchema,
  credits_remaining: z.number().int(),
});

/** Examples for the reference page: "Try it out" in /docs pre-fills requests with them (checked at boot). */
const EXAMPLE_KEY = 'dsk_J43xXZ6cljkSJliiGQnTQRpqHqzLy31kRjyGjzFA';
const EXAMPLE_ACCOUNT = {
  id: 'acct_Kjn65JzDeab8BkbcVCLH',
  email: 'grace@example.com',
  created_at: '2026-11-22T09:30:00.000Z',
};
const EXAMPLE_KEY_VIEW = {
  id: 'key_Q8mZ2vN5xR1tY7wB3kLp',
  prefix: 'dsk_J43x',
  name: 'default',
  mode: 'live',
  created_at: '2026-11-22T09:30:00.000Z',
  last_used_at: '2026-11-22T09:31:12.000Z',
  revoked_at: null,
};
const EXAMPLES: [z.ZodType, unknown][] = [
  [registerBody, { email: 'grace@example.com', password: 'correct horse battery' }],
  [loginBody, { email: 'grace@example.com', password: 'correct horse battery' }],
  [createKeyBody, { name: 'billing-service-sandbox', mode: 'test' }],
  [registerResponse, { status: 'success', account: EXAMPLE_ACCOUNT, api_key: EXAMPLE_KEY, credits_remaining: 100 }],
  [keyIssuedResponse, { status: 'success', api_key: EXAMPLE_KEY, key_id: EXAMPLE_KEY_VIEW.id }],
  [keyListResponse, { status: 'success', keys: [EXAMPLE_KEY_VIEW] }],
  [keyRevokedResponse, { status: 'success', key: { ...EXAMPLE_KEY_VIEW, revoked_at: '2026-11-22T10:00:00.000Z' } }],
  [accountResponse, { status: 'success', account: EXAMPLE_ACCOUNT, credits_remaining: 100 }],
];
for (const [schema, example] of EXAMPLES)
  z.globalRegistry.add(schema, { ...z.globalRegistry.get(schema), examples: [example] });
