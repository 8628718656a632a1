import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, LoopbackSites, Stack, ledgerState, settled, waitFor, type SitePlan } from '@dossier/testing';

type Envelope = {
  status: string;
  search_id: string;
  results: { accounts: { service: string }[] }[];
  credits_remaining: number;
  sources: { provider: string; outcome: string }[];
  source_summary: Record<string, number>;
};
type SiteList = { sites: { name: string; tags: string[]; rank: number | null }[]; tags: { tag: string }[] };
type ErrorBody = { error: { code: string; details: { field: string; issue: string }[] } };

const SIGNUP = 100;
const HANDLE = 'ghopper42';
/** What each plan of a loopback site comes to in the answer. */
const OUTCOME: Record<SitePlan, string> = { found: 'found', not_found: 'not_found', hang: 'timeout' };

/**
 * Username presence over Sherlock's shipped site list (USERNAME_SITES_FILE), every site its own server on loopback answering
 * after 100–800 ms, 5% of them never answering (ADR 0049), through the gateway and the worker with their
 * default settings but the list's address: a search of every site answers within the caller's default wait,
 * with each site's real outcome; a search can choose the sites it checks.
 */
describe('username presence over the shipped site list (loopback sites, 100–800 ms, 5% hanging)', () => {
  let sites: LoopbackSites;
  let stack: Stack;
  let api: Api;
  let dir: string;
  let list: SiteList;

  beforeAll(async () => {
    sites = await LoopbackSites.start({
      handle: HANDLE,
      seed: 49,
      latencyMs: [100, 800],
      hangShare: 0.05,
      foundShare: 0.03,
    });
    dir = mkdtempSync(join(tmpdir(), 'dossier-username-sites-e2e-'));
    writeFileSync(join(dir, 'sites.json'), JSON.stringify(sites.list));
    stack = await Stack.start({
      label: 'username-sites',
      env: { SIGNUP_CREDITS: String(SIGNUP) },
      workerEnv: { USERNAME_SITES_FILE: join(dir, 'sites.json') },
    });
    api = new Api(stack.baseUrl);
    // The gateway checks a search's `sites` and `tags` once the person worker has reported its list.
    const { key } = await api.register(SIGNUP);
    list = await waitFor(
      () => api.get<SiteList>('/v1/username/sites', { key }),
      (r) => r.status === 200,
      { timeoutMs: 15_000, what: 'the person worker to report its sites' },
    ).then((r) => r.body);
  });
  afterAll(async () => {
    await stack?.stop();
    await sites?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers a search of every site within the caller's default wait: each site's own outcome, the hanging ones timeout, counted in source_summary", async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const before = sites.requested.length;
    const res = await api.post<Envelope>('/v1/search/person', { username: HANDLE }, { key });
    // 200: answered within the wait (10 s by default), not 202.
    expect(res.status).toBe(200);
    const asked = sites.requested.slice(before);
    const checked = res.body.sources.filter((s) => s.provider.startsWith('site:'));
    // Every site checked was asked (none left unasked when the deadline came): most of the list's 462 safe sites.
    expect(checked.map((s) => s.provider.slice('site:'.length)).sort()).toEqual([...asked].sort());
    expect(asked.length).toBeGreaterThan(400);
    const wrong = checked.filter((s) => s.outcome !== OUTCOME[sites.plans.get(s.provider.slice('site:'.length))!]);
    expect(wrong).toEqual([]);
    const count = (plan: SitePlan) => asked.filter((name) => sites.plans.get(name) === plan).length;
    expect(count('hang')).toBeGreaterThan(0);
    expect(res.body.source_summary).toEqual({
      found: count('found'),
      // and the `local` provider's
      not_found: count('not_found') + 1,
      unknown: 0,
      rate_limited: 0,
      blocked: 0,
      timeout: count('hang'),
      error: 0,
      // the `username` provider's one entry counting the sites that refuse the handle (their regexCheck)
      skipped: 1,
    });
    expect(res.body.results.map((item) => item.accounts.length)).toEqual([count('found')]);
    expect(res.body.credits_remaining).toBe(SIGNUP - 1);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('checks only the sites a search chooses: the N most popular, of the tags asked, of the names given', async () => {
    const { key } = await api.register(SIGNUP);
    expect(list.sites).toHaveLength(481 - 19);
    expect(list.sites.find((s) => s.name === 'GitHub')).toEqual({
      name: 'GitHub',
      tags: expect.arrayContaining(['coding']),
      rank: 10,
    });
    expect(list.tags.map((t) => t.tag)).toEqual(expect.arrayContaining(['coding', 'gaming', 'social']));

    const siteNames = async (body: Record<string, unknown>) => {
      const res = await api.post<Envelope>(
        '/v1/search',
        { type: 'username', query: HANDLE, ...body },
        { key, headers: { prefer: 'wait=3' } },
      );
      expect(res.status).toBe(200);
      return res.body.sources.filter((s) => s.provider.startsWith('site:')).map((s) => s.provider.slice(5));
    };
    // Most popular by Maigret's rank; answered in the list's (alphabetical) order.
    expect(await siteNames({ top: 5 })).toEqual(['GitHub', 'Instagram', 'LinkedIn', 'Twitter', 'YouTube']);
    expect(
      await siteNames({
        tags: ['Coding'],
        top: 3,
        sites: ['github', 'GitLab', 'SourceForge', 'Steam Community (User)'],
      }),
    ).toEqual(['GitHub', 'GitLab', 'SourceForge']);
  });

  it('refuses a site or a tag that no site has, naming the field, and charges nothing', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const res = await api.post<ErrorBody>(
      '/v1/search/person',
      { username: HANDLE, sites: ['GitHub', 'NoSuchSite'], tags: ['knitting'] },
      { key },
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'validation_error',
      details: [
        { field: 'sites', issue: 'no site named "NoSuchSite" is checked (GET /v1/username/sites lists them)' },
        { field: 'tags', issue: 'no site carries the tag "knitting" (GET /v1/username/sites lists them)' },
      ],
    });
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 0, captures: 0, releases: 0 }));
  });
});
