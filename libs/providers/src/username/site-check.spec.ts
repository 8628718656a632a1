import { resolverAt } from '@dossier/contracts';
import { FakeDns, FakeUpstream } from '@dossier/testing';
import { ProviderError, outcomeOfError } from '../provider';
import { decide, exchange, PageBudget, probeRequest, type SiteExchange } from './site-check';
import { SHERLOCK_SITES_FILE, loadSiteList, parseSiteList, type Site } from './site-list';

/** A site parsed from a Sherlock entry, as a list file would give it. */
function siteOf(entry: Record<string, unknown>, name = 'Example'): Site {
  return parseSiteList(
    { [name]: { url: 'https://example.com/u/{}', urlMain: 'https://example.com/', ...entry } },
    'spec',
  )[0]!;
}

const statusSite = siteOf({ errorType: 'status_code' });
const messageSite = siteOf({ errorType: 'message', errorMsg: ['No such user', 'Page not found'] });
const redirectSite = siteOf({ errorType: 'response_url', errorUrl: 'https://example.com/not-found?name={}' });

/** An answer from example.com for /u/ghopper, after the given redirects. */
function answer(status: number, text = '', over: Partial<SiteExchange> & { headers?: Headers } = {}): SiteExchange {
  return {
    requested: 'https://example.com/u/ghopper',
    redirects: [],
    url: over.redirects?.at(-1) ?? 'https://example.com/u/ghopper',
    status,
    headers: new Headers(),
    text,
    truncated: false,
    ...over,
  };
}

/** The outcome (and detail) of the decision: what it returns, or what its ProviderError maps onto. */
function verdict(site: Site, ex: SiteExchange): { outcome: string; detail?: string; retryAfterMs?: number } {
  try {
    return decide(site, 'ghopper', ex);
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    return {
      outcome: outcomeOfError(error.code),
      detail: error.message,
      ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
    };
  }
}

const PROFILE = '<html><head><title>ghopper · Example</title></head><body><h1>Grace Hopper</h1></body></html>';
const JUST_A_MOMENT =
  '<!DOCTYPE html><html><head><title>Just a moment...</title></head><body><div id="cf-chl-widget"></div></body></html>';

