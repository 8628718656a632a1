import { Inject, Injectable } from '@nestjs/common';
import type { GatewayConfig } from '@dossier/config';
import type { RedisClient } from '@dossier/runtime';
import { GATEWAY_CONFIG, REDIS } from '../infra/tokens';
import { KEY_CACHE_TTL_MS, KeyCache } from './key-cache';

/**
 * Auth's side of key revocation, for every gateway at once. A revoked key gets a marker in Redis; each
 * request with a key checks that marker in the Redis call it makes anyway (the key's rate limit), so a
 * gateway's cached key lookup never outlives a revocation. The rate limiter only knows "refuse when
 * this Redis key exists"; what the key is, and what a hit means, belong here.
 */
export abstract class KeyRevocations {
  /** Refuse this key on every gateway from the next request on. */
  abstract revoke(keyId: string): Promise<void>;
  /** The Redis key whose existence means `keyId` is revoked. */
  abstract markerKey(keyId: string): string;
  /** A request found `keyId` revoked: forget what this gateway cached about it. */
  abstract revoked(keyId: string): void;
}

/** Longer than KEY_CACHE_TTL_MS with a wide margin: by then no gateway still trusts a cached lookup of the key. */
const MARKER_TTL_S = Math.ceil((KEY_CACHE_TTL_MS * 10) / 1000);

@Injectable()
export class RedisKeyRevocations extends KeyRevocations {
  private readonly prefix: string;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly cache: KeyCache,
  ) {
    super();
    this.prefix = `${config.queuePrefix}:revoked:`;
  }

  async revoke(keyId: string): Promise<void> {
    await this.redis.set(this.markerKey(keyId), '1', 'EX', MARKER_TTL_S);
    this.cache.evictKey(keyId);
  }

  markerKey(keyId: string): string {
    return this.prefix + keyId;
  }

  revoked(keyId: string): void {
    this.cache.evictKey(keyId);
  }
}
