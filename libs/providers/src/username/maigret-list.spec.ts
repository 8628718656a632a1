import { pythonFormat } from './maigret-list';
import { probeRequest } from './site-check';
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