describe('the per-site decision', () => {
  it.each([
    { what: 'a 2xx profile page', site: statusSite, ex: answer(200, PROFILE), outcome: 'found' },
    {
      what: "a profile page carrying Cloudflare's bot-detection script and cookie (injected into ordinary pages)",
      site: statusSite,
      ex: answer(
        200,
        PROFILE.replace(
          '</body>',
          '<script src="/cdn-cgi/challenge-platform/scripts/jsd/main.js"></script><!-- __cf_bm --></body>',
        ),
      ),
      outcome: 'found',
    },
    {
      what: 'the same page at a canonical address',
      site: statusSite,
      ex: answer(200, PROFILE, { url: 'http://www.Example.com/u/GHopper/' }),
      outcome: 'found',
    },
    { what: 'a 404', site: statusSite, ex: answer(404, 'Not Found'), outcome: 'not_found' },
    { what: 'a 410', site: messageSite, ex: answer(410, 'Gone'), outcome: 'not_found' },
    {
      what: 'a status listed in errorCode',
      site: siteOf({ errorType: 'status_code', errorCode: [204, 400] }),
      ex: answer(204),
      outcome: 'not_found',
    },
    {
      what: 'a 200 carrying the errorMsg',
      site: messageSite,
      ex: answer(200, '<h1>Page not found</h1>'),
      outcome: 'not_found',
    },
    { what: 'a 200 without the errorMsg', site: messageSite, ex: answer(200, PROFILE), outcome: 'found' },
    {
      what: 'a redirect to the errorUrl',
      site: redirectSite,
      ex: answer(302, '', { redirects: ['https://example.com/not-found?name=ghopper'] }),
      outcome: 'not_found',
    },
    {
      what: 'a redirect to an errorUrl written without a scheme, by prefix',
      site: siteOf({ errorType: 'response_url', errorUrl: 'example.com/typo/?subdomain=' }),
      ex: answer(302, '', { redirects: ['https://example.com/typo/?subdomain=ghopper'] }),
      outcome: 'not_found',
    },
    {
      what: 'a redirect away from the profile where the errorUrl is the profile itself',
      site: siteOf({ errorType: 'response_url', errorUrl: 'https://example.com/u/{}' }),
      ex: answer(200, PROFILE, { redirects: ['https://example.com/'] }),
      outcome: 'not_found',
    },
    {
      what: 'a 2xx profile page on a redirect-rule site',
      site: redirectSite,
      ex: answer(200, PROFILE),
      outcome: 'found',
    },
    {
      what: 'a profile page with a captcha widget in its sign-in box',
      site: statusSite,
      ex: answer(200, PROFILE.replace('</body>', '<form id="login"><div class="g-recaptcha"></div></form></body>')),
      outcome: 'found',
    },
  ])('$what is $outcome', ({ site, ex, outcome }) => {
    expect(verdict(site, ex)).toEqual({ outcome });
  });

  it.each([
    {
      what: '"Just a moment…" with 403',
      site: statusSite,
      ex: answer(403, JUST_A_MOMENT),
      outcome: 'blocked',
      detail: 'a bot challenge or captcha page (403)',
    },
    {
      what: 'a challenge marked by its header',
      site: statusSite,
      ex: answer(200, PROFILE, { headers: new Headers({ 'cf-mitigated': 'challenge' }) }),
      outcome: 'blocked',
      detail: 'a bot challenge or captcha page (200)',
    },
    {
      what: 'a captcha page with 200',
      site: messageSite,
      ex: answer(200, '<html><head><title>Captcha</title></head><body><div class="g-recaptcha"></div></body></html>'),
      outcome: 'blocked',
      detail: 'a bot challenge or captcha page (200)',
    },
    {
      what: 'a challenge on a 503',
      site: statusSite,
      ex: answer(503, '<span id="challenge-error-text">Enable JavaScript</span>'),
      outcome: 'blocked',
      detail: 'a bot challenge or captcha page (503)',
    },
    {
      what: 'a 401',
      site: statusSite,
      ex: answer(401, 'Unauthorized'),
      outcome: 'blocked',
      detail: 'a login wall (401)',
    },
    {
      what: 'a redirect to a sign-in page',
      site: statusSite,
      ex: answer(302, '', { redirects: ['https://example.com/login?next=%2Fu%2Fghopper'] }),
      outcome: 'blocked',
      detail: 'a login wall (redirected to a sign-in page)',
    },
    {
      what: 'a sign-in page in place of the profile',
      site: messageSite,
      ex: answer(200, '<html><head><title>Log in · Example</title></head></html>'),
      outcome: 'blocked',
      detail: 'a login wall (a sign-in page in place of the profile)',
    },
    {
      what: 'a plain 403',
      site: statusSite,
      ex: answer(403, 'Forbidden'),
      outcome: 'blocked',
      detail: 'forbidden (403)',
    },
    {
      what: 'a 5xx, even carrying the errorMsg',
      site: messageSite,
      ex: answer(503, 'Page not found'),
      outcome: 'error',
      detail: 'site error (503)',
    },
    {
      what: 'a 2xx at another page than the profile (no rule names it)',
      site: statusSite,
      ex: answer(200, '<h1>Welcome</h1>', { redirects: ['https://example.com/'] }),
      outcome: 'unknown',
      detail: "redirected to another page, not the profile nor the site's not-found page",
    },
    {
      what: 'a redirect elsewhere than the errorUrl',
      site: redirectSite,
      ex: answer(200, '<h1>Home</h1>', { redirects: ['https://example.com/home'] }),
      outcome: 'unknown',
      detail: "redirected to another page, not the profile nor the site's not-found page",
    },
    {
      what: 'a status no rule covers',
      site: statusSite,
      ex: answer(400, 'Bad Request'),
      outcome: 'unknown',
      detail: "an answer the site's rules do not cover (400)",
    },
  ])('$what is never found: $outcome', ({ site, ex, outcome, detail }) => {
    expect(verdict(site, ex)).toEqual({ outcome, detail: `site:Example: ${detail}` });
  });

  it('reads a 429 as rate_limited, with the Retry-After in the detail', () => {
    const limited = answer(429, 'Too Many Requests', { headers: new Headers({ 'retry-after': '30' }) });
    expect(verdict(messageSite, limited)).toEqual({
      outcome: 'rate_limited',
      detail: 'site:Example: rate limited (429, retry after 30s)',
      retryAfterMs: 30_000,
    });
  });
});

