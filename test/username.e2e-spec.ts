import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  API_RESULT_FIELDS,
  AppProcess,
  Api,
  DIST,
  FakeUpstream,
  Stack,
  ledgerState,
  settled,
  waitFor,
  type FakeAnswer,
} from '@dossier/testing';

type Envelope = {
  status: string;
  search_id: string;
  results: Record<string, unknown>[];
  credits_remaining: number;
  sources: { provider: string; outcome: string; took_ms: number; detail?: string }[];
  source_summary: Record<string, number>;
  progress?: { results: Record<string, unknown>[]; source_summary: Record<string, number>; sources_pending: number };
};

/** A source_summary: every outcome, these counts, 0 for the others. */
const summary = (counts: Record<string, number>) => ({
  found: 0,
  not_found: 0,
  unknown: 0,
  rate_limited: 0,
  blocked: 0,
  timeout: 0,
  error: 0,
  skipped: 0,
  ...counts,
});

const SIGNUP = 100;
const PROFILE = '<!DOCTYPE html><html><head><title>Grace Hopper</title></head><body><h1>@ghopper</h1></body></html>';
const NOT_FOUND: FakeAnswer = { status: 404, body: '<h1>Not Found</h1>' };
/** Imperva's block page, served with 200. */
const INCAPSULA =
  '<html><head><META NAME="ROBOTS" CONTENT="NOINDEX, NOFOLLOW"></head><body><iframe id="main-iframe" src="/_Incapsula_Resource?SWUDNSAI=31">Request unsuccessful. Incapsula incident ID: 1234000560078-9012</iframe></body></html>';
/** 3 MiB of a page: more than a site check reads. */
const FILLER = `<div>${'x'.repeat(1022)}</div>\n`.repeat(3 * 1024);

/**
 * Fake sites on loopback, one path each, in Sherlock's format: `ghopper` meets every kind of answer a
 * site gives (a profile, a not-found page with 200, a redirect to the error page, a WAF challenge, a
 * login wall, a 429, a hang, a 5xx); `latecomer` has a profile at once on one site and on another only when
 * the test opens its gate;
 * `mirage` gets pages that look like a profile and are not one; every other name is not found anywhere.
 */
function sites(base: string, gate: Promise<unknown>) {
  const answers: Record<string, (name: string) => FakeAnswer> = {
    profile: (name) => (name === 'ghopper' || name === 'latecomer' ? { status: 200, body: PROFILE } : NOT_FOUND),
    board: () => ({ status: 200, body: '<p>No member goes by that name.</p>' }),
    moved: (name) => ({ status: 302, headers: { location: `/moved-away/missing?user=${name}` } }),
    cloudy: (name) =>
      name === 'ghopper'
        ? {
            status: 403,
            headers: { 'cf-mitigated': 'challenge', server: 'cloudflare' },
            body: '<!DOCTYPE html><html><head><title>Just a moment...</title></head><body></body></html>',
          }
        : NOT_FOUND,
    walled: (name) =>
      name === 'ghopper' ? { status: 302, headers: { location: `/accounts/login?next=/walled/${name}` } } : NOT_FOUND,
    busy: (name) =>
      name === 'ghopper' ? { status: 429, headers: { 'retry-after': '3600' }, body: 'Too Many Requests' } : NOT_FOUND,
    sluggish: (name) => (name === 'ghopper' ? { hang: true } : NOT_FOUND),
    broken: (name) => (name === 'ghopper' ? { status: 500, body: 'Internal Server Error' } : NOT_FOUND),
    late: (name) => (name === 'latecomer' ? { status: 200, body: PROFILE, after: gate } : NOT_FOUND),
    huge: (name) =>
      name === 'mirage'
        ? { status: 200, body: `<html><body>${FILLER}<p>No member goes by that name.</p></body></html>` }
        : NOT_FOUND,
    imperva: (name) => (name === 'mirage' ? { status: 200, body: INCAPSULA } : NOT_FOUND),
  };
  const site = (path: string, rule: Record<string, unknown> = { errorType: 'status_code' }) => ({
    url: `${base}/${path}/{}`,
    urlMain: `${base}/`,
    username_claimed: 'ghopper',
    ...rule,
  });
  const list = {
    Profile: site('profile'),
    Board: site('board', { errorType: 'message', errorMsg: 'No member goes by that name' }),
    Moved: site('moved', { errorType: 'response_url', errorUrl: `${base}/moved-away/missing?user={}` }),
    Cloudy: site('cloudy'),
    Walled: site('walled'),
    Busy: site('busy'),
    Sluggish: site('sluggish'),
    Broken: site('broken'),
    Late: site('late'),
    Huge: site('huge', { errorType: 'message', errorMsg: 'No member goes by that name' }),
    Imperva: site('imperva'),
  };
  const route = (url: string): FakeAnswer => {
    const [, path = '', name = ''] = url.split('/');
    return answers[path]?.(decodeURIComponent(name)) ?? NOT_FOUND;
  };
  return { list, route };
}

