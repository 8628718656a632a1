import { createHash, timingSafeEqual } from 'node:crypto';

export interface AdminCredentials {
  user: string;
  password: string;
}

const BASIC = /^Basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i;

/** Both sides hashed to the same length, so the comparison takes the same time whatever was sent. */
const sameSecret = (given: string, expected: string): boolean =>
  timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());

/**
 * Whether an `Authorization: Basic …` header carries the admin credentials (RFC 7617). With no
 * credentials configured nothing matches: the admin surface is closed.
 */
export function basicAuthMatches(header: string | undefined, admin: AdminCredentials | null): boolean {
  if (!admin || !header) return false;
  const encoded = BASIC.exec(header)?.[1];
  if (!encoded) return false;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  // Both compared, always: which half was wrong must not show in the timing.
  const userOk = sameSecret(decoded.slice(0, colon), admin.user);
  const passwordOk = sameSecret(decoded.slice(colon + 1), admin.password);
  return userOk && passwordOk;
}