describe('the request for a site', () => {
  it('puts the username into the address encoded, and into a JSON body as it is', () => {
    const anilist = siteOf({
      errorType: 'status_code',
      urlProbe: 'https://graphql.example.com/',
      request_method: 'POST',
      request_payload: { query: 'query($name:String){User(name:$name){id}}', variables: { name: '{}' } },
      headers: { 'User-Agent': 'Special/1.0' },
    });
    const req = probeRequest(anilist, 'a b/c')!;
    expect(req).toMatchObject({ url: 'https://graphql.example.com/', method: 'POST' });
    expect(JSON.parse(req.body!)).toEqual({
      query: 'query($name:String){User(name:$name){id}}',
      variables: { name: 'a b/c' },
    });
    expect(req.headers).toMatchObject({ 'content-type': 'application/json', 'user-agent': 'Special/1.0' });
    expect(probeRequest(statusSite, 'a b/c')).toMatchObject({ url: 'https://example.com/u/a%20b%2Fc', method: 'GET' });
    expect(probeRequest(statusSite, 'a b/c')!.body).toBeUndefined();
  });

  it("is none where the site's regexCheck refuses the username, or the username makes no address there", () => {
    const strict = siteOf({ errorType: 'status_code', regexCheck: '^[a-z0-9]{3,12}$' });
    expect(probeRequest(strict, 'ghopper')).not.toBeNull();
    expect(probeRequest(strict, 'g.hopper')).toBeNull();
    const subdomain = siteOf({ errorType: 'status_code', url: 'https://{}.example.com/' });
    expect(probeRequest(subdomain, 'ghopper')).toMatchObject({ url: 'https://ghopper.example.com/' });
    expect(probeRequest(subdomain, 'g hopper')).toBeNull();
  });

  it('is none, on a site that puts the username into its host name, for one that is not a single host label, or is www', () => {
    const tumblr = siteOf({ errorType: 'status_code', url: 'https://{}.tumblr.example/' });
    const probed = siteOf({
      errorType: 'status_code',
      url: 'https://example.com/blog/{}',
      urlProbe: 'https://{}.blogs.example.com/feed',
    });
    for (const site of [tumblr, probed]) {
      // `www` is the site's own home page; a dot asks another host level (a.b.tumblr.example).
      for (const name of ['www', 'WWW', 'a.b', 'under_score', '-dash', 'dash-', 'x'.repeat(64), 'josé', 'a@b'])
        expect([name, probeRequest(site, name)]).toEqual([name, null]);
      for (const name of ['staff', 'a-b', '007', 'x'.repeat(63), 'wwww'])
        expect([name, probeRequest(site, name)]).toEqual([name, expect.objectContaining({ method: 'GET' })]);
    }
    // The shipped list's such sites without a regexCheck of their own.
    const shipped = loadSiteList(SHERLOCK_SITES_FILE).filter((site) =>
      ['tumblr', 'tistory', 'Tiendanube', 'Empretienda AR'].includes(site.name),
    );
    expect(shipped.map((site) => [site.name, site.regexCheck])).toHaveLength(4);
    for (const site of shipped) {
      expect([site.name, probeRequest(site, 'www'), probeRequest(site, 'a.b')]).toEqual([site.name, null, null]);
      expect(probeRequest(site, 'staff')?.url).toMatch(/^https:\/\/staff\./);
    }
    // A username in the path may be anything the site's address can carry.
    for (const name of ['www', 'a.b', 'under_score', 'josé'])
      expect([name, probeRequest(statusSite, name)]).toEqual([name, expect.objectContaining({ method: 'GET' })]);
  });

  it('is none, on a site that puts the username into its host name, for a name the site keeps for its own services (mail, api, admin, …)', () => {
    const tumblr = siteOf({ errorType: 'status_code', url: 'https://{}.tumblr.example/' });
    // help.tumblr.example answers 200 with the site's help centre: read as a profile, every such name was found.
    for (const name of [
      'mail',
      'API',
      'admin',
      'blog',
      'help',
      'support',
      'status',
      'static',
      'cdn',
      'm',
      'app',
      'dev',
    ])
      expect([name, probeRequest(tumblr, name)]).toEqual([name, null]);
    for (const name of ['mailman', 'apiary', 'blogger', 'mm', 'devon'])
      expect([name, probeRequest(tumblr, name)]).toEqual([name, expect.objectContaining({ method: 'GET' })]);
    // In the path they are handles like any other.
    for (const name of ['mail', 'api', 'admin', 'help'])
      expect([name, probeRequest(statusSite, name)]).toEqual([name, expect.objectContaining({ method: 'GET' })]);
  });

  it('is none for `.` and `..`, which an address reads as path steps (/u/.. is the home page), not as a handle', () => {
    expect(probeRequest(statusSite, '..')).toBeNull();
    expect(probeRequest(statusSite, '.')).toBeNull();
    expect(probeRequest(statusSite, '...')).toMatchObject({ url: 'https://example.com/u/...' });
  });
});