describe('username presence over HTTP (gateway + worker, fake sites on loopback)', () => {
  let fake: FakeUpstream;
  let stack: Stack;
  let api: Api;
  let dir: string;
  let openGate: () => void;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    const gate = new Promise<void>((open) => (openGate = open));
    const { list, route } = sites(fake.url, gate);
    fake.reply((req) => route(req.url));
    dir = mkdtempSync(join(tmpdir(), 'dossier-username-e2e-'));
    writeFileSync(join(dir, 'sites.json'), JSON.stringify(list));
    stack = await Stack.start({
      label: 'username',
      env: { SIGNUP_CREDITS: String(SIGNUP) },
      workerEnv: { USERNAME_SITES_FILE: join(dir, 'sites.json'), USERNAME_TIMEOUT_MS: '4000' },
    });
    api = new Api(stack.baseUrl);
  });
  afterAll(async () => {
    openGate?.();
    await stack?.stop();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers one item with the accounts found, each site's real outcome in sources, and charges one credit", async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const res = await api.post<Envelope>('/v1/search/person', { username: 'ghopper' }, { key });
    expect(res.status).toBe(200);
    const took = { took_ms: expect.any(Number) };
    expect(res.body.sources).toEqual([
      { provider: 'site:Profile', outcome: 'found', ...took },
      { provider: 'site:Board', outcome: 'not_found', ...took },
      { provider: 'site:Moved', outcome: 'not_found', ...took },
      {
        provider: 'site:Cloudy',
        outcome: 'blocked',
        ...took,
        detail: 'site:Cloudy: a bot challenge or captcha page (403)',
      },
      {
        provider: 'site:Walled',
        outcome: 'blocked',
        ...took,
        detail: 'site:Walled: a login wall (redirected to a sign-in page)',
      },
      {
        provider: 'site:Busy',
        outcome: 'rate_limited',
        ...took,
        detail: 'site:Busy: rate limited (429, retry after 3600s)',
      },
      {
        provider: 'site:Sluggish',
        outcome: 'timeout',
        ...took,
        detail: 'site:Sluggish: no answer before the deadline',
      },
      { provider: 'site:Broken', outcome: 'error', ...took, detail: 'site:Broken: site error (500)' },
      { provider: 'site:Late', outcome: 'not_found', ...took },
      { provider: 'site:Huge', outcome: 'not_found', ...took },
      { provider: 'site:Imperva', outcome: 'not_found', ...took },
      { provider: 'local', outcome: 'not_found', ...took },
    ]);
    expect(res.body.results).toHaveLength(1);
    const [item] = res.body.results;
    expect(Object.keys(item!).sort()).toEqual([...API_RESULT_FIELDS.PersonResult].sort());
    expect(item).toMatchObject({
      id: expect.stringMatching(/^per_usr_[A-Za-z0-9_-]{20}$/),
      full_name: null,
      first_name: null,
      last_name: null,
      usernames: ['ghopper'],
      accounts: [{ service: 'Profile', username: 'ghopper', url: `${fake.url}/profile/ghopper` }],
      match_score: 0.5,
      matched_on: ['username'],
      sources: ['site:Profile'],
    });
    expect(res.body.source_summary).toEqual(
      summary({ found: 1, not_found: 6, blocked: 2, rate_limited: 1, timeout: 1, error: 1 }),
    );
    expect(res.body.credits_remaining).toBe(SIGNUP - 1);
    expect(res.headers.get('x-credits-spent')).toBe('1');
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  // Busy asked for an hour in the first search: until then it is held off, `skipped` (ADR 0038).
  it('is free when every site says not_found or is held off (POST /v1/search with type username)', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const res = await api.post<Envelope>('/v1/search', { query: 'nobody', type: 'username' }, { key });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([]);
    expect(res.body.sources.map((s) => [s.provider, s.outcome])).toEqual([
      ...['Profile', 'Board', 'Moved', 'Cloudy', 'Walled'].map((name) => [`site:${name}`, 'not_found']),
      ['site:Busy', 'skipped'],
      ...['Sluggish', 'Broken', 'Late', 'Huge', 'Imperva'].map((name) => [`site:${name}`, 'not_found']),
      ['local', 'not_found'],
    ]);
    expect(res.body.credits_remaining).toBe(SIGNUP);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 1, captures: 0, releases: 1 }));
  });

  it('finds nothing and charges nothing where a page only looks like a profile (a block page with 200, one cut off before its not-found sign)', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const res = await api.post<Envelope>('/v1/search/person', { username: 'mirage' }, { key });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([]);
    expect(res.body.sources.filter((s) => s.outcome !== 'not_found')).toEqual([
      {
        provider: 'site:Busy',
        outcome: 'skipped',
        took_ms: 0,
        detail: expect.stringMatching(
          /^site:Busy: not called until \S+Z, the wait its last 429 asked for \(at most 1h\)$/,
        ),
      },
      {
        provider: 'site:Huge',
        outcome: 'unknown',
        took_ms: expect.any(Number),
        detail: "site:Huge: a page over 2 MiB, without the site's not-found sign in the part read",
      },
      {
        provider: 'site:Imperva',
        outcome: 'blocked',
        took_ms: expect.any(Number),
        detail: 'site:Imperva: a bot challenge or captcha page (200)',
      },
    ]);
    expect(res.body.credits_remaining).toBe(SIGNUP);
    expect(res.headers.get('x-credits-spent')).toBe('0');
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 1, captures: 0, releases: 1 }));
  });

  it("answers within the caller's wait (ADR 0049): a site still running is timeout, what was found is kept and charged", async () => {
    // Late holds `latecomer` until the gate opens (next test): the wait ends first.
    const { key, accountId } = await api.register(SIGNUP);
    const res = await api.post<Envelope>(
      '/v1/search/person',
      { username: 'latecomer' },
      { key, headers: { prefer: 'wait=2' } },
    );
    expect(res.status).toBe(200);
    expect(res.body.sources.find((s) => s.provider === 'site:Late')).toMatchObject({ outcome: 'timeout' });
    expect(res.body.source_summary).toEqual(summary({ found: 1, not_found: 9, skipped: 1, timeout: 1 }));
    expect(res.body.results).toEqual([
      expect.objectContaining({
        usernames: ['latecomer'],
        accounts: [{ service: 'Profile', username: 'latecomer', url: `${fake.url}/profile/latecomer` }],
      }),
    ]);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('goes on checking after a respond-async 202, shows the accounts found so far while pending, and serves the finished search', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const pending = await api.post<Envelope>(
      '/v1/search/person',
      { username: 'latecomer' },
      { key, headers: { prefer: 'respond-async' } },
    );
    expect(pending.status).toBe(202);
    const id = pending.body.search_id;

    // Every site but Late has answered: the worker writes that onto the search, and the search is still pending.
    const progressing = await waitFor(
      () => api.get<Envelope>(`/v1/searches/${id}`, { key }),
      (r) => r.body.progress?.sources_pending === 1,
      { timeoutMs: 10_000, what: `search ${id} to show every site but Late answered` },
    );
    expect(progressing.status).toBe(202);
    expect(progressing.body).toEqual({
      status: 'pending',
      search_id: id,
      credits_remaining: SIGNUP - 1,
      progress: {
        results: [
          expect.objectContaining({
            usernames: ['latecomer'],
            accounts: [{ service: 'Profile', username: 'latecomer', url: `${fake.url}/profile/latecomer` }],
          }),
        ],
        source_summary: summary({ found: 1, not_found: 9, skipped: 1 }),
        sources_pending: 1,
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    });

    openGate();
    const done = await waitFor(
      () => api.get<Envelope>(`/v1/searches/${id}`, { key }),
      (r) => r.status !== 202,
      { timeoutMs: 20_000, what: `search ${id} to finish` },
    );
    expect(done.status).toBe(200);
    expect(done.body).not.toHaveProperty('progress');
    expect(done.body.source_summary).toEqual(summary({ found: 2, not_found: 9, skipped: 1 }));
    expect(done.body.results).toEqual([
      expect.objectContaining({
        usernames: ['latecomer'],
        accounts: [
          { service: 'Profile', username: 'latecomer', url: `${fake.url}/profile/latecomer` },
          { service: 'Late', username: 'latecomer', url: `${fake.url}/late/latecomer` },
        ],
      }),
    ]);
    expect(done.body.credits_remaining).toBe(SIGNUP - 1);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('refuses to start a worker whose site list is broken, naming the site and the field', async () => {
    const broken = join(dir, 'broken.json');
    writeFileSync(
      broken,
      JSON.stringify({
        Myspace: { url: 'https://myspace.com/{}', urlMain: 'https://myspace.com/', errorType: 'message' },
        Friendster: { urlMain: 'https://friendster.com/', errorType: 'status_code' },
      }),
    );
    const worker = AppProcess.start('worker-broken-list', DIST.worker, { ...stack.env, USERNAME_SITES_FILE: broken });
    expect(await worker.exited).toBe(1);
    expect(worker.logs).toContain(`USERNAME_SITES_FILE: ${broken}: invalid site list:`);
    expect(worker.logs).toContain('site "Myspace": errorMsg: is required when errorType is message');
    expect(worker.logs).toContain('site "Friendster": url: ');
  });
});
