import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpContract } from '../http-contract';
import { usernameProvider } from './username.provider';

/** A one-site list (Sherlock's format) whose site is the fake at `baseUrl`: one file per address. */
function siteListAt(baseUrl: string): string {
  const file = join(tmpdir(), `dossier-username-contract-${createHash('sha1').update(baseUrl).digest('hex')}.json`);
  const site = {
    errorType: 'status_code',
    url: `${baseUrl}/users/{}`,
    urlMain: `${baseUrl}/`,
    username_claimed: 'ghopper',
  };
  writeFileSync(file, JSON.stringify({ Fakebook: site }));
  return file;
}

export const contract: HttpContract<'person'> = {
  provider: usernameProvider,
  kind: 'person',
  input: { username: ' @ghopper' },
  settings: (baseUrl) => ({ USERNAME_SITES_FILE: siteListAt(baseUrl) }),
  // A web page, not an API: a 401 is a login wall; a redirect without a Location is the malformed answer;
  // a 404 page is the site's own answer (its errorType `status_code`: no such user).
  outcomes: { '401': 'blocked', 'foreign-404': 'not_found' },
  checkRequest(req) {
    expect(req).toMatchObject({ method: 'GET', url: '/users/ghopper' });
    expect(req.headers['user-agent']).toMatch(/^Mozilla\/5\.0/);
  },
  checkFound([item]) {
    expect(item).toMatchObject({
      full_name: null,
      usernames: ['ghopper'],
      matched_on: ['username'],
      sources: ['site:Fakebook'],
      accounts: [{ service: 'Fakebook', username: 'ghopper', url: expect.stringMatching(/\/users\/ghopper$/) }],
    });
  },
};
