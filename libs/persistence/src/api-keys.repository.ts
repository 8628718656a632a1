import { createHash } from 'node:crypto';
import type { DataSource, Repository } from 'typeorm';
import { newApiKey, newId } from '@dossier/domain';
import { ApiKeyEntity } from './entities/api-key.entity';
import { queryRows } from './sql';

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

function viewOf(k: ApiKeyEntity): ApiKeyView {
  return {
    id: k.id,
    prefix: k.prefix,
    name: k.name,
    created_at: k.createdAt,
    last_used_at: k.lastUsedAt,
    revoked_at: k.revokedAt,
  };
}

/** API keys: the per-request authentication is one prepared statement; the rest goes through the entity. */
export class ApiKeysRepository {
  private readonly keys: Repository<ApiKeyEntity>;

  constructor(private readonly db: DataSource) {
    this.keys = db.getRepository(ApiKeyEntity);
  }

  async create(accountId: string, name: string | null): Promise<{ apiKey: string; keyId: string }> {
    const apiKey = newApiKey();
    const keyId = newId.key();
    await this.keys.insert({
      id: keyId,
      accountId,
      prefix: apiKey.slice(0, KEY_PREFIX_LENGTH),
      keyHash: hashApiKey(apiKey),
      name,
    });
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
    await this.keys.update({ id: keyId }, { lastUsedAt: () => 'now()' });
  }

  async list(accountId: string): Promise<ApiKeyView[]> {
    const keys = await this.keys.find({ where: { accountId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return keys.map(viewOf);
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
