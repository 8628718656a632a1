import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeUpstream, waitFor, type FakeAnswer, type SeenRequest } from '@dossier/testing';
import { SkippedCall, unguardedContext, type ProviderContext, type ProviderProgress } from '../provider';
import { PageBudget } from './site-check';
import { createUsernameProvider, USERNAME_MATCH_SCORE, usernameItemId, usernameProvider } from './username.provider';

const PROFILE = '<html><head><title>ghopper</title></head><body><h1>Grace Hopper</h1></body></html>';

let fake: FakeUpstream;
let dir: string;
let lists = 0;
/** What each site's path answers; unlisted paths 404. */
let routes: Record<string, FakeAnswer | ((req: SeenRequest) => FakeAnswer)> = {};

/** A route that answers 404 only when let through, one request at a time in arrival order, and counts how many it holds at once. */
class Gate {
  most = 0;
  readonly seen: SeenRequest[] = [];
  private held = 0;
  private readonly opens: (() => void)[] = [];

  readonly route = (req: SeenRequest): FakeAnswer => {
    this.seen.push(req);
    this.held++;
    this.most = Math.max(this.most, this.held);
    const after = new Promise<void>((open) => this.opens.push(open)).then(() => void this.held--);
    return { status: 404, after };
  };

  /**
   * Lets `count` requests through, each once it has come — none before `together` have come at once (so a
   * slow machine, whose second request is still on its way when the first would be let through, still
   * shows the most that may be held together).
   */
  async letThrough(count: number, together = 1): Promise<void> {
    await waitFor(
      () => Promise.resolve(this.held),
      (n) => n >= together,
      { timeoutMs: 5000, what: `${together} requests held together` },
    );
    for (let released = 0; released < count; released++) {
      await waitFor(
        () => Promise.resolve(this.opens.length),
        (n) => n > released,
        { timeoutMs: 5000, what: `request ${released + 1}` },
      );
      this.opens[released]!();
    }
  }
}

beforeAll(async () => {
  fake = await FakeUpstream.start();
  fake.reply((req) => {
    const route = routes[req.url.split('/')[1] ?? ''];
    return typeof route === 'function' ? route(req) : (route ?? { status: 404, body: 'Not Found' });
  });
  dir = mkdtempSync(join(tmpdir(), 'dossier-username-'));
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  routes = {};
});

/** A list file of sites on the fake, each at `/<path>/{}`; its settings. */
function sitesAt(
  sites: Record<string, { path: string } & Record<string, unknown>>,
  extra: Record<string, string> = {},
) {
  const file = join(dir, `sites-${++lists}.json`);
  const entries = Object.entries(sites).map(([name, { path, ...rule }]) => [
    name,
    { url: `${fake.url}/${path}/{}`, urlMain: `${fake.url}/`, errorType: 'status_code', ...rule },
  ]);
  writeFileSync(file, JSON.stringify(Object.fromEntries(entries)));
  return { USERNAME_SITES_FILE: file, ...extra };
}

const lookup = (username: string, ctx: ProviderContext) => usernameProvider.lookup('person', { username }, ctx);
const within = (settings: Record<string, string>) => unguardedContext(AbortSignal.timeout(10_000), settings);