describe('the exchange with a site', () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await FakeUpstream.start();
  });
  afterAll(async () => {
    await fake.close();
  });
  const at = (site: Site) =>
    parseSiteList(
      {
        [site.name]: {
          url: `${fake.url}/u/{}`,
          urlMain: fake.url,
          errorType: site.errorTypes,
          ...(site.errorMsgs.length > 0 ? { errorMsg: site.errorMsgs } : {}),
          ...(site.errorUrl ? { errorUrl: site.errorUrl.replace('https://example.com', fake.url) } : {}),
          ...(site.method !== 'GET' ? { request_method: site.method } : {}),
          ...(site.payload ? { request_payload: site.payload } : {}),
        },
      },
      'spec',
    )[0]!;
  const run = (site: Site) => exchange(site, 'ghopper', probeRequest(site, 'ghopper')!, AbortSignal.timeout(5000));

  // What a check holds in memory: a status or redirect rule never looks past the page's beginning (the
  // challenge and sign-in checks), so only a message rule reads up to MAX_BODY_BYTES.
  it("reads only the beginning of a page a site's rule does not read, and up to 2 MiB where its rule is a message", async () => {
    const page = `<html><head><title>ghopper</title></head><body>${'x'.repeat(3 * 1024 * 1024)}</body></html>`;
    fake.reply({ status: 200, body: page });
    for (const [site, read] of [
      [statusSite, 64 * 1024],
      [redirectSite, 64 * 1024],
      [messageSite, 2 * 1024 * 1024],
    ] as const) {
      const ex = await run(at(site));
      expect([site.errorTypes, ex.text.length, ex.truncated]).toEqual([site.errorTypes, read, true]);
    }
    // After a redirect too.
    fake.reply((req) =>
      req.url === '/u/ghopper' ? { status: 302, headers: { location: '/u/GHopper' } } : { status: 200, body: page },
    );
    const ex = await run(at(statusSite));
    expect([ex.redirects.length, ex.text.length]).toEqual([1, 64 * 1024]);
    expect(decide(at(statusSite), 'ghopper', ex)).toEqual({ outcome: 'found' });
  });

  it('reads a page only as far as the shared page budget grants, and then never calls it found', async () => {
    const budget = new PageBudget(100 * 1024);
    const other = budget.claim();
    expect(other.take(60 * 1024)).toBe(60 * 1024); // another check holds 60 KiB of it
    fake.reply({ status: 200, body: `${PROFILE}${'x'.repeat(1024 * 1024)}` });
    const claim = budget.claim();
    const site = at(messageSite);
    const ex = await exchange(
      site,
      'ghopper',
      { ...probeRequest(site, 'ghopper')!, allowance: claim },
      AbortSignal.timeout(5000),
    );
    expect([Buffer.byteLength(ex.text), ex.truncated, claim.short, budget.peak]).toEqual([
      40 * 1024,
      true,
      true,
      100 * 1024,
    ]);
    expect(decide(site, 'ghopper', { ...ex, cutShort: claim.short })).toEqual({
      outcome: 'unknown',
      detail: "site:Example: only part of the page read, the process's page budget being held by other checks",
    });
    claim.release();
    other.release();
    expect(budget.held).toBe(0);
  });

  it('follows redirects, and a 303 turns a POST into a GET without its body', async () => {
    fake.reply((req) =>
      req.url === '/u/ghopper'
        ? { status: 303, headers: { location: '/u/GHopper/' } }
        : { status: 200, body: `${req.method} ${req.body}` },
    );
    const site = at(siteOf({ errorType: 'status_code', request_method: 'POST', request_payload: { u: '{}' } }));
    const ex = await run(site);
    expect(ex).toMatchObject({ status: 200, text: 'GET ', redirects: [`${fake.url}/u/GHopper/`] });
    expect(decide(site, 'ghopper', ex)).toEqual({ outcome: 'found' });
  });

  it('keeps a HEAD a HEAD on a 303, as fetch does (only other methods become a GET)', async () => {
    fake.reply((req) =>
      req.url === '/u/ghopper' ? { status: 303, headers: { location: '/u/GHopper/' } } : { status: 200 },
    );
    const before = fake.requests.length;
    const site = at(siteOf({ errorType: 'status_code', request_method: 'HEAD' }));
    const ex = await run(site);
    expect(fake.requests.slice(before).map((r) => [r.method, r.url])).toEqual([
      ['HEAD', '/u/ghopper'],
      ['HEAD', '/u/GHopper/'],
    ]);
    expect(decide(site, 'ghopper', ex)).toEqual({ outcome: 'found' });
  });

  it('reads a Location sent as raw UTF-8 as UTF-8, as browsers and fetch do, so a profile at a non-ASCII address is reached', async () => {
    // A site that writes the canonical address into Location unescaped (PHP's header("Location: /u/$name")):
    // read byte by byte, /u/José became /u/JosÃ© and the site's 404 there was taken for the profile's.
    const raw = (text: string) => Buffer.from(text).toString('latin1');
    fake.reply((req) =>
      req.url === '/u/jos%C3%A9'
        ? { status: 301, headers: { location: raw('/u/José') } }
        : req.url === '/u/Jos%C3%A9'
          ? { status: 200, body: PROFILE }
          : { status: 404, body: 'Not Found' },
    );
    const site = at(statusSite);
    const ex = await exchange(site, 'josé', probeRequest(site, 'josé')!, AbortSignal.timeout(5000));
    expect(ex).toMatchObject({ status: 200, url: `${fake.url}/u/Jos%C3%A9` });
    expect(decide(site, 'josé', ex)).toEqual({ outcome: 'found' });
  });

  it("stops at a redirect to the site's error page or a sign-in page, without fetching it", async () => {
    const before = fake.requests.length;
    fake.reply((req) =>
      req.url === '/u/ghopper'
        ? { status: 302, headers: { location: '/not-found?name=ghopper' } }
        : { status: 500, body: 'must not be asked' },
    );
    const site = at(redirectSite);
    const ex = await run(site);
    expect(ex).toMatchObject({ status: 302, redirects: [`${fake.url}/not-found?name=ghopper`] });
    expect(decide(site, 'ghopper', ex)).toEqual({ outcome: 'not_found' });

    fake.reply((req) =>
      req.url === '/u/ghopper' ? { status: 302, headers: { location: '/signin' } } : { status: 500 },
    );
    await expect(run(at(statusSite)).then((e) => decide(statusSite, 'ghopper', e))).rejects.toMatchObject({
      code: 'blocked',
    });
    expect(fake.requests.slice(before).map((r) => r.url)).toEqual(['/u/ghopper', '/u/ghopper']);
  });

  it('does not follow a redirect to another host at a loopback, private, link-local or metadata address (SSRF)', async () => {
    const inside = await FakeUpstream.start();
    try {
      const { port } = new URL(inside.url);
      for (const location of [
        `http://localhost:${port}/admin`,
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.1/',
      ]) {
        fake.reply({ status: 302, headers: { location } });
        const site = at(statusSite);
        const ex = await run(site);
        expect(ex).toMatchObject({ status: 302, redirects: [new URL(location).toString()] });
        expect(verdict(site, ex)).toEqual({
          outcome: 'unknown',
          detail:
            'site:Example: redirected to another host at a loopback, private, link-local or metadata address (not followed)',
        });
      }
      expect(inside.requests).toEqual([]);
    } finally {
      await inside.close();
    }
  });

  it('refuses a private address at the connection to a redirected host, resolving its name once: a DNS answer that changes between a check and the connection (rebinding) gets nowhere', async () => {
    const inside = await FakeUpstream.start();
    const dns = await FakeDns.start();
    try {
      inside.reply({ status: 200, body: PROFILE });
      const { port } = new URL(inside.url);
      const resolve = resolverAt([dns.server]);
      const site = at(statusSite);
      const runVia = () =>
        exchange(site, 'ghopper', probeRequest(site, 'ghopper')!, AbortSignal.timeout(5000), resolve);
      const notFollowed = {
        outcome: 'unknown',
        detail:
          'site:Example: redirected to another host at a loopback, private, link-local or metadata address (not followed)',
      };

      // A name at a loopback address: one query of each type for the hop, and the request never made.
      dns.set('inside.test', { a: ['127.0.0.1'] });
      fake.reply({ status: 302, headers: { location: `http://inside.test:${port}/admin` } });
      const ex = await runVia();
      expect(ex).toMatchObject({ status: 302, url: `http://inside.test:${port}/admin`, privateRedirect: true });
      expect(verdict(site, ex)).toEqual(notFollowed);
      expect(dns.queries.filter((q) => q.name === 'inside.test' && q.type === 'A')).toHaveLength(1);

      // A name that does not resolve when first asked, then answers 127.0.0.1: a check that asks first and
      // leaves an unresolved name "for the request to fail on" let the request's own lookup reach loopback.
      dns.set('rebind.test', (type, asked) => (type === 'A' && asked > 0 ? { a: ['127.0.0.1'] } : 'nxdomain'));
      fake.reply({ status: 302, headers: { location: `http://rebind.test:${port}/admin` } });
      await expect(runVia()).rejects.toMatchObject({ code: 'unavailable' }); // as the guards retry it:
      const again = await runVia();
      expect(again).toMatchObject({ status: 302, privateRedirect: true });
      expect(verdict(site, again)).toEqual(notFollowed);
      expect(inside.requests).toEqual([]);
    } finally {
      await dns.close();
      await inside.close();
    }
  });

  it("keeps the site's Authorization and Cookie headers on its own origin, and drops them on a redirect to another", async () => {
    const other = await FakeUpstream.start();
    try {
      other.reply({ status: 200, body: PROFILE });
      fake.reply((req) =>
        req.url === '/u/ghopper'
          ? { status: 302, headers: { location: '/u/GHopper' } }
          : { status: 302, headers: { location: `${other.url}/people/ghopper` } },
      );
      const [site] = parseSiteList(
        {
          Example: {
            url: `${fake.url}/u/{}`,
            urlMain: fake.url,
            errorType: 'status_code',
            headers: { Authorization: 'Bearer s3cret', Cookie: 'session=1', 'X-Client': 'dossier' },
          },
        },
        'spec',
      );
      const before = fake.requests.length;
      await run(site!);
      expect(fake.requests.slice(before).map((r) => [r.url, r.headers['authorization'], r.headers['cookie']])).toEqual([
        ['/u/ghopper', 'Bearer s3cret', 'session=1'],
        ['/u/GHopper', 'Bearer s3cret', 'session=1'],
      ]);
      expect(other.requests).toHaveLength(1);
      expect(other.requests[0]!.headers).not.toHaveProperty('authorization');
      expect(other.requests[0]!.headers).not.toHaveProperty('cookie');
      expect(other.requests[0]!.headers['x-client']).toBe('dossier');
    } finally {
      await other.close();
    }
  });

  /** The site's answer (asked once, not followed) is kept as it is, and a status rule reads it as unknown. */
  async function expectKeptAndUnknown(status: number): Promise<void> {
    const before = fake.requests.length;
    const ex = await run(at(statusSite));
    expect(ex).toMatchObject({ status, redirects: [], url: `${fake.url}/u/ghopper` });
    expect(verdict(statusSite, ex)).toEqual({
      outcome: 'unknown',
      detail: `site:Example: an answer the site's rules do not cover (${status})`,
    });
    expect(fake.requests.slice(before).map((r) => r.url)).toEqual(['/u/ghopper']);
  }

  // Only the redirects fetch and request() follow (301, 302, 303, 307, 308): a 300 (Multiple Choices), 305 or
  // 306 is the site's answer, read by its rules like any other status, not a hop to the profile's page.
  it.each([300, 305, 306])(
    'does not follow a %i, with or without a Location: the rules read it (unknown, or what its errorCode says)',
    async (status) => {
      fake.reply((req) =>
        req.url === '/u/ghopper' ? { status, headers: { location: '/u/GHopper/' } } : { status: 200, body: PROFILE },
      );
      await expectKeptAndUnknown(status);

      fake.reply({ status });
      const bare = await run(at(statusSite));
      expect(verdict(statusSite, bare)).toMatchObject({ outcome: 'unknown' });
      const coded = siteOf({ errorType: 'status_code', errorCode: status });
      expect(verdict(coded, await run(at(coded)))).toEqual({ outcome: 'not_found' });
    },
  );

  // As request() keeps it (http.ts redirectOf): a redirect that names nowhere is the site's answer as it is.
  it.each([301, 302, 303, 307, 308])(
    'reads a %i without a Location by the rules, as request() keeps it: unknown, or what its rules say, never found',
    async (status) => {
      fake.reply({ status, body: PROFILE });
      await expectKeptAndUnknown(status);

      const coded = siteOf({ errorType: 'status_code', errorCode: status });
      expect(verdict(coded, await run(at(coded)))).toEqual({ outcome: 'not_found' });
      fake.reply({ status, body: 'No such user' });
      expect(verdict(messageSite, await run(at(messageSite)))).toEqual({ outcome: 'not_found' });
    },
  );

  it('calls a redirect with an invalid Location, or one redirect too many, malformed', async () => {
    const locations: Record<string, string>[] = [
      { location: 'http://[::1' },
      { location: 'mailto:ghopper@example.com' },
    ];
    for (const headers of locations) {
      fake.reply({ status: 302, headers });
      await expect(run(at(statusSite))).rejects.toMatchObject({
        code: 'malformed',
        message: 'site:Example: a redirect (302) without a valid Location',
      });
    }
    fake.reply((req) => ({ status: 301, headers: { location: `${req.url}x` } }));
    await expect(run(at(statusSite))).rejects.toMatchObject({
      code: 'malformed',
      message: 'site:Example: more than 5 redirects',
    });
  });
});

