import { createHash } from 'node:crypto';
import type { DataSource, Repository } from 'typeorm';
import { API_KEY_PREFIX, TEST_API_KEY_PREFIX, newApiKey, newId, type ApiKeyMode } from '@dossier/domain';
import { ApiKeyEntity } from './entities/api-key.entity';
import { queryRows } from './sql';

export interface ApiKeyView {
  id: string;
  prefix: string;
  name: string | null;
  mode: ApiKeyMode;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface AuthenticatedKey {
  key_id: string;
  account_id: string;
  mode: ApiKeyMode;
  /** Whether last_used_at is older than the touch interval and should be refreshed. */
  stale: boolean;
}

/** Keys carry ~238 bits of entropy, so a fast hash is the right tool (a slow KDF is for passwords). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

const KEY_PREFIX_LENGTH = 8;

function viewOf(k: ApiKeyEntity): ApiKeyView {
  return {
    id: k.id,
    prefix: k.prefix,
    name: k.name,
    mode: k.mode,
    created_at: k.createdAt,
    last_used_at: k.lastUsedAt,
    revoked_at: k.revokedAt,
  };
}

/** A key not yet stored: the plain key (shown once) and the row that stores it (its hash, never the key). */
export interface NewApiKey {
  apiKey: string;
  keyId: string;
  prefix: string;
  keyHash: string;
  mode: ApiKeyMode;
}

export function newApiKeyRow(mode: ApiKeyMode = 'live'): NewApiKey {
  const apiKey = newApiKey(mode);
  return {
    apiKey,
    keyId: newId.key(),
    // A test key shows as many random characters as a live one (`dsk_test_AbCd`).
    prefix: apiKey.slice(
      0,
      KEY_PREFIX_LENGTH + (mode === 'test' ? TEST_API_KEY_PREFIX.length - API_KEY_PREFIX.length : 0),
    ),
    keyHash: hashApiKey(apiKey),
    mode,
  };
}

/** API keys: the per-request authentication is one prepared statement; the rest goes through the entity. */
export class ApiKeysRepository {
  private readonly keys: Repository<ApiKeyEntity>;

  constructor(private readonly db: DataSource) {
    this.keys = db.getRepository(ApiKeyEntity);
  }

  /** `issuedByLogin`: a key `POST /v1/auth/login` issues (see `loginKeysBeyond`). */
  async create(
    accountId: string,
    name: string | null,
    mode: ApiKeyMode = 'live',
    issuedByLogin = false,
  ): Promise<{ apiKey: string; keyId: string }> {
    const { apiKey, keyId, prefix, keyHash } = newApiKeyRow(mode);
    await this.keys.insert({ id: keyId, accountId, prefix, keyHash, name, mode, issuedByLogin });
    return { apiKey, keyId };
  }

  async authenticate(apiKey: string): Promise<AuthenticatedKey | null> {
    const rows = await queryRows<AuthenticatedKey>(
      this.db,
      `SELECT id AS key_id, account_id, mode,
              (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds') AS stale
         FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
      [hashApiKey(apiKey)],
    );
    return rows[0] ?? null;
  }

  async touch(keyId: string): Promise<void> {
    await this.keys.update({ id: keyId }, { lastUsedAt: () => 'now()' });
  }

  /**
   * The account's live keys and its `revoked` most recently revoked ones (the rest stay stored, for the
   * searches that name them), oldest first; only those of one mode when `mode` is given. Two range scans
   * of `api_keys_account_revoked_idx`, however many keys the account has revoked.
   */
  async list(accountId: string, mode: ApiKeyMode | null, revoked: number): Promise<ApiKeyView[]> {
    const columns = 'id, prefix, name, mode, created_at, last_used_at, revoked_at';
    const ofMode = '($2::text IS NULL OR mode = $2)';
    return queryRows<ApiKeyView>(
      this.db,
      `SELECT ${columns} FROM (
         (SELECT ${columns} FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL AND ${ofMode})
         UNION ALL
         (SELECT ${columns} FROM api_keys WHERE account_id = $1 AND revoked_at IS NOT NULL AND ${ofMode}
           ORDER BY revoked_at DESC, id DESC LIMIT $3)
       ) k ORDER BY created_at, id`,
      [accountId, mode, revoked],
    );
  }

  /** One key of the account (of one mode when `mode` is given), revoked or not; null when it has no such key. */
  async find(accountId: string, keyId: string, mode: ApiKeyMode | null): Promise<ApiKeyView | null> {
    const key = await this.keys.findOneBy(mode === null ? { id: keyId, accountId } : { id: keyId, accountId, mode });
    return key ? viewOf(key) : null;
  }

  /**
   * The ids of the account's live login-issued keys past the `keep` most recently used (last use, else
   * creation; the newest first), to be revoked. One indexed query, on login only.
   */
  async loginKeysBeyond(accountId: string, keep: number): Promise<string[]> {
    const rows = await queryRows<{ id: string }>(
      this.db,
      `SELECT id FROM api_keys
        WHERE account_id = $1 AND issued_by_login AND revoked_at IS NULL
        ORDER BY COALESCE(last_used_at, created_at) DESC, created_at DESC, id DESC
        OFFSET $2`,
      [accountId, keep],
    );
    return rows.map((r) => r.id);
  }

  /** Revokes a key of this account (revoking twice keeps the first time). Null when the account has no such key. */
  async revoke(accountId: string, keyId: string): Promise<ApiKeyView | null> {
    await this.keys
      .createQueryBuilder()
      .update()
      .set({ revokedAt: () => 'COALESCE(revoked_at, now())' })
      .where('id = :keyId AND account_id = :accountId', { keyId, accountId })
      .execute();
    const key = await this.keys.findOneBy({ id: keyId, accountId });
    return key ? viewOf(key) : null;
  }
}
