import { loadGatewayConfig } from '@dossier/config';
import { DomainError } from '@dossier/domain';
import { PasswordHasher, hashPassword, scrypt, verifyPassword, type Kdf } from './passwords';

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

  describe('Unicode forms (ADR 0043)', () => {
    // "café 2026!" typed with é as one code point (NFC) on one device and as e + U+0301 (NFD) on another.
    const composed = 'caf\u00e9 2026!';
    const decomposed = 'cafe\u0301 2026!';
    let runs = 0;
    const counting: Kdf = (...args) => {
      runs++;
      return scrypt(...args);
    };
    const hasher = new PasswordHasher(loadGatewayConfig({}), counting);

    it('hashes the NFC form: the password typed composed or decomposed is the same password', async () => {
      expect(composed).not.toBe(decomposed);
      const stored = await hasher.hash(decomposed);
      expect(await hasher.verify(composed, stored)).toBe(true);
      expect(await hasher.verify(decomposed, stored)).toBe(true);
      expect(await hasher.verify('cafe 2026!', stored)).toBe(false);
    });

    it('still accepts the raw form an account registered before stored, running a second scrypt only for input that NFC changes', async () => {
      const before = await hashPassword(decomposed); // as register hashed it before: not normalised
      runs = 0;
      expect(await hasher.verify(decomposed, before)).toBe(true);
      expect(runs).toBe(2); // NFC first (fails), then the raw form
      runs = 0;
      expect(await hasher.verify('cafe\u0301 2027!', before)).toBe(false);
      expect(runs).toBe(2);
      runs = 0;
      expect(await hasher.verify(composed, before)).toBe(false); // already NFC: one scrypt, no second chance
      expect(runs).toBe(1);
    });
  });

  it('builds the unknown-e-mail dummy hash at boot: the first login for an unknown e-mail runs one scrypt, as one for a known e-mail does', async () => {
    let runs = 0;
    const hasher = new PasswordHasher(loadGatewayConfig({}), (...args) => {
      runs++;
      return scrypt(...args);
    });
    await hasher.onModuleInit(); // Nest awaits it before the gateway listens
    runs = 0;
    expect(await hasher.verify('correct horse battery', null)).toBe(false);
    expect(runs).toBe(1);
    const stored = await hasher.hash('correct horse battery');
    runs = 0;
    expect(await hasher.verify('wrong password', stored)).toBe(false);
    expect(runs).toBe(1);
  });

  it('refuses at once when every slot is busy and no wait is allowed', async () => {
    const hasher = hasherOf('2', '0');
    const settled = await Promise.allSettled([hasher.hash('a-password'), hasher.hash('b-password'), hasher.hash('c')]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
  });
});
