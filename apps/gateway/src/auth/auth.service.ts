import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DomainError, type ApiKeyMode } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import { AccountsRepository, ApiKeysRepository, hashApiKey, type ApiKeyView } from '@dossier/persistence';
import { GATEWAY_CONFIG } from '../infra/tokens';
import { PasswordHasher } from './passwords';
import type { AuthContext } from './auth-context';
import { KeyRevocations } from './key-revocations';
import { KeyCache } from './key-cache';
import { RateLimiterService } from '../rate-limit/rate-limiter.service';

/** Login-issued keys an account keeps live; a login past that revokes the least recently used (ADR 0036). */
export const LOGIN_KEYS_KEPT = 20;

/** Revoked keys `GET /v1/auth/keys` lists, the most recently revoked; every live key is listed (ADR 0042). */
export const REVOKED_KEYS_LISTED = 100;

/** The mode of keys a caller sees: a test key only test keys (ADR 0034), a live key all. */
const visibleMode = (caller: AuthContext): ApiKeyMode | null => (caller.mode === 'test' ? 'test' : null);

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function keyViewOf(k: ApiKeyView) {
  return {
    id: k.id,
    prefix: k.prefix,
    name: k.name,
    mode: k.mode,
    created_at: k.created_at.toISOString(),
    last_used_at: iso(k.last_used_at),
    revoked_at: iso(k.revoked_at),
  };
}

@Injectable()
export class AuthService {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(AccountsRepository) private readonly accounts: AccountsRepository,
    @Inject(ApiKeysRepository) private readonly keys: ApiKeysRepository,
    private readonly revocations: KeyRevocations,
    private readonly limiter: RateLimiterService,
    private readonly cache: KeyCache,
    private readonly passwords: PasswordHasher,
  ) {}

  /**
   * A new key; this gateway forgets its hash as unknown at once. (No gateway can have it as unknown: the
   * key did not exist before, see KeyCache.setUnknown — this is the one place that would know otherwise.)
   */
  private async issue(accountId: string, name: string | null, mode?: ApiKeyMode, issuedByLogin = false) {
    return this.issued(await this.keys.create(accountId, name, mode, issuedByLogin));
  }

  private issued<K extends { apiKey: string }>(key: K): K {
    this.cache.forgetUnknown(hashApiKey(key.apiKey));
    return key;
  }

  /** The account, its signup grant and its first key are one statement: all written, or none. */
  async register(email: string, password: string) {
    const hash = await this.passwords.hash(password);
    const account = await this.accounts.register(email, hash, this.config.signupCredits, 'default');
    const key = this.issued(account.key);
    return {
      status: 'success' as const,
      account: { id: account.id, email: account.email, created_at: account.created_at.toISOString() },
      api_key: key.apiKey,
      credits_remaining: account.balance,
    };
  }

  /** Same answer, and about the same time, for an unknown e-mail and a wrong password. */
  /**
   * Failed logins are limited per account (LOGIN_FAILURE_LIMIT), or per e-mail when it names none (by its
   * hash: no address in Redis), so that an unknown e-mail behaves the same. Over the limit: 429.
   */
  async login(email: string, password: string) {
    const creds = await this.accounts.findCredentials(email);
    const subject = creds
      ? `account:${creds.id}`
      : `email:${createHash('sha256').update(email.toLowerCase()).digest('base64url')}`;
    const succeeded = await this.limiter.takeLoginAttempt(subject);
    let ok: boolean;
    try {
      ok = await this.passwords.verify(password, creds?.password_hash ?? null);
    } catch (err) {
      await succeeded(); // no password was checked (503: too many at once): not a failed login
      throw err;
    }
    if (!creds || !ok) throw new DomainError('invalid_credentials', 'the e-mail or password is wrong');
    await succeeded();
    const key = await this.issue(creds.id, 'login', 'live', true);
    // The account keeps its LOGIN_KEYS_KEPT most recently used login keys (ADR 0036); the new one is the newest.
    for (const stale of await this.keys.loginKeysBeyond(creds.id, LOGIN_KEYS_KEPT)) await this.revoke(creds.id, stale);
    return { status: 'success' as const, api_key: key.apiKey, key_id: key.keyId };
  }

  /**
   * A new key of the account. A test key stays in the test world (ADR 0034): it makes test keys (its
   * default), and asking it for a live one is a validation error — a leaked test key must not be a way
   * to a live key, and so to the account's real results.
   */
  async createKey(caller: AuthContext, name: string | null, mode: ApiKeyMode | undefined) {
    if (caller.mode === 'test' && mode === 'live') {
      throw DomainError.validation([{ field: 'mode', issue: 'a test key can only create test keys' }]);
    }
    const key = await this.issue(caller.accountId, name, mode ?? caller.mode);
    return { status: 'success' as const, api_key: key.apiKey, key_id: key.keyId };
  }

  /**
   * The account's live keys and its REVOKED_KEYS_LISTED most recently revoked (ADR 0042); a test key sees
   * only the test keys (ADR 0034).
   */
  async listKeys(caller: AuthContext) {
    const keys = await this.keys.list(caller.accountId, visibleMode(caller), REVOKED_KEYS_LISTED);
    return { status: 'success' as const, keys: keys.map(keyViewOf) };
  }

  /**
   * Marks the key revoked in Redis first (every gateway refuses it from the next request on, cache or
   * not), then in Postgres. If Redis is down this fails with 503 and nothing changes. A test key can
   * revoke only test keys: a live key is not found for it (ADR 0034).
   */
  async revokeKey(caller: AuthContext, keyId: string) {
    const accountId = caller.accountId;
    if (!(await this.keys.find(accountId, keyId, visibleMode(caller))))
      throw new DomainError('not_found', 'no such key');
    const key = await this.revoke(accountId, keyId);
    if (!key) throw new DomainError('not_found', 'no such key');
    return { status: 'success' as const, key: keyViewOf(key) };
  }

  /** Every gateway's Redis marker first, then Postgres (ADR 0008). */
  private async revoke(accountId: string, keyId: string) {
    await this.revocations.revoke(keyId);
    return this.keys.revoke(accountId, keyId);
  }

  async account(accountId: string) {
    const account = await this.accounts.findById(accountId);
    if (!account) throw new DomainError('unauthorized', 'the account no longer exists');
    return {
      status: 'success' as const,
      account: { id: account.id, email: account.email, created_at: account.created_at.toISOString() },
      credits_remaining: account.balance,
    };
  }
}
