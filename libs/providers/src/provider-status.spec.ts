import { describeStatus, statusOf } from '@dossier/contracts';
import type { Provider } from './provider';
import { providerStatus } from './provider-status';
import { PROVIDERS } from './registry';

/** A provider that is only what the status reads: its id, whether it is configured, and its check. */
function fake(id: string, isConfigured: Provider['isConfigured'], checkReach?: Provider['checkReach']): Provider {
  return {
    id,
    kinds: ['email'],
    configKeys: [],
    defaultTimeoutMs: 1000,
    transport: 'http',
    isConfigured,
    ...(checkReach ? { checkReach } : {}),
    lookup: () => Promise.reject(new Error('not called')),
  };
}

describe('providerStatus', () => {
  it('sorts providers into on, off (why, naming the setting) and unreachable (why), in the registry order', async () => {
    const checked: string[] = [];
    const status = await providerStatus(
      [
        fake('offline', () => true),
        fake('keyed', () => 'not configured: set KEYED_API_KEY'),
        fake(
          'slow-up',
          () => true,
          () => new Promise((resolve) => setTimeout(() => resolve(true), 50)),
        ),
        fake(
          'down',
          () => true,
          () => Promise.resolve('no connection to api.down.test within 3000 ms'),
        ),
        fake(
          'switched-off',
          () => 'disabled (SWITCHED_OFF_ENABLED=false)',
          () => {
            checked.push('switched-off');
            return Promise.resolve(true);
          },
        ),
        fake('broken', () => {
          throw new Error('USERNAME_SITES_FILE: cannot be read');
        }),
      ],
      {},
      1000,
    );
    expect(status).toEqual({
      on: ['offline', 'slow-up'],
      off: {
        keyed: 'not configured: set KEYED_API_KEY',
        'switched-off': 'disabled (SWITCHED_OFF_ENABLED=false)',
        broken: 'USERNAME_SITES_FILE: cannot be read',
      },
      unreachable: { down: 'no connection to api.down.test within 3000 ms' },
    });
    // A provider that is off is not checked: nothing reaches an upstream it would never call.
    expect(checked).toEqual([]);
  });

  it('gives each check its budget, and says so when one does not answer within it', async () => {
    const started = Date.now();
    const status = await providerStatus(
      [
        fake(
          'silent',
          () => true,
          (_settings, signal) =>
            new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
        ),
      ],
      {},
      100,
    );
    expect(status.unreachable).toEqual({ silent: 'no answer within 100 ms' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("reads the registry's providers with the harness's settings without leaving loopback", async () => {
    const status = await providerStatus(
      PROVIDERS.filter((p) => !p.sandbox),
      { GRAVATAR_ENABLED: 'false', GLEIF_ENABLED: 'false', DNS_SERVERS: '127.0.0.1:9' },
      2000,
    );
    expect(status.on).toEqual(expect.arrayContaining(['libphonenumber', 'local']));
    expect(status.off).toMatchObject({
      gravatar: 'disabled (GRAVATAR_ENABLED=false)',
      gleif: 'disabled (GLEIF_ENABLED=false)',
      pdl: 'not configured: set PDL_API_KEY',
      smtp: 'off: the mailbox probe is opt-in (SMTP_PROBE=true)',
    });
    expect(status.unreachable).toEqual({ email: expect.stringMatching(/^DNS \(127\.0\.0\.1:9\): /) });
  });
});

describe('a status in words (describeStatus) and narrowed to one kind (statusOf)', () => {
  const status = {
    on: ['email', 'libphonenumber'],
    off: { pdl: 'not configured: set PDL_API_KEY' },
    unreachable: { gravatar: 'no connection to api.gravatar.com within 3000 ms (UPSTREAM_CONNECT_TIMEOUT_MS)' },
  };

  it('names each provider, and why for those off or unreachable', () => {
    expect(describeStatus(status)).toBe(
      'on: email, libphonenumber; off: pdl (not configured: set PDL_API_KEY); ' +
        'unreachable: gravatar (no connection to api.gravatar.com within 3000 ms (UPSTREAM_CONNECT_TIMEOUT_MS))',
    );
    expect(describeStatus({ on: [], off: {}, unreachable: {} })).toBe('on: none; off: none; unreachable: none');
  });

  it("keeps only one kind's providers", () => {
    expect(statusOf(status, ['email', 'gravatar', 'hunter'])).toEqual({
      on: ['email'],
      off: {},
      unreachable: { gravatar: status.unreachable.gravatar },
    });
  });
});