/** A site of a Maigret database (site-list's other format), as the loader gives it. */
function maigretSite(entry: Record<string, unknown>): Site {
  return parseSiteList({ sites: { Example: entry }, engines: {} }, 'spec')[0]!;
}

const site = (over: Record<string, unknown> = {}) => ({
  urlMain: 'https://example.com/',
  url: '{urlMain}u/{username}',
  checkType: 'status_code',
  ...over,
});

/** The outcome of the decision, and the error's message where it fails. */
function show(site: Site, status: number, text: string, over: Partial<SiteExchange> = {}): string {
  const { outcome, detail } = verdict(site, answer(status, text, over));
  return outcome === 'found' || outcome === 'not_found' || outcome === 'unknown' ? outcome : `${outcome}: ${detail}`;
}

describe("the decision on a Maigret site's answer", () => {
  const message = maigretSite(
    site({ checkType: 'message', absenceStrs: ['No such user'], presenseStrs: ['profile-header'] }),
  );

  it('message: found only with a sign of a profile and no sign of absence', () => {
    expect(show(message, 200, '<div class="profile-header">ghopper</div>')).toBe('found');
    expect(show(message, 200, '<p>No such user</p><div class="profile-header"></div>')).toBe('not_found');
    expect(show(message, 200, '<p>Welcome to Example</p>')).toBe('not_found');
    // A page cut off at 2 MiB without either sign could still carry one further down.
    expect(show(message, 200, '<p>…</p>', { truncated: true })).toBe('unknown');
  });

  it('response_url: any redirect is no such profile, the profile a 2xx with its sign', () => {
    const redirect = maigretSite(site({ checkType: 'response_url', presenseStrs: ['"user"'] }));
    expect(show(redirect, 302, '', { redirects: ['https://example.com/u/ghopper/'] })).toBe('not_found');
    expect(show(redirect, 200, '{"user": {}}')).toBe('found');
    expect(show(redirect, 200, '{}')).toBe('not_found');
    // Its presence sign is looked for in the whole page, not only the first 64 KiB.
    expect(probeRequest(redirect, 'ghopper')?.maxBodyBytes).toBe(2 * 1024 * 1024);
  });

  it("errors: the site's own failure signs fail the check, by what they mean", () => {
    const signs = maigretSite(
      site({
        errors: {
          'Too many searches': 'Rate limited',
          'Down for maintenance': 'Maintenance',
          'tiktok-verify-page': 'Captcha detected',
        },
      }),
    );
    expect(show(signs, 200, 'Too many searches, wait')).toBe(
      "rate_limited: site:Example: the site's own sign of a failure (Rate limited)",
    );
    expect(show(signs, 200, 'Down for maintenance')).toBe(
      "error: site:Example: the site's own sign of a failure (Maintenance)",
    );
    expect(show(signs, 200, '<div id="tiktok-verify-page">')).toBe(
      "blocked: site:Example: the site's own sign of a failure (Captcha detected)",
    );
    expect(show(signs, 200, '<p>ghopper</p>')).toBe('found');
  });

  it('ignore403: a 403 read by the rules — by a message rule as a 2xx, else not found — where others are walls', () => {
    const forum = maigretSite(
      site({
        checkType: 'message',
        absenceStrs: ['not found'],
        presenseStrs: ['You must be logged-in to do that.'],
        ignore403: true,
      }),
    );
    expect(show(forum, 403, 'You must be logged-in to do that.')).toBe('found');
    expect(show(forum, 403, 'The member was not found')).toBe('not_found');
    expect(show(maigretSite(site({ ignore403: true })), 403, '')).toBe('not_found');
    expect(show(maigretSite(site()), 403, '')).toBe('blocked: site:Example: forbidden (403)');
  });
});
