import { loadGatewayConfig } from '@dossier/config';
import { DomainError } from '@dossier/domain';
import { PasswordHasher, hashPassword, verifyPassword } from './passwords';

describe('passwords', () => {
  it('hashes with a salt and verifies only the right password', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
    expect(await verifyPassword('anything', 'garbage')).toBe(false);
  });
});

describe('PasswordHasher', () => {
  const hasherOf = (concurrency: string, maxWaiting: string) =>
    new PasswordHasher(
      loadGatewayConfig({ PASSWORD_HASH_CONCURRENCY: concurrency, PASSWORD_HASH_MAX_WAITING: maxWaiting }),
    );

  it('runs at most PASSWORD_HASH_CONCURRENCY at once, queues PASSWORD_HASH_MAX_WAITING more, and refuses the rest with 503 unavailable', async () => {
    const hasher = hasherOf('1', '1');
    // Called in one tick: the first runs, the second waits for it, the third finds the line full.
    const calls = [hasher.hash('password one'), hasher.hash('password two'), hasher.verify('password 3', 'scrypt$x')];
    const settled = await Promise.allSettled(calls);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    const refused = (settled[2] as PromiseRejectedResult).reason as unknown;
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'unavailable', retryAfterS: 1 });
    // The line empties as the work ends: the next call runs.
    const stored = (settled[0] as PromiseFulfilledResult<string>).value;
    expect(await hasher.verify('password one', stored)).toBe(true);
  });

  it('refuses at once when every slot is busy and no wait is allowed', async () => {
    const hasher = hasherOf('2', '0');
    const settled = await Promise.allSettled([hasher.hash('a-password'), hasher.hash('b-password'), hasher.hash('c')]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
  });
});
