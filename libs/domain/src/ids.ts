import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random bytes are drawn in blocks: one system call per ~100 ids instead of one per id. */
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function nextByte(): number {
  if (offset === POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return pool[offset++]!;
}

/** Uniformly random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

const SEARCH_ID_LENGTH = 24;
/** A search id as newId.search() makes them: also the BullMQ job id of its lookup. */
export const SEARCH_ID_PATTERN = /^srch_[0-9A-Za-z]{24}$/;

const BATCH_ID_LENGTH = 24;
/** A batch id as newId.batch() makes them. */
export const BATCH_ID_PATTERN = /^bat_[0-9A-Za-z]{24}$/;

/** Prefixed public ids, Stripe style: `acct_…`, `key_…`, `srch_…`. No `:` ever (BullMQ job ids). */
export const newId = {
  account: (): string => `acct_${randomBase62(20)}`,
  key: (): string => `key_${randomBase62(20)}`,
  search: (): string => `srch_${randomBase62(SEARCH_ID_LENGTH)}`,
  request: (): string => `req_${randomBase62(20)}`,
  suppression: (): string => `sup_${randomBase62(20)}`,
  webhook: (): string => `wh_${randomBase62(20)}`,
  batch: (): string => `bat_${randomBase62(BATCH_ID_LENGTH)}`,
};

/** API keys: `dsk_` + 40 base62 characters (~238 bits). Shown once, stored as a hash. */
export const API_KEY_PREFIX = 'dsk_';
/** Test (sandbox) keys: `dsk_test_` + 40 base62 characters. Free, synthetic answers only (ADR 0021). */
export const TEST_API_KEY_PREFIX = 'dsk_test_';
export const API_KEY_MODES = ['live', 'test'] as const;
export type ApiKeyMode = (typeof API_KEY_MODES)[number];
export function newApiKey(mode: ApiKeyMode = 'live'): string {
  return `${mode === 'test' ? TEST_API_KEY_PREFIX : API_KEY_PREFIX}${randomBase62(40)}`;
}
export const API_KEY_PATTERN = /^dsk_(test_)?[0-9A-Za-z]{32,128}$/;