describe('username presence', () => {
  it('reports each site it checks as site:<Name>, counts the sites whose regexCheck refuses the handle in one skipped report, and puts the profiles found on one item', async () => {
    routes = {
      hub: { status: 200, body: PROFILE },
      lab: { status: 200, body: PROFILE },
      board: { status: 200, body: '<p>No such member</p>' },
      digits: { status: 200, body: PROFILE },
      cloud: { status: 403, body: '<title>Just a moment...</title>' },
    };
    const settings = sitesAt({
      GitHub: { path: 'hub' },
      Board: { path: 'board', errorType: 'message', errorMsg: 'No such member' },
      Numbers: { path: 'digits', regexCheck: '^[0-9]+$' },
      Cloudy: { path: 'cloud' },
      Gone: { path: 'gone' },
      GitLab: { path: 'lab' },
    });
    const answer = await lookup('@ghopper ', within(settings));

    expect(answer.reports).toEqual([
      { provider: 'site:GitHub', outcome: 'found', took_ms: expect.any(Number) },
      { provider: 'site:Board', outcome: 'not_found', took_ms: expect.any(Number) },
      {
        provider: 'site:Cloudy',
        outcome: 'blocked',
        took_ms: expect.any(Number),
        detail: 'site:Cloudy: a bot challenge or captcha page (403)',
      },
      { provider: 'site:Gone', outcome: 'not_found', took_ms: expect.any(Number) },
      { provider: 'site:GitLab', outcome: 'found', took_ms: expect.any(Number) },
      {
        provider: 'username',
        outcome: 'skipped',
        took_ms: 0,
        detail: '1 of 6 sites not checked (5 checked): their regexCheck or address refuses this username (Numbers)',
      },
    ]);
    expect(answer.outcome).toBe('found');
    // The item's full shape is the result contract's (providers.contract.spec.ts checks it).
    expect(answer.items).toEqual([
      expect.objectContaining({
        id: usernameItemId('ghopper'),
        full_name: null,
        usernames: ['ghopper'],
        accounts: [
          { service: 'GitHub', username: 'ghopper', url: `${fake.url}/hub/ghopper` },
          { service: 'GitLab', username: 'ghopper', url: `${fake.url}/lab/ghopper` },
        ],
        match_score: USERNAME_MATCH_SCORE,
        matched_on: ['username'],
        sources: ['site:GitHub', 'site:GitLab'],
      }),
    ]);
    expect(usernameItemId('GHopper')).toBe(answer.items[0]!.id);
    expect(usernameItemId('ghopper2')).not.toBe(answer.items[0]!.id);
    expect(fake.requests.some((r) => r.url.startsWith('/digits/'))).toBe(false);
  });

  it('drops a leading @ and the space after it: "@ ghopper" is checked and reported as ghopper', async () => {
    routes = { hub: { status: 200, body: PROFILE } };
    const before = fake.requests.length;
    const answer = await lookup('@ ghopper', within(sitesAt({ GitHub: { path: 'hub' } })));
    expect(fake.requests.slice(before).map((r) => r.url)).toEqual(['/hub/ghopper']);
    expect(answer.items[0]).toMatchObject({
      id: usernameItemId('ghopper'),
      usernames: ['ghopper'],
      accounts: [{ service: 'GitHub', username: 'ghopper', url: `${fake.url}/hub/ghopper` }],
    });
    expect(usernameProvider.appliesTo!({ username: '@\t' })).toBe(false);
  });

  it('does not check a site that puts the handle into its host name for www or a dotted handle: counted as skipped', async () => {
    routes = { hub: { status: 200, body: PROFILE } };
    const { port } = new URL(fake.url);
    const settings = sitesAt({
      GitHub: { path: 'hub' },
      tumblr: { path: '', url: `http://{}.localhost:${port}/`, urlMain: `http://localhost:${port}/` },
    });
    for (const name of ['www', 'ghopper.blog']) {
      const answer = await lookup(name, within(settings));
      expect([name, answer.reports]).toEqual([
        name,
        [
          { provider: 'site:GitHub', outcome: 'found', took_ms: expect.any(Number) },
          {
            provider: 'username',
            outcome: 'skipped',
            took_ms: 0,
            detail: '1 of 2 sites not checked (1 checked): their regexCheck or address refuses this username (tumblr)',
          },
        ],
      ]);
    }
    const answer = await lookup('www', within(sitesAt({ tumblr: { path: '', url: `http://{}.localhost:${port}/` } })));
    expect(answer.reports).toEqual([
      {
        provider: 'username',
        outcome: 'skipped',
        took_ms: 0,
        detail: 'no configured site accepts this username (each refuses it by its regexCheck or its address)',
      },
    ]);
  });

  it("checks a handle outside ASCII where the site's regexCheck takes it as Python does (\\w is any script's letter)", async () => {
    routes = { spy: { status: 200, body: PROFILE } };
    const settings = sitesAt({
      DigitalSpy: { path: 'spy', regexCheck: '^\\w{3,20}$' },
      GitHub: { path: 'hub', regexCheck: '^[a-zA-Z0-9](?:[a-zA-Z0-9]|-(?=[a-zA-Z0-9])){0,38}$' },
    });
    const before = fake.requests.length;
    const answer = await lookup('Дмитрий', within(settings));
    expect(answer.reports).toEqual([
      { provider: 'site:DigitalSpy', outcome: 'found', took_ms: expect.any(Number) },
      {
        provider: 'username',
        outcome: 'skipped',
        took_ms: 0,
        detail: '1 of 2 sites not checked (1 checked): their regexCheck or address refuses this username (GitHub)',
      },
    ]);
    expect(fake.requests.slice(before).map((r) => decodeURIComponent(r.url))).toEqual(['/spy/Дмитрий']);
  });

  it('says not_found with no item when every site says so', async () => {
    const answer = await lookup('nobody', within(sitesAt({ A: { path: 'a' }, B: { path: 'b' } })));
    expect(answer).toMatchObject({ outcome: 'not_found', items: [] });
    expect(answer.reports!.map((r) => r.outcome)).toEqual(['not_found', 'not_found']);
  });

  it('never calls a page found whose not-found sign could lie past the 2 MiB it reads: unknown, saying so', async () => {
    const filler = `<div>${'x'.repeat(1022)}</div>\n`.repeat(3 * 1024); // 3 MiB of a page
    routes = {
      late: { status: 200, body: `<html><body>${filler}<p>No such member</p></body></html>` },
      early: { status: 200, body: `<html><body><p>No such member</p>${filler}</body></html>` },
      huge: { status: 200, body: `${PROFILE}<!--${filler}-->` },
    };
    const settings = sitesAt({
      Late: { path: 'late', errorType: 'message', errorMsg: 'No such member' },
      Early: { path: 'early', errorType: 'message', errorMsg: 'No such member' },
      Huge: { path: 'huge' },
    });
    const answer = await lookup('ghopper', within(settings));
    expect(answer.reports).toEqual([
      {
        provider: 'site:Late',
        outcome: 'unknown',
        took_ms: expect.any(Number),
        detail: "site:Late: a page over 2 MiB, without the site's not-found sign in the part read",
      },
      { provider: 'site:Early', outcome: 'not_found', took_ms: expect.any(Number) },
      // A status-code site's answer is its status: the size of the page does not matter.
      { provider: 'site:Huge', outcome: 'found', took_ms: expect.any(Number) },
    ]);
    expect(answer.items[0]!.accounts.map((a) => a.service)).toEqual(['Huge']);
  });

  it("holds at most the process's page budget of page bytes, every check together, and the answers of pages within it unchanged", async () => {
    const pages = new PageBudget(512 * 1024);
    const provider = createUsernameProvider(60_000, pages);
    const big = `<html><body>${'x'.repeat(1024 * 1024)}</body></html>`;
    // Pages that fit: the same answers as ever, and nothing held after.
    routes = {
      hub: { status: 200, body: PROFILE },
      gone: { status: 404, body: 'Not Found' },
      msg: { status: 200, body: '<p>No such member</p>' },
    };
    const fits = await provider.lookup(
      'person',
      { username: 'ghopper' },
      within(
        sitesAt({
          Hub: { path: 'hub' },
          Gone: { path: 'gone' },
          Msg: { path: 'msg', errorType: 'message', errorMsg: 'No such member' },
        }),
      ),
    );
    expect(fits.reports?.map((r) => [r.provider, r.outcome])).toEqual([
      ['site:Hub', 'found'],
      ['site:Gone', 'not_found'],
      ['site:Msg', 'not_found'],
    ]);
    // Eight sites whose rule reads the whole page, each 1 MiB: 8 MiB read without the budget.
    routes = { big: { status: 200, body: big } };
    const sites = Object.fromEntries(
      Array.from({ length: 8 }, (_, i) => [
        `Big${i}`,
        { path: 'big', errorType: 'message', errorMsg: 'No such member' },
      ]),
    );
    const answer = await provider.lookup('person', { username: 'ghopper' }, within(sitesAt(sites)));
    expect(pages.peak).toBeLessThanOrEqual(512 * 1024);
    expect(pages.held).toBe(0);
    expect(answer.items).toEqual([]);
    expect(answer.reports).toHaveLength(8);
    for (const report of answer.reports ?? []) {
      expect(report).toEqual({
        provider: report.provider,
        outcome: 'unknown',
        took_ms: expect.any(Number),
        detail: expect.stringMatching(/only part of the page read|a page over 2 MiB/),
      });
    }
  });

  it('reads the block and challenge pages of the usual WAFs and bot filters as blocked, even with 200, never found', async () => {
    const pages: Record<string, string> = {
      Cloudflare:
        '<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title></head><body><noscript>Enable JavaScript and cookies to continue</noscript><script>window._cf_chl_opt={cvId: "3"};</script></body></html>',
      Imperva:
        '<html style="height:100%"><head><META NAME="ROBOTS" CONTENT="NOINDEX, NOFOLLOW"></head><body style="margin:0px;height:100%"><iframe id="main-iframe" src="/_Incapsula_Resource?SWUDNSAI=31&xinfo=8-1234-0%20NNNN&incident_id=1234-5678&edet=15" frameborder=0 width="100%" height="100%">Request unsuccessful. Incapsula incident ID: 1234000560078-9012</iframe></body></html>',
      Akamai:
        '<HTML><HEAD>\n<TITLE>Access Denied</TITLE>\n</HEAD><BODY>\n<H1>Access Denied</H1>\n \nYou don\'t have permission to access "http&#58;&#47;&#47;example&#46;com&#47;u&#47;ghopper" on this server.<P>\nReference&#32;&#35;18&#46;5a3c1002&#46;1700000000&#46;1a2b3c4d\n</BODY>\n</HTML>',
      DataDome:
        "<html lang=\"en\"><head><title>example.com</title></head><body style=\"margin:0\"><p id=\"cmsg\">Please enable JS and disable any ad blocker</p><script data-cfasync=\"false\">var dd={'rt':'c','cid':'AHrlqAAAAAMA','hsh':'0123','t':'fe','host':'geo.captcha-delivery.com'}</script><script data-cfasync=\"false\" src=\"https://ct.captcha-delivery.com/c.js\"></script></body></html>",
      PerimeterX:
        '<!DOCTYPE html><html lang="en"><head><title>Access to this page has been denied</title><script>window._pxAppId = \'PXabc123\';</script></head><body><div class="px-captcha-container"><div class="px-captcha-message">Press &amp; Hold to confirm you are a human (and not a bot).</div><div id="px-captcha"></div></div></body></html>',
      F5: "<html><head><title>Request Rejected</title></head><body>The requested URL was rejected. Please consult with your administrator.<br><br>Your support ID is: 11793863007412387618<br><br><a href='javascript:history.back();'>[Go Back]</a></body></html>",
    };
    routes = Object.fromEntries(Object.entries(pages).map(([name, body]) => [name, { status: 200, body }]));
    // Imperva puts its bot-detection script into the pages it lets through, as Cloudflare does.
    routes['hub'] = {
      status: 200,
      body: PROFILE.replace(
        '</body>',
        '<script src="/_Incapsula_Resource?SWJIYLWA=719d34d31c8e3a6e6fffd425f7e032f3"></script></body>',
      ),
    };
    const settings = sitesAt({
      ...Object.fromEntries(Object.keys(pages).map((name) => [name, { path: name }])),
      GitHub: { path: 'hub' },
    });
    const answer = await lookup('ghopper', within(settings));
    expect(answer.reports).toEqual([
      ...Object.keys(pages).map((name) => ({
        provider: `site:${name}`,
        outcome: 'blocked',
        took_ms: expect.any(Number),
        detail: `site:${name}: a bot challenge or captcha page (200)`,
      })),
      { provider: 'site:GitHub', outcome: 'found', took_ms: expect.any(Number) },
    ]);
    expect(answer.items[0]!.accounts.map((a) => a.service)).toEqual(['GitHub']);
  });

  it('reads a page in the charset it declares (header or <meta>), so that a not-found sign written outside ASCII is seen', async () => {
    // Windows-1251 puts А–я (U+0410–U+044F) at 0xC0–0xFF; ASCII stays as it is.
    const cp1251 = (text: string) =>
      Buffer.from([...text].map((c) => (c >= 'А' && c <= 'я' ? c.codePointAt(0)! - 0x350 : c.charCodeAt(0))));
    const missing = 'Пользователь не зарегистрирован';
    routes = {
      forum: {
        status: 200,
        headers: { 'content-type': 'text/html; charset=windows-1251' },
        body: cp1251(`<html><body><div class="standard_error">${missing}</div></body></html>`),
      },
      meta: {
        status: 200,
        headers: { 'content-type': 'text/html' },
        body: Buffer.from(
          '<html><head><meta charset="iso-8859-1"><title>AniWorld</title></head><body>Dieses Profil ist nicht verfügbar</body></html>',
          'latin1',
        ),
      },
      member: {
        status: 200,
        headers: { 'content-type': 'text/html; charset=windows-1251' },
        body: cp1251('<html><body><h1>Профиль: ghopper</h1></body></html>'),
      },
    };
    const settings = sitesAt({
      Forum: { path: 'forum', errorType: 'message', errorMsg: missing },
      AniWorld: { path: 'meta', errorType: 'message', errorMsg: 'Dieses Profil ist nicht verfügbar' },
      Member: { path: 'member', errorType: 'message', errorMsg: missing },
    });
    const answer = await lookup('ghopper', within(settings));
    expect(answer.reports).toEqual([
      { provider: 'site:Forum', outcome: 'not_found', took_ms: expect.any(Number) },
      { provider: 'site:AniWorld', outcome: 'not_found', took_ms: expect.any(Number) },
      { provider: 'site:Member', outcome: 'found', took_ms: expect.any(Number) },
    ]);
  });

  it("reads a page with a byte-order mark in the mark's encoding, whatever charset it declares, so that its not-found sign is seen", async () => {
    // A UTF-8 page with a BOM served as ISO-8859-1 (an old Apache default): a browser reads it as UTF-8 (the
    // WHATWG Encoding standard's decode). Read as ISO-8859-1, the message was garbled and never matched: found.
    const missing = 'Пользователь не найден';
    const utf8 = (text: string) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    routes = {
      apache: {
        status: 200,
        headers: { 'content-type': 'text/html; charset=ISO-8859-1' },
        body: utf8(`<html><body><p>${missing}</p></body></html>`),
      },
      member: {
        status: 200,
        headers: { 'content-type': 'text/html; charset=ISO-8859-1' },
        body: utf8('<html><body><h1>Профиль: ghopper</h1></body></html>'),
      },
    };
    const settings = sitesAt({
      Apache: { path: 'apache', errorType: 'message', errorMsg: missing },
      Member: { path: 'member', errorType: 'message', errorMsg: missing },
    });
    const answer = await lookup('ghopper', within(settings));
    expect(answer.reports).toEqual([
      { provider: 'site:Apache', outcome: 'not_found', took_ms: expect.any(Number) },
      { provider: 'site:Member', outcome: 'found', took_ms: expect.any(Number) },
    ]);
  });

  it('ends a site at USERNAME_TIMEOUT_MS and reports it timeout, the other sites answered', async () => {
    routes = { slow: { hang: true }, hub: { status: 200, body: PROFILE } };
    const settings = sitesAt({ Slow: { path: 'slow' }, GitHub: { path: 'hub' } }, { USERNAME_TIMEOUT_MS: '100' });
    const answer = await lookup('ghopper', within(settings));
    expect(answer.reports).toEqual([
      {
        provider: 'site:Slow',
        outcome: 'timeout',
        took_ms: expect.any(Number),
        detail: 'site:Slow: no answer before the deadline',
      },
      { provider: 'site:GitHub', outcome: 'found', took_ms: expect.any(Number) },
    ]);
  });

  it('keeps USERNAME_TIMEOUT_MS per site across retries: a site that keeps failing slowly is timeout, not retried past it', async () => {
    let calls = 0;
    routes = {
      flaky: () => {
        calls += 1;
        return { status: 503, body: 'busy', delayMs: 150 };
      },
    };
    const settings = sitesAt({ Flaky: { path: 'flaky' } }, { USERNAME_TIMEOUT_MS: '250' });
    // Retries as the fan-out's guards make them: up to 3 attempts on an error.
    const base = within(settings);
    const retrying: ProviderContext = {
      ...base,
      upstream: async (_upstream, call) => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await call(base.signal);
          } catch (error) {
            if (attempt === 3) throw error;
          }
        }
      },
    };
    const answer = await lookup('ghopper', retrying);
    expect(answer.reports).toEqual([expect.objectContaining({ provider: 'site:Flaky', outcome: 'timeout' })]);
    expect(calls).toBeLessThanOrEqual(2);
  });

  it("keeps what it found when the check's deadline comes: the site running and those not reached are timeout", async () => {
    routes = { hub: { status: 200, body: PROFILE }, slow: { hang: true } };
    const settings = sitesAt(
      { GitHub: { path: 'hub' }, Slow: { path: 'slow' }, Later: { path: 'later' } },
      { USERNAME_CONCURRENCY: '1' },
    );
    const deadline = new AbortController();
    const before = fake.requests.length;
    const pending = lookup('ghopper', unguardedContext(deadline.signal, settings));
    await waitFor(
      () => Promise.resolve(fake.requests.slice(before).filter((r) => r.url === '/slow/ghopper').length),
      (n) => n === 1,
      { timeoutMs: 5000, what: 'the slow site asked' },
    );
    deadline.abort();
    const answer = await pending;
    expect(answer.reports).toEqual([
      { provider: 'site:GitHub', outcome: 'found', took_ms: expect.any(Number) },
      {
        provider: 'site:Slow',
        outcome: 'timeout',
        took_ms: expect.any(Number),
        detail: 'site:Slow: no answer before the deadline',
      },
      {
        provider: 'site:Later',
        outcome: 'timeout',
        took_ms: 0,
        detail: "site:Later: not reached before the check's deadline",
      },
    ]);
    expect(answer.items[0]!.accounts.map((a) => a.service)).toEqual(['GitHub']);
  });

  it("ends its checks before the call's deadline (deadlineAt, any fraction of a ms): the sites still running timeout, what was found kept", async () => {
    routes = { hub: { status: 200, body: PROFILE }, slow: { hang: true } };
    // A site's own timeout far beyond the test's: the answer can only come from the call's deadline.
    const settings = sitesAt({ GitHub: { path: 'hub' }, Slow: { path: 'slow' } }, { USERNAME_TIMEOUT_MS: '60000' });
    const ctx = { ...unguardedContext(new AbortController().signal, settings), deadlineAt: Date.now() + 1000.5 };
    const answer = await lookup('ghopper', ctx);
    expect(answer.reports).toEqual([
      { provider: 'site:GitHub', outcome: 'found', took_ms: expect.any(Number) },
      {
        provider: 'site:Slow',
        outcome: 'timeout',
        took_ms: expect.any(Number),
        detail: 'site:Slow: no answer before the deadline',
      },
    ]);
    expect(answer.items[0]!.accounts.map((a) => a.service)).toEqual(['GitHub']);
  });

  it('checks the sites a search chooses (sites, tags, top) most popular first, reports them in the list order, and says which names it lacks', async () => {
    // Ranks and tags by name from site-meta: YouTube 3, GitHub 10 (coding), Chess 3078 (gaming); Zeta none of its own.
    const settings = sitesAt(
      {
        Zeta: { path: 'zeta', tags: ['gaming'] },
        Chess: { path: 'chess' },
        GitHub: { path: 'hub' },
        YouTube: { path: 'tube' },
      },
      { USERNAME_CONCURRENCY: '1' },
    );
    const search = async (selection: Record<string, unknown>) => {
      const before = fake.requests.length;
      const answer = await usernameProvider.lookup('person', { username: 'ghopper', ...selection }, within(settings));
      const asked = fake.requests.slice(before).map((r) => r.url.split('/')[1]);
      return { asked, reports: answer.reports!.map((r) => [r.provider, r.outcome]) };
    };

    expect(await search({})).toEqual({
      asked: ['tube', 'hub', 'chess', 'zeta'],
      reports: ['Zeta', 'Chess', 'GitHub', 'YouTube'].map((name) => [`site:${name}`, 'not_found']),
    });
    expect((await search({ tags: ['gaming'] })).reports).toEqual([
      ['site:Zeta', 'not_found'],
      ['site:Chess', 'not_found'],
    ]);
    expect(await search({ top: 2 })).toEqual({
      asked: ['tube', 'hub'],
      reports: [
        ['site:GitHub', 'not_found'],
        ['site:YouTube', 'not_found'],
      ],
    });
    const named = await usernameProvider.lookup(
      'person',
      { username: 'ghopper', sites: ['github', 'Myspace'] },
      within(settings),
    );
    expect(named.reports).toEqual([
      { provider: 'site:GitHub', outcome: 'not_found', took_ms: expect.any(Number) },
      {
        provider: 'site:Myspace',
        outcome: 'skipped',
        took_ms: 0,
        detail: 'site:Myspace: no site of that name is checked here',
      },
    ]);
    expect(await search({ sites: ['Chess'], tags: ['coding'] })).toEqual({
      asked: [],
      reports: [['username', 'skipped']],
    });
  });

  it('tells the fan-out, as each site answers, what it knows so far: the profiles found, the reports, the sites still to answer', async () => {
    const gate = new Gate();
    routes = { hub: { status: 200, body: PROFILE }, gated: gate.route };
    const settings = sitesAt({ Slow: { path: 'gated' }, GitHub: { path: 'hub' } });
    const seen: ProviderProgress[] = [];
    const ctx: ProviderContext = { ...within(settings), progress: (snapshot) => void seen.push(snapshot()) };
    const pending = lookup('ghopper', ctx);
    await waitFor(
      () => Promise.resolve(seen.length),
      (n) => n === 1,
      { timeoutMs: 5000, what: "GitHub's answer told" },
    );
    expect(seen[0]).toEqual({
      items: [expect.objectContaining({ usernames: ['ghopper'], sources: ['site:GitHub'] })],
      reports: [{ provider: 'site:GitHub', outcome: 'found', took_ms: expect.any(Number) }],
      pending: 1,
    });
    await gate.letThrough(1);
    const answer = await pending;
    expect(seen).toHaveLength(2);
    expect(seen[1]).toEqual({ items: answer.items, reports: answer.reports, pending: 0 });
  });

  it('checks at most USERNAME_CONCURRENCY sites at once', async () => {
    const gate = new Gate();
    routes = { gated: gate.route };
    const names = ['A', 'B', 'C', 'D', 'E'];
    const settings = sitesAt(
      Object.fromEntries(names.map((n) => [n, { path: 'gated', url: `${fake.url}/gated/${n}/{}` }])),
      { USERNAME_CONCURRENCY: '2' },
    );
    const pending = lookup('ghopper', within(settings));
    await gate.letThrough(names.length, 2);
    const answer = await pending;
    expect(answer.reports!.map((r) => r.outcome)).toEqual(names.map(() => 'not_found'));
    expect(gate.most).toBe(2);
  });

  it('holds the site checks in flight in the process, every lookup together, to USERNAME_MAX_CONNECTIONS, each connection closed after its answer', async () => {
    const gate = new Gate();
    routes = { held: gate.route };
    const names = ['A', 'B', 'C'];
    const settings = sitesAt(
      Object.fromEntries(names.map((n) => [n, { path: 'held', url: `${fake.url}/held/${n}/{}` }])),
      { USERNAME_CONCURRENCY: '3', USERNAME_MAX_CONNECTIONS: '2' },
    );
    // Two lookups at once, each free to check its three sites together: six checks, two at a time.
    const pending = Promise.all(['ghopper', 'alovelace'].map((name) => lookup(name, within(settings))));
    await gate.letThrough(6, 2);
    const answers = await pending;
    expect(answers.flatMap((a) => a.reports!.map((r) => r.outcome))).toEqual(Array(6).fill('not_found'));
    expect(gate.most).toBe(2);
    expect(gate.seen.map((r) => r.headers.connection)).toEqual(Array(6).fill('close'));
    expect(() => usernameProvider.validateSettings!({ USERNAME_MAX_CONNECTIONS: '0' })).toThrow(
      'USERNAME_MAX_CONNECTIONS: expected a whole number from 1 to 10000, got "0"',
    );
  });

  it('asks one site host USERNAME_MAX_PER_HOST at a time, every lookup together, so parallel lookups do not each hit it at once', async () => {
    const run = async (settings: Record<string, string>, handles: string[], expected: number) => {
      const gate = new Gate();
      routes = { busy: gate.route };
      const pending = Promise.all(handles.map((handle) => lookup(handle, within(settings))));
      await gate.letThrough(handles.length, expected);
      const answers = await pending;
      expect(answers.map((a) => a.outcome)).toEqual(handles.map(() => 'not_found'));
      expect(gate.most).toBe(expected);
    };
    const handles = ['ghopper', 'alovelace', 'aturing', 'kjohnson', 'mhamilton', 'dritchie'];
    // Six lookups of the same site at once, plenty of connections: two requests at the site at a time.
    await run(sitesAt({ Busy: { path: 'busy' } }, { USERNAME_MAX_PER_HOST: '2' }), handles, 2);
    // The default lets a lookup's two sites on one host (Genius's artists and users) go together, and no more.
    await run(sitesAt({ Busy: { path: 'busy' } }), handles, 4);
    expect(() => usernameProvider.validateSettings!({ USERNAME_MAX_PER_HOST: '0' })).toThrow(
      'USERNAME_MAX_PER_HOST: expected a whole number from 1 to 1000, got "0"',
    );
  });

  it("reports a site whose circuit is open skipped, with the guards' reason", async () => {
    routes = { hub: { status: 200, body: PROFILE } };
    const settings = sitesAt({ GitHub: { path: 'hub' }, Broken: { path: 'broken' } });
    const ctx: ProviderContext = {
      ...within(settings),
      upstream: (upstream, call) =>
        upstream.id === 'site:Broken'
          ? Promise.reject(new SkippedCall('site:Broken: circuit open after 5 consecutive failures'))
          : call(AbortSignal.timeout(5000)),
    };
    const answer = await lookup('ghopper', ctx);
    expect(answer.reports![1]).toEqual({
      provider: 'site:Broken',
      outcome: 'skipped',
      took_ms: 0,
      detail: 'site:Broken: circuit open after 5 consecutive failures',
    });
  });

  it('says it could not check when no site accepts the handle', async () => {
    const settings = sitesAt({ Numbers: { path: 'n', regexCheck: '^[0-9]+$' } });
    const answer = await lookup('ghopper', within(settings));
    expect(answer).toEqual({
      outcome: 'unknown',
      items: [],
      reports: [
        {
          provider: 'username',
          outcome: 'skipped',
          took_ms: 0,
          detail: 'no configured site accepts this username (each refuses it by its regexCheck or its address)',
        },
      ],
    });
  });

  it('applies to a person search with a username, and is skipped with no sites or a broken list', () => {
    expect(usernameProvider.appliesTo!({ username: 'ghopper' })).toBe(true);
    expect(usernameProvider.appliesTo!({ username: ' @ ' })).toBe(false);
    expect(usernameProvider.appliesTo!({ name: 'Grace Hopper' })).toBe(false);

    const empty = join(dir, 'empty.json');
    writeFileSync(empty, '{}');
    expect(usernameProvider.isConfigured({ USERNAME_SITES_FILE: empty })).toBe(
      'no sites to check (USERNAME_SITES_FILE, USERNAME_SITES, USERNAME_INCLUDE_NSFW)',
    );
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify({ GitHub: { url: 'https://github.com/{}' } }));
    expect(usernameProvider.isConfigured({ USERNAME_SITES_FILE: broken })).toMatch(
      /^USERNAME_SITES_FILE: .*broken\.json: invalid site list:\n {4}site "GitHub": urlMain: /,
    );
    expect(() => usernameProvider.validateSettings!({ USERNAME_SITES_FILE: broken })).toThrow(/site "GitHub"/);
    expect(() => usernameProvider.validateSettings!({})).not.toThrow();
    expect(usernameProvider.isConfigured({})).toBe(true);
  });
});
