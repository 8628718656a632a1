import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import {
  DEFAULT_SITES_FILE,
  loadSiteList,
  MAIGRET_SITES_FILE,
  SHERLOCK_SITES_FILE,
  siteListReport,
  usernameSettings,
} from './site-list';

let dir: string;
let files = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dossier-sites-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A list file with this content (an object is written as JSON): a new file each time. */
function listFile(content: unknown): string {
  const file = join(dir, `sites-${++files}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

const site = (over: Record<string, unknown> = {}) => ({
  url: 'https://example.com/u/{}',
  urlMain: 'https://example.com/',
  errorType: 'status_code',
  username_claimed: 'blue',
  ...over,
});

describe("Sherlock's list, shipped in the repository", () => {
  it('loads every site, its MIT licence beside it', () => {
    const sites = loadSiteList(SHERLOCK_SITES_FILE);
    expect(sites).toHaveLength(481);
    expect(sites.filter((s) => s.nsfw)).toHaveLength(19);
    expect(sites.find((s) => s.name === 'GitHub')).toMatchObject({
      url: 'https://www.github.com/{}',
      errorTypes: ['status_code'],
      regexCheck: expect.any(RegExp),
    });
    expect(readFileSync(join(SHERLOCK_SITES_FILE, '../LICENSE'), 'utf8')).toMatch(
      /MIT License\s+Copyright \(c\) 2019 Sherlock Project/,
    );
  });

  it('is chosen by USERNAME_SITES_FILE, without NSFW sites unless USERNAME_INCLUDE_NSFW=true', () => {
    const safe = usernameSettings({ USERNAME_SITES_FILE: SHERLOCK_SITES_FILE });
    expect(safe.sites).toHaveLength(481 - 19);
    expect(safe.sites.some((s) => s.nsfw)).toBe(false);
    expect(
      usernameSettings({ USERNAME_SITES_FILE: SHERLOCK_SITES_FILE, USERNAME_INCLUDE_NSFW: 'true' }).sites,
    ).toHaveLength(481);
  });

  it("gives its sites Maigret's popularity ranks and tags (site-meta), which Sherlock's list does not have", () => {
    const sites = loadSiteList(SHERLOCK_SITES_FILE);
    const byName = new Map(sites.map((s) => [s.name, s]));
    expect(byName.get('GitHub')).toMatchObject({ rank: 10, tags: expect.arrayContaining(['coding']) });
    expect(byName.get('YouTube')).toMatchObject({ rank: 3 });
    expect(byName.get('VK')?.tags).toEqual(['ru', 'social']);
    // A site Maigret does not have: neither ranked nor tagged.
    expect(byName.get('SpaceHey')).toMatchObject({ rank: null, tags: [] });
    expect(sites.filter((s) => s.rank !== null).length).toBeGreaterThan(300);
  });

  it("reads Python's {,n} quantifier as {0,n}, as Sherlock's patterns mean it", () => {
    const hackenproof = loadSiteList(SHERLOCK_SITES_FILE).find((s) => s.name === 'HackenProof (Hackers)');
    expect(hackenproof?.regexCheck?.test('ghopper')).toBe(true);
    expect(hackenproof?.regexCheck?.test('x'.repeat(35))).toBe(false);
  });
});

describe("Maigret's database, shipped in the repository: the default list", () => {
  it('is the file Maigret publishes (its sha256), its MIT licence beside it', () => {
    const bytes = readFileSync(MAIGRET_SITES_FILE);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(
      '9083490ef224696e6b0f72997ee94d96b2a0d868d6aff7a67c910c8e3f024d56',
    );
    expect(readFileSync(join(MAIGRET_SITES_FILE, '../LICENSE'), 'utf8')).toMatch(
      /MIT License\s+Copyright \(c\) 2020-2026 Soxoj/,
    );
  });

  it('takes 2,504 of its 3,236 sites and counts every other one by why (the figures of ADR 0060)', () => {
    const report = siteListReport(MAIGRET_SITES_FILE);
    const counts = Object.fromEntries(Object.entries(report.refused).map(([why, names]) => [why, names.length]));
    expect({ ...report, refused: counts }).toEqual({
      file: MAIGRET_SITES_FILE,
      format: 'maigret',
      inFile: 3236,
      accepted: 2504,
      refused: {
        disabled: 678,
        'not a username': 25,
        'not on the web': 12,
        'similar names': 11,
        'needs activation': 6,
      },
    });
    expect(report.refused['needs activation']).toEqual([
      'Twitter',
      'Vimeo',
      'Weibo',
      'WikimapiaSearch',
      'OnlyFans',
      'ProtonMail',
    ]);
  });

  it('is the default: its 500 most popular sites (USERNAME_TOP), none of its porn and erotic ones unless USERNAME_INCLUDE_NSFW=true', () => {
    const safe = usernameSettings({});
    expect(safe).toMatchObject({
      file: DEFAULT_SITES_FILE,
      timeoutMs: 8000,
      concurrency: 100,
      maxConnections: 256,
      top: 500,
    });
    expect(DEFAULT_SITES_FILE).toBe(MAIGRET_SITES_FILE);
    expect(safe.sites).toHaveLength(500);
    const ranks = safe.sites.map((s) => s.rank ?? Infinity);
    const all = usernameSettings({ USERNAME_TOP: 'all' }).sites;
    expect(all).toHaveLength(2504 - 32);
    // The 500 best ranked, in the file's order.
    expect(Math.max(...ranks)).toBeLessThan(
      Math.min(...all.filter((s) => !safe.sites.includes(s)).map((s) => s.rank ?? Infinity)),
    );
    expect(all.filter((s) => safe.sites.includes(s))).toEqual(safe.sites);
    expect(all.some((s) => s.tags.includes('porn') || s.tags.includes('erotic'))).toBe(false);
    expect(usernameSettings({ USERNAME_INCLUDE_NSFW: 'true', USERNAME_TOP: 'ALL' }).sites).toHaveLength(2504);
    expect(usernameSettings({ USERNAME_TOP: '50' }).sites).toHaveLength(50);
  });

  it('keeps every site USERNAME_SITES names (no USERNAME_TOP unless set), and refuses a USERNAME_TOP that is not a number or all', () => {
    const named = usernameSettings({ USERNAME_SITES: 'GitHub,Kwejk' });
    expect(named).toMatchObject({ top: null });
    expect(named.sites.map((s) => s.name)).toEqual(['GitHub', 'Kwejk']);
    expect(usernameSettings({ USERNAME_SITES: 'GitHub,Kwejk', USERNAME_TOP: '1' }).sites.map((s) => s.name)).toEqual([
      'GitHub',
    ]);
    for (const bad of ['0', 'top', '-5'])
      expect(() => usernameSettings({ USERNAME_TOP: bad })).toThrow(
        `USERNAME_TOP: expected a whole number from 1, or all, got "${bad}"`,
      );
  });

  it("gives each site its own rank and tags (categories and countries), and its engine's rules", () => {
    const byName = new Map(loadSiteList(MAIGRET_SITES_FILE).map((s) => [s.name, s]));
    expect(byName.get('GitHub')).toMatchObject({
      url: 'https://github.com/{}',
      urlProbe: 'https://api.github.com/users/{}',
      errorTypes: ['status_code'],
      rank: expect.any(Number),
      tags: expect.arrayContaining(['coding']),
    });
    const ru = [...byName.values()].filter((s) => s.tags.includes('ru'));
    expect(ru.length).toBeGreaterThan(900);
    // A XenForo forum: the engine's message rule, address and ignore403, on the forum's own urlMain.
    const xenforo = [...byName.values()].find((s) => s.presenceStrs.includes('memberHeader-content'))!;
    expect(xenforo).toMatchObject({ errorTypes: ['message'], ignore403: true });
    expect(xenforo.url).toMatch(/^https?:\/\/[^/]+(\/[^{]*)?\/members\/\?username=\{\}$/);
  });
});

describe('usernameSettings', () => {
  const file = () =>
    listFile({
      $schema: 'data.schema.json',
      GitHub: site(),
      GitLab: site({ url: 'https://gitlab.example/{}' }),
      Pornhub: site({ isNSFW: true }),
    });

  it('narrows the list to USERNAME_SITES, by name in any case, and still leaves NSFW sites out', () => {
    const f = file();
    expect(usernameSettings({ USERNAME_SITES_FILE: f }).sites.map((s) => s.name)).toEqual(['GitHub', 'GitLab']);
    expect(
      usernameSettings({ USERNAME_SITES_FILE: f, USERNAME_SITES: ' github , Pornhub' }).sites.map((s) => s.name),
    ).toEqual(['GitHub']);
    expect(
      usernameSettings({
        USERNAME_SITES_FILE: f,
        USERNAME_SITES: 'github,Pornhub',
        USERNAME_INCLUDE_NSFW: 'true',
      }).sites.map((s) => s.name),
    ).toEqual(['GitHub', 'Pornhub']);
  });

  it('refuses a site name the list does not have, and settings out of range, naming the variable', () => {
    const f = file();
    expect(() => usernameSettings({ USERNAME_SITES_FILE: f, USERNAME_SITES: 'GitHub,Myspace' })).toThrow(
      `USERNAME_SITES: no site named "Myspace" in ${f}`,
    );
    expect(() => usernameSettings({ USERNAME_INCLUDE_NSFW: 'yes' })).toThrow(
      'USERNAME_INCLUDE_NSFW: expected true or false, got "yes"',
    );
    expect(() => usernameSettings({ USERNAME_TIMEOUT_MS: '5s' })).toThrow(/^USERNAME_TIMEOUT_MS: expected a whole/);
    expect(() => usernameSettings({ USERNAME_CONCURRENCY: '0' })).toThrow(/^USERNAME_CONCURRENCY: expected a whole/);
    for (const bad of ['0x400', '1e3'])
      expect(() => usernameSettings({ USERNAME_TIMEOUT_MS: bad })).toThrow(/^USERNAME_TIMEOUT_MS: expected a whole/);
    expect(usernameSettings({ USERNAME_TIMEOUT_MS: '2500', USERNAME_CONCURRENCY: '4' })).toMatchObject({
      timeoutMs: 2500,
      concurrency: 4,
    });
  });

  it("gives another list's sites the shipped ranks and tags by name, and a site's own tags (Sherlock's) over them", () => {
    const f = listFile({
      github: site(),
      Chess: site({ tags: ['Gaming', 'gaming'] }),
      Homebrew: site({ tags: 'adult' }),
    });
    expect(
      usernameSettings({ USERNAME_SITES_FILE: f }).sites.map(({ name, rank, tags }) => ({ name, rank, tags })),
    ).toEqual([
      { name: 'github', rank: 10, tags: expect.arrayContaining(['coding']) },
      { name: 'Chess', rank: 3078, tags: ['gaming'] },
      { name: 'Homebrew', rank: null, tags: ['adult'] },
    ]);
  });

  it('reads a file once: a change to it is not seen by later lookups', () => {
    const f = file();
    expect(usernameSettings({ USERNAME_SITES_FILE: f }).sites).toHaveLength(2);
    writeFileSync(f, JSON.stringify({ Other: site() }));
    expect(usernameSettings({ USERNAME_SITES_FILE: f }).sites.map((s) => s.name)).toEqual(['GitHub', 'GitLab']);
  });
});

describe('a broken site list is an error that names the file, the site and the field', () => {
  it.each([
    ['a missing file', null, /^USERNAME_SITES_FILE: .*missing\.json: cannot read the site list \(ENOENT\)$/],
    ['not JSON', '{"GitHub": {', /the site list is not JSON/],
    ['not an object', '["GitHub"]', /the site list must be an object of site name → definition/],
    ['a site without its url', { GitHub: site({ url: undefined }) }, /site "GitHub": url: /],
    ['a relative url', { GitHub: site({ url: '/u/{}' }) }, /site "GitHub": url: must be an absolute http\(s\) URL/],
    ['an unknown error type', { GitHub: site({ errorType: 'html' }) }, /site "GitHub": errorType: /],
    [
      'a message rule without its errorMsg',
      { Reddit: site({ errorType: 'message' }) },
      /site "Reddit": errorMsg: is required when errorType is message/,
    ],
    [
      'a redirect rule without its errorUrl',
      { Codechef: site({ errorType: 'response_url' }) },
      /site "Codechef": errorUrl: is required when errorType is response_url/,
    ],
    [
      'a message rule asked with HEAD (an answer without a body never carries the message: every name found)',
      { Reddit: site({ errorType: ['status_code', 'message'], errorMsg: 'Not Found', request_method: 'HEAD' }) },
      /site "Reddit": request_method: HEAD has no body to look for errorMsg in \(errorType message\)/,
    ],
    ['a regexCheck that does not compile', { GitHub: site({ regexCheck: '^[a-z' }) }, /site "GitHub": regexCheck: /],
    ['a misspelt field', { GitHub: site({ errorMessage: 'Not Found' }) }, /site "GitHub": definition: .*errorMessage/],
  ])('%s', (_what, content, message) => {
    const f = content === null ? join(dir, 'missing.json') : listFile(content);
    expect(() => usernameSettings({ USERNAME_SITES_FILE: f })).toThrow(message);
    expect(() => usernameSettings({ USERNAME_SITES_FILE: f })).toThrow(
      new RegExp(`^USERNAME_SITES_FILE: ${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `),
    );
  });

  it('lists the first few problems of a list with many', () => {
    const broken = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`Site${i}`, site({ url: 'nope' })]));
    expect(() => usernameSettings({ USERNAME_SITES_FILE: listFile(broken) })).toThrow(
      /Site4": url: [^\n]*\n {4}… and 2 more$/,
    );
  });
});
