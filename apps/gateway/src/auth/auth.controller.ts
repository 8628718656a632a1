import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { DomainError } from '@dossier/domain';
import { CurrentAuth, type AuthContext } from './auth-context';
import { Public } from './public.decorator';
import { AuthService, LOGIN_KEYS_KEPT, REVOKED_KEYS_LISTED } from './auth.service';
import { parseBody } from '../http/validation';
import { ApiDoc, DELETE_BY_ID_ERRORS } from '../openapi/api-doc.decorator';
import {
  accountResponse,
  createKeyBody,
  keyIssuedResponse,
  keyListResponse,
  keyRevokedResponse,
  loginBody,
  registerBody,
  registerResponse,
} from './auth.schema';

const KEY_ID = /^key_[0-9A-Za-z]{1,64}$/;
const BUSY =
  ' `503 unavailable` (with `Retry-After`) when this server is already hashing as many passwords as it queues (PASSWORD_HASH_CONCURRENCY, PASSWORD_HASH_MAX_WAITING): retry after it.';

/**
 * The alias, as the schema states it (`oneOf`, ADR 0069): exactly one of the two. JSON Schema cannot say
 * "both when equal", which the server also takes.
 */
const PASSWORT =
  ' The schema allows one of `password` and `passwort`; both are taken only when they are the same ' +
  'password (400 validation_error naming `passwort` when they differ).';

@Controller('v1')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @Post('auth/register')
  @HttpCode(201)
  @ApiDoc({
    tag: 'auth',
    summary: 'Create an account',
    description:
      'Returns the first API key (shown once) and the signup credit grant. `passwort` is accepted as an alias of `password`.' +
      PASSWORT +
      BUSY,
    auth: false,
    body: registerBody,
    status: 201,
    response: registerResponse,
    errors: [
      'invalid_json',
      'validation_error',
      'email_taken',
      'unsupported_media_type',
      'payload_too_large',
      'rate_limited',
      'unavailable',
    ],
  })
  register(@Body() body: unknown) {
    const { email, password } = parseBody(registerBody, body);
    return this.auth.register(email, password);
  }

  @Public()
  @Post('auth/login')
  @HttpCode(200)
  @ApiDoc({
    tag: 'auth',
    summary: 'Log in and get a new API key',
    description:
      `\`passwort\` is accepted as an alias of \`password\`, as at register.${PASSWORT} Every login issues a new key; the account keeps its ${LOGIN_KEYS_KEPT} most recently used login keys, and a login past that revokes the least recently used of them (keys made by register or \`POST /v1/auth/keys\` are never revoked this way).` +
      BUSY,
    auth: false,
    body: loginBody,
    status: 200,
    response: keyIssuedResponse,
    errors: [
      'invalid_json',
      'validation_error',
      'invalid_credentials',
      'unsupported_media_type',
      'payload_too_large',
      'rate_limited',
      'unavailable',
    ],
  })
  login(@Body() body: unknown) {
    const { email, password } = parseBody(loginBody, body);
    return this.auth.login(email, password);
  }

  @Get('auth/keys')
  @ApiDoc({
    tag: 'auth',
    summary: "List the account's API keys",
    description: `Every live key, and the ${REVOKED_KEYS_LISTED} most recently revoked (any key of the account can still be revoked by id, listed or not), oldest first. A test key lists only test keys.`,
    status: 200,
    response: keyListResponse,
    errors: ['unauthorized', 'rate_limited', 'unavailable'],
  })
  listKeys(@CurrentAuth() auth: AuthContext) {
    return this.auth.listKeys(auth);
  }

  @Post('auth/keys')
  @HttpCode(201)
  @ApiDoc({
    tag: 'auth',
    summary: 'Create an API key',
    description:
      'With `"mode": "test"` the key is a `dsk_test_…` sandbox key: its lookups cost nothing, reach no upstream and answer from the synthetic data set listed in docs/walkthrough.md ("Test keys"). ' +
      'A test key creates only test keys (its default; `"mode": "live"` is a `validation_error`), and lists and revokes only test keys.',
    body: createKeyBody,
    status: 201,
    response: keyIssuedResponse,
    errors: [
      'invalid_json',
      'validation_error',
      'unauthorized',
      'unsupported_media_type',
      'payload_too_large',
      'rate_limited',
      'unavailable',
    ],
  })
  createKey(@CurrentAuth() auth: AuthContext, @Body() body: unknown) {
    const { name, mode } = parseBody(createKeyBody, body);
    return this.auth.createKey(auth, name ?? null, mode);
  }

  @Delete('auth/keys/:id')
  @HttpCode(200)
  @ApiDoc({
    tag: 'auth',
    summary: 'Revoke an API key',
    description: 'The key is refused from the next request on. Revoking the key the request is made with is allowed.',
    status: 200,
    response: keyRevokedResponse,
    pathParams: { id: 'key id (key_…)' },
    errors: DELETE_BY_ID_ERRORS,
  })
  revokeKey(@CurrentAuth() auth: AuthContext, @Param('id') id: string) {
    if (!KEY_ID.test(id)) throw new DomainError('not_found', 'no such key');
    return this.auth.revokeKey(auth, id);
  }

  @Get('account')
  @ApiDoc({
    tag: 'account',
    summary: 'The account and its credit balance',
    status: 200,
    response: accountResponse,
    errors: ['unauthorized', 'rate_limited', 'unavailable'],
  })
  account(@CurrentAuth() auth: AuthContext) {
    return this.auth.account(auth.accountId);
  }
}
