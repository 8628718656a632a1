import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import type { GatewayConfig } from '@dossier/config';
import { DomainError, Slots } from '@dossier/domain';
import { GATEWAY_CONFIG } from '../infra/tokens';

/** The key derivation passwords are hashed with; a test swaps in one that counts its runs. */
export type Kdf = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) => Promise<Buffer>;

export const scrypt: Kdf = (password, salt, keylen, options) =>
  new Promise((resolve, reject) =>
    scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );

/** scrypt parameters (OWASP: N=2^15, r=8, p=1 is ~64 MiB·ms class; kept in the hash so they can grow). */
const N = 1 << 15;
const R = 8;
const P = 1;
const KEYLEN = 32;
const MAXMEM = 128 * N * R * 2;

/** `scrypt$N$r$p$salt$hash` (base64). */
export async function hashPassword(password: string, kdf: Kdf = scrypt): Promise<string> {
  const salt = randomBytes(16);
  const hash = await kdf(password, salt, KEYLEN, { N, r: R, p: P, maxmem: MAXMEM });
  return ['scrypt', N, R, P, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string, kdf: Kdf = scrypt): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await kdf(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 128 * Number(n) * Number(r) * 2,
  });
  return timingSafeEqual(actual, expected);
}

const NEVER = new AbortController().signal;

/** No provider: the gateway hashes with scrypt. A test constructs PasswordHasher with a KDF of its own. */
const PASSWORD_KDF = Symbol('PASSWORD_KDF');

/**
 * Register's and login's password hashing, bounded per gateway process (ADR 0007): at most
 * PASSWORD_HASH_CONCURRENCY scrypt runs at once, PASSWORD_HASH_MAX_WAITING more wait their turn (first
 * come, first served), and a request beyond that is `503 unavailable` with `Retry-After` at once, before
 * any hashing. Unbounded, a burst of logins queued as much CPU and memory (~32 MiB each) as it liked on
 * libuv's four threads, which every other pool user (DNS lookups, file reads) waits behind.
 */
@Injectable()
export class PasswordHasher implements OnModuleInit {
  private readonly slots: Slots;
  private readonly maxWaiting: number;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() @Inject(PASSWORD_KDF) private readonly kdf: Kdf = scrypt,
  ) {
    this.slots = new Slots(config.passwordHashing.concurrency);
    this.maxWaiting = config.passwordHashing.maxWaiting;
  }

  /** Hashes the password's NFC form (ADR 0043): the same characters typed composed or decomposed match. */
  hash(password: string): Promise<string> {
    return this.bounded(() => hashPassword(password.normalize('NFC'), this.kdf));
  }

  /**
   * The hash a login for an unknown e-mail is checked against, so that it runs the same scrypt work as
   * one for a known e-mail. Built at boot (onModuleInit, which Nest awaits before the gateway listens):
   * built on first use, the first unknown-e-mail login on each gateway ran a second scrypt, outside the
   * hashing bound — a timing signal that the e-mail names no account.
   */
  private dummy: string | undefined;

  async onModuleInit(): Promise<void> {
    this.dummy = await hashPassword(randomBytes(16).toString('hex'), this.kdf);
  }

  /**
   * Checks the password against `stored`, or against the dummy hash when the e-mail names no account
   * (null). The NFC form first, then — only when NFC changes it, so a second scrypt only for such input —
   * the form as typed, which an account registered before NFC (ADR 0043) may have stored. Both runs take
   * one slot.
   */
  verify(password: string, stored: string | null): Promise<boolean> {
    const against = stored ?? this.dummy;
    if (against === undefined) throw new Error('PasswordHasher: verify before onModuleInit built the dummy hash');
    return this.bounded(async () => {
      const nfc = password.normalize('NFC');
      if (await verifyPassword(nfc, against, this.kdf)) return true;
      return nfc !== password && (await verifyPassword(password, against, this.kdf));
    });
  }

  private async bounded<T>(work: () => Promise<T>): Promise<T> {
    if (this.slots.held >= this.slots.size && this.slots.waiting >= this.maxWaiting) {
      throw DomainError.unavailable('too many sign-ins at once on this server; retry in a moment');
    }
    const release = await this.slots.take(NEVER);
    try {
      return await work();
    } finally {
      release();
    }
  }
}
