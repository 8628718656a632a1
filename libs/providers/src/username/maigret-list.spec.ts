import { ProviderError, outcomeOfError } from '../provider';
import { pythonFormat } from './maigret-list';
import { decide, probeRequest, type SiteExchange } from './site-check';
import { parseAnySiteList, type Site } from './site-list';

/** A Maigret database of these sites (and engines). */
const database = (sites: Record<string, unknown>, engines: Record<string, unknown> = {}) =>
  parseAnySiteList({ sites, engines, tags: ['forum'] }, 'spec');

const site = (over: Record<string, unknown> = {}) => ({
  urlMain: 'https://example.com/',
  url: '{urlMain}u/{username}',
  checkType: 'status_code',
  usernameClaimed: 'blue',
  usernameUnclaimed: 'noonewouldeverusethis7',
  ...over,
});

const one = (entry: Record<string, unknown>, engines?: Record<string, unknown>): Site => {
  const list = database({ Example: entry }, engines);
  expect(list.refused).toEqual([]);
  return list.sites[0]!;
};

describe("Maigret's format", () => {
  it('is told from Sherlock’s by its sites and engines, and a Sherlock list still reads as before', () => {
    expect(database({ Example: site() }).format).toBe('maigret');
    const sherlock = parseAnySiteList(
      { Example: { url: 'https://example.com/u/{}', urlMain: 'https://example.com/', errorType: 'status_code' } },
      'spec',
    );
    expect(sherlock).toMatchObject({ format: 'sherlock', refused: [] });
    expect(sherlock.sites[0]).toMatchObject({ presenceStrs: [], failureSigns: [], redirectIsAbsence: false });
  });

  it('reads url and urlProbe as Python format strings, one slash where Maigret makes one, username as {}', () => {
    expect(
      pythonFormat('{urlMain}{urlSubpath}/members/?username={username}', {
        urlMain: 'https://f.example',
        urlSubpath: '/forum',
      }),
    ).toBe('https://f.example/forum/members/?username={}');
    expect(pythonFormat('{{ user(name: "{username}") }}', {})).toBe('{ user(name: "{}") }');
    expect(() => pythonFormat('{urlMain}/{nick}', { urlMain: 'x' })).toThrow('an unknown field {nick}');
    expect(() => pythonFormat('https://x/{', {})).toThrow('a stray "{"');
    expect(() => pythonFormat('https://x/{{}}', {})).toThrow('a literal {}');
    expect(one(site({ url: '{urlMain}/u/{username}', urlProbe: '{urlMain}/api/{username}' }))).toMatchObject({
      url: 'https://example.com/u/{}',
      // As Maigret: the probe is formatted, its slashes left as they are.
      urlProbe: 'https://example.com//api/{}',
    });
  });

  it("merges an engine as Maigret does: its lists after the site's, its other fields over the site's", () => {
    const engines = {
      Forum: {
        name: 'Forum',
        site: {
          checkType: 'message',
          absenceStrs: ['No such member'],
          presenseStrs: ['memberHeader'],
          errors: { 'You have been banned': 'IP ban' },
          ignore403: true,
          url: '{urlMain}{urlSubpath}/members/?username={username}',
        },
        presenseStrs: ['XenForo'],
      },
    };
    const forum = one(
      {
        urlMain: 'https://f.example',
        urlSubpath: '/forum',
        engine: 'Forum',
        absenceStrs: ['Нет такого'],
        checkType: 'status_code',
        tags: ['RU', 'forum', 'ru'],
        alexaRank: 1234,
      },
      engines,
    );
    expect(forum).toMatchObject({
      url: 'https://f.example/forum/members/?username={}',
      errorTypes: ['message'],
      errorMsgs: ['Нет такого', 'No such member'],
      presenceStrs: ['memberHeader'],
      failureSigns: [{ text: 'You have been banned', meaning: 'IP ban' }],
      ignore403: true,
      tags: ['ru', 'forum'],
      rank: 1234,
      nsfw: false,
    });
  });

  it('asks as the site says: HEAD for requestHeadOnly status checks, a POST with its JSON payload, its headers', () => {
    expect(one(site({ requestHeadOnly: true })).method).toBe('HEAD');
    expect(one(site({ requestHeadOnly: true, checkType: 'message', absenceStrs: ['x'] })).method).toBe('GET');
    const post = one(
      site({
        url: 'https://example.com',
        urlProbe: 'https://example.com/api',
        requestMethod: 'POST',
        requestPayload: { query: '{{ user(username: "{username}") {{ id }} }}', size: 5 },
        headers: { 'Content-Type': 'application/json' },
      }),
    );
    expect(probeRequest(post, 'ghopper')).toMatchObject({
      url: 'https://example.com/api',
      method: 'POST',
      body: JSON.stringify({ query: '{ user(username: "ghopper") { id } }', size: 5 }),
    });
    // Maigret sends a payload with a POST only.
    expect(one(site({ requestMethod: 'GET', requestPayload: { u: '{username}' } })).payload).toBeNull();
  });

  it('honours regexCheck as Python’s re.search: a username it refuses makes no request', () => {
    const strict = one(site({ regexCheck: '^[a-z]{3,8}$' }));
    expect(probeRequest(strict, 'ghopper')).not.toBeNull();
    expect(probeRequest(strict, 'Grace.Hopper')).toBeNull();
  });

  it('takes a site’s tags porn and erotic for NSFW', () => {
    expect(one(site({ tags: ['porn', 'us'] })).nsfw).toBe(true);
  });

  it('leaves out, counted by why, every site it cannot check, and takes the others', () => {
    const list = database(
      {
        Off: site({ disabled: true }),
        ById: site({ type: 'gaia_id' }),
        Onion: site({ protocol: 'tor' }),
        Similar: site({ similarSearch: true }),
        Token: site({ activation: { method: 'twitter' } }),
        Gbk: site({ encoding: 'gbk' }),
        NoEngine: site({ engine: 'Nope' }),
        Odd: site({ checkSum: 3 }),
        NoUrl: site({ url: undefined }),
        BadType: site({ checkType: 'html' }),
        Relative: site({ url: '/u/{username}' }),
        Stray: site({ url: '{urlMain}u/{username' }),
        BadRegex: site({ regexCheck: '^[a-z' }),
        HeadMessage: site({ checkType: 'message', absenceStrs: ['x'], requestMethod: 'HEAD' }),
        Form: site({
          requestMethod: 'POST',
          requestPayload: { u: '{username}' },
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        }),
        Signless: site({ checkType: 'message' }),
        NotAnObject: 'https://example.com',
        Fine: site(),
      },
      {},
    );
    expect(list.sites.map((s) => s.name)).toEqual(['Fine']);
    expect(list.refused.map(({ name, reason }) => `${name}: ${reason}`)).toEqual([
      'Off: disabled',
      'ById: not a username',
      'Onion: not on the web',
      'Similar: similar names',
      'Token: needs activation',
      'Gbk: forced encoding',
      'NoEngine: unknown engine',
      'Odd: unknown field',
      'NoUrl: invalid',
      'BadType: invalid',
      'Relative: invalid',
      'Stray: invalid',
      'BadRegex: invalid',
      'HeadMessage: invalid',
      'Form: invalid',
      'Signless: no sign',
      'NotAnObject: invalid',
    ]);
    expect(list.refused.find((s) => s.name === 'Stray')?.detail).toBe('url: a stray "{"');
    expect(list.refused.find((s) => s.name === 'Odd')?.detail).toBe('checkSum');
  });
});

