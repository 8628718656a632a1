import { join } from 'node:path';
import { REPO_ROOT } from './repo-root';

/** A username site list with no sites: username presence is skipped ("no sites to check"). */
export const NO_USERNAME_SITES_FILE = join(REPO_ROOT, 'libs/testing/fixtures/no-username-sites.json');

/**
 * What every process the tests start runs with, so that no provider ever leaves loopback: keyless network
 * providers off (a test that needs one points it at a fake on 127.0.0.1), the SMTP mailbox probe off (a test
 * turns it on with a fake DNS naming a fake SMTP server), DNS at a loopback port where nothing answers (the
 * `email` provider, always on, then says `unknown`), username presence with no sites (a test gives it a list
 * of loopback fakes). Licensed providers are off anyway until a key is set. The provider contract test checks
 * this list covers every network provider.
 */
export const LOOPBACK_PROVIDER_ENV: Readonly<Record<string, string>> = {
  GRAVATAR_ENABLED: 'false',
  GLEIF_ENABLED: 'false',
  SMTP_PROBE: 'false',
  DNS_SERVERS: '127.0.0.1:9',
  USERNAME_SITES_FILE: NO_USERNAME_SITES_FILE,
};
