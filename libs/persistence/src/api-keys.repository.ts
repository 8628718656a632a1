import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { queryRows } from './sql';
import { newApiKey, newId } from '@dossier/domain';

export interface ApiKeyView {
  id: string;
  prefix: string;
  name: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface AuthenticatedKey {
  key_id: string;
  account_id: string;
  /** Whether last_used_at is older than the touch interval and should be refreshed. */
  stale: boolean;
}

/** Keys carry ~238 bits of entropy, so a fast hash is the right tool (a slow KDF is for passwords). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

const KEY_PREFIX_LENGTH = 8;

export class ApiKeysRepository {
  constructor(private readonly db: DataSource) {}

  async create(accountId: string, name: string | null): Promise<{ apiKey: string; keyId: string }> {
    const apiKey = newApiKey();
    const keyId = newId.key();
    await queryRows(
      this.db,
      `INSERT INTO api_keys (id, account_id, prefix, key_hash, name) VALUES ($1, $2, $3, $4, $5)`,
      [keyId, accountId, apiKey.slice(0, KEY_PREFIX_LENGTH), hashApiKey(apiKey), name],
    );
    return { apiKey, keyId };
  }

  async authenticate(apiKey: string): Promise<AuthenticatedKey | null> {
    const rows = await queryRows<AuthenticatedKey>(
      this.db,
      `SELECT id AS key_id, account_id,
              (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds') AS stale
         FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
      [hashApiKey(apiKey)],
    );
    return rows[0] ?? null;
  }

  async touch(keyId: string): Promise<void> {
    await queryRows(this.db, `UPDATE api_keys SET last_used_at = now() WHERE id = $1`, [keyId]);
  }

  async list(accountId: string): Promise<ApiKeyView[]> {
    return queryRows<ApiKeyView>(
      this.db,
      `SELECT id, prefix, name, created_at, last_used_at, revoked_at
         FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`,
      [accountId],
    );
  }

  /** Revokes a key of this account. Returns false when the account has no such key. Revoking twice is fine. */
  async revoke(accountId: string, keyId: string): Promise<ApiKeyView | null> {
    const rows = await queryRows<ApiKeyView>(
      this.db,
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
        WHERE id = $1 AND account_id = $2
        RETURNING id, prefix, name, created_at, last_used_at, revoked_at`,
      [keyId, accountId],
    );
    return rows[0] ?? null;
  }
}