/** The outcome of the decision on an answer to /u/ghopper. */
function verdict(site: Site, status: number, text: string, over: Partial<SiteExchange> = {}): string {
  const ex: SiteExchange = {
    requested: 'https://example.com/u/ghopper',
    redirects: [],
    url: over.redirects?.at(-1) ?? 'https://example.com/u/ghopper',
    status,
    headers: new Headers(),
    text,
    truncated: false,
    ...over,
  };
  try {
    return decide(site, 'ghopper', ex).outcome;
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    return `${outcomeOfError(error.code)}: ${error.message}`;
  }
}

describe("the decision on a Maigret site's answer", () => {
  const message = one(site({ checkType: 'message', absenceStrs: ['No such user'], presenseStrs: ['profile-header'] }));

  it('message: found only with a sign of a profile and no sign of absence', () => {
    expect(verdict(message, 200, '<div class="profile-header">ghopper</div>')).toBe('found');
    expect(verdict(message, 200, '<p>No such user</p><div class="profile-header"></div>')).toBe('not_found');
    expect(verdict(message, 200, '<p>Welcome to Example</p>')).toBe('not_found');
    // A page cut off at 2 MiB without either sign could still carry one further down.
    expect(verdict(message, 200, '<p>…</p>', { truncated: true })).toBe('unknown');
  });

  it('response_url: any redirect is no such profile, the profile a 2xx with its sign', () => {
    const redirect = one(site({ checkType: 'response_url', presenseStrs: ['"user"'] }));
    expect(verdict(redirect, 302, '', { redirects: ['https://example.com/u/ghopper/'] })).toBe('not_found');
    expect(verdict(redirect, 200, '{"user": {}}')).toBe('found');
    expect(verdict(redirect, 200, '{}')).toBe('not_found');
    // Its presence sign is looked for in the whole page, not only the first 64 KiB.
    expect(probeRequest(redirect, 'ghopper')?.maxBodyBytes).toBe(2 * 1024 * 1024);
  });

  it("errors: the site's own failure signs fail the check, by what they mean", () => {
    const signs = one(
      site({
        errors: {
          'Too many searches': 'Rate limited',
          'Down for maintenance': 'Maintenance',
          'tiktok-verify-page': 'Captcha detected',
        },
      }),
    );
    expect(verdict(signs, 200, 'Too many searches, wait')).toBe(
      "rate_limited: site:Example: the site's own sign of a failure (Rate limited)",
    );
    expect(verdict(signs, 200, 'Down for maintenance')).toBe(
      "error: site:Example: the site's own sign of a failure (Maintenance)",
    );
    expect(verdict(signs, 200, '<div id="tiktok-verify-page">')).toBe(
      "blocked: site:Example: the site's own sign of a failure (Captcha detected)",
    );
    expect(verdict(signs, 200, '<p>ghopper</p>')).toBe('found');
  });

  it('ignore403: a 403 read by the rules — by a message rule as a 2xx, else not found — where others are walls', () => {
    const forum = one(
      site({
        checkType: 'message',
        absenceStrs: ['not found'],
        presenseStrs: ['You must be logged-in to do that.'],
        ignore403: true,
      }),
    );
    expect(verdict(forum, 403, 'You must be logged-in to do that.')).toBe('found');
    expect(verdict(forum, 403, 'The member was not found')).toBe('not_found');
    expect(verdict(one(site({ ignore403: true })), 403, '')).toBe('not_found');
    expect(verdict(one(site()), 403, '')).toBe('blocked: site:Example: forbidden (403)');
  });
});
