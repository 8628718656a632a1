import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mapLimit } from '@dossier/domain';
import { createSocket, type Socket } from 'node:dgram';
import { useUpstreamNetwork, DEFAULT_CONNECT_TIMEOUT_MS } from '../http';
import { unguardedContext } from '../provider';
import { looksLikeChallenge } from '../http';
import { probeRequest } from './site-check';
import { loadSiteList, MAIGRET_SITES_FILE, siteListReport, type Site } from './site-list';
import { createUsernameProvider } from './username.provider';

/**
 * Every site of Maigret's database that the loader takes, checked by the username provider against one
 * loopback server that answers as the site would by its own definition: for its `usernameClaimed` a profile
 * (a 2xx page carrying one of its `presenseStrs`), for its `usernameUnclaimed` its not-found answer (a 404 by
 * status code, a page with one of its `absenceStrs`, a redirect for `response_url`). The sites keep their host
 * names — a fake DNS server points every one at 127.0.0.1, and the server tells them apart by the Host header,
 * path and body — only their scheme and port change (http, the server's port). A site whose definition
 * cannot be answered that way is counted by why, never skipped unsaid.
 */

type Plan = 'claimed' | 'unclaimed';
interface Scripted {
  site: string;
  plan: Plan;
  status: number;
  body: string;
  location?: string;
}

/** Why a site's check could not be run against its own definition. */
type Unsimulated =
  | 'no usernameClaimed'
  | 'usernameClaimed refused by its own regexCheck or address'
  | 'usernameUnclaimed refused by its own regexCheck or address'
  | 'its request is the same as another site’s'
  | 'no page can carry a sign of a profile without a sign of absence or failure';

let dir: string;
let server: Server;
let dns: Socket;
let port: number;
const routes = new Map<string, Scripted | 'shared'>();

/** `https://host/…` (any scheme and port) as `http://host:<port>/…`: the site's host kept, the server's port. */
function atPort(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  return text.replace(/^https?:\/\/([^/?#:]*)(:\d+)?/i, (_m, host: string) => `http://${host}:${port}`);
}

/** Maigret's data.json with every site (and engine) address at the loopback port. */
function atLoopback(data: {
  sites: Record<string, Record<string, unknown>>;
  engines: Record<string, { site: Record<string, unknown> }>;
}) {
  const move = (fields: Record<string, unknown>) => {
    const out = { ...fields };
    for (const key of ['url', 'urlMain', 'urlProbe']) if (key in out) out[key] = atPort(out[key]);
    return out;
  };
  return {
    ...data,
    sites: Object.fromEntries(Object.entries(data.sites).map(([name, site]) => [name, move(site)])),
    engines: Object.fromEntries(
      Object.entries(data.engines).map(([name, engine]) => [name, { ...engine, site: move(engine.site) }]),
    ),
  };
}

/** A request as the server sees it: method, address (without its fragment, which is not sent) and body. */
function keyOf(method: string, url: string, body: string): string {
  const address = new URL(url);
  address.hash = '';
  return `${method} ${address.href} ${body}`;
}

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const route = routes.get(
    keyOf(req.method ?? 'GET', `http://${req.headers.host}${req.url}`, Buffer.concat(chunks).toString()),
  );
  if (route === undefined || route === 'shared') {
    res.writeHead(500).end('not scripted');
    return;
  }
  res.writeHead(route.status, {
    'content-type': 'text/html; charset=utf-8',
    ...(route.location ? { location: route.location } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : route.body);
}

/** What `site` would answer for a name of `plan`, by its definition; null when no page can say it. */
function scripted(site: Site, plan: Plan): Omit<Scripted, 'site' | 'plan'> | null {
  const type = site.errorTypes[0];
  const clean = (page: string) =>
    !site.errorMsgs.some((msg) => page.includes(msg)) &&
    !site.failureSigns.some((sign) => page.includes(sign.text)) &&
    !looksLikeChallenge(page, new Headers({ 'content-type': 'text/html' }), { page: true });
  if (plan === 'claimed') {
    if (site.presenceStrs.length === 0) return { status: 200, body: '<p>a profile</p>' };
    const body = site.presenceStrs.map((sign) => `<p>${sign}</p>`).find(clean);
    return body === undefined ? null : { status: 200, body };
  }
  if (type === 'status_code') return { status: 404, body: '<p>not here</p>' };
  if (type === 'response_url')
    return { status: 302, body: '', location: `http://${new URL(site.url.replace('{}', 'x')).host}/` };
  const absent = site.errorMsgs[0];
  return { status: 200, body: absent !== undefined ? `<p>${absent}</p>` : '<p>nothing</p>' };
}

/**
 * A DNS server on loopback (UDP) that answers every name's A query with 127.0.0.1 and any other type with no
 * records: the sites keep their host names. (FakeDns scripts names one by one and records every query, which
 * at 5,000 checks cost more than the checks.)
 */
async function everyNameAtLoopback(): Promise<Socket> {
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    let end = 12;
    while (end < query.length && query[end] !== 0) end += query[end]! + 1;
    const question = query.subarray(12, end + 5);
    const isA = query.readUInt16BE(end + 1) === 1;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the id
    header.writeUInt16BE(0x8180, 2); // a response, recursion desired and available, NOERROR
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(isA ? 1 : 0, 6);
    // The name (a pointer to the question's), A, IN, 60 s, 4 bytes: 127.0.0.1.
    const record = Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1]);
    socket.send(Buffer.concat([header, question, ...(isA ? [record] : [])]), peer.port, peer.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return socket;
}

let file: string;
let names: Map<string, { claimed?: string; unclaimed?: string }>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dossier-maigret-'));
  server = createServer((req, res) => void answer(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as { port: number }).port;
  dns = await everyNameAtLoopback();
  // A connect timeout far longer than loopback needs, so that a busy machine does not fail a check.
  useUpstreamNetwork({
    connectTimeoutMs: 30_000,
    dnsServers: [`127.0.0.1:${dns.address().port}`],
  });
  const data = JSON.parse(readFileSync(MAIGRET_SITES_FILE, 'utf8')) as Parameters<typeof atLoopback>[0];
  names = new Map(
    Object.entries(data.sites).map(([name, site]) => [
      name,
      {
        claimed: site['usernameClaimed'] as string | undefined,
        unclaimed: site['usernameUnclaimed'] as string | undefined,
      },
    ]),
  );
  file = join(dir, 'data.json');
  writeFileSync(file, JSON.stringify(atLoopback(data)));
});

afterAll(async () => {
  useUpstreamNetwork({ connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS, dnsServers: null });
  server?.close();
  dns?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("every site of Maigret's database the loader takes, against its own definition on loopback", () => {
  it("finds each site's usernameClaimed and not its usernameUnclaimed, counting the sites that cannot be simulated by why", async () => {
    const sites = loadSiteList(file);
    expect(sites).toHaveLength(siteListReport(MAIGRET_SITES_FILE).accepted);
    const unsimulated = new Map<Unsimulated, string[]>();
    const unsimulable = (site: Site, why: Unsimulated) => {
      unsimulated.set(why, [...(unsimulated.get(why) ?? []), site.name]);
      return [];
    };
    const runs = sites.flatMap((site) => {
      const { claimed, unclaimed } = names.get(site.name)!;
      if (!claimed || !unclaimed) return unsimulable(site, 'no usernameClaimed');
      const plans = [
        {
          plan: 'claimed' as const,
          handle: claimed,
          req: probeRequest(site, claimed),
          answer: scripted(site, 'claimed'),
        },
        {
          plan: 'unclaimed' as const,
          handle: unclaimed,
          req: probeRequest(site, unclaimed),
          answer: scripted(site, 'unclaimed'),
        },
      ];
      if (!plans[0]!.req) return unsimulable(site, 'usernameClaimed refused by its own regexCheck or address');
      if (!plans[1]!.req) return unsimulable(site, 'usernameUnclaimed refused by its own regexCheck or address');
      if (!plans[0]!.answer || !plans[1]!.answer)
        return unsimulable(site, 'no page can carry a sign of a profile without a sign of absence or failure');
      return plans.map(({ plan, handle, req, answer }) => ({ site, plan, handle, req: req!, answer: answer! }));
    });
    // One route per request; a request two sites both make, expecting different answers, cannot be told apart.
    const byKey = new Map<string, { answer: string; sites: Set<string> }>();
    for (const run of runs) {
      const key = keyOf(run.req.method ?? 'GET', run.req.url, run.req.body ?? '');
      const answer = JSON.stringify(run.answer);
      const seen = byKey.get(key) ?? { answer, sites: new Set<string>() };
      byKey.set(key, { answer: seen.answer === answer ? answer : 'conflict', sites: seen.sites.add(run.site.name) });
      routes.set(key, { site: run.site.name, plan: run.plan, ...run.answer });
    }
    const shared = new Set(
      [...byKey.values()].filter((route) => route.answer === 'conflict').flatMap((route) => [...route.sites]),
    );
    for (const name of shared)
      unsimulable(
        sites.find((s) => s.name === name)!,
        'its request is the same as another site’s',
      );
    const checked = runs.filter((run) => !shared.has(run.site.name));

    // One search per username (sites share their test names: 2,500 sites, some 770 names), of the sites it is theirs on.
    // Time is not what is tested: each site has the longest USERNAME_TIMEOUT_MS, and a search 10 minutes.
    const settings = {
      USERNAME_SITES_FILE: file,
      USERNAME_INCLUDE_NSFW: 'true',
      USERNAME_TOP: 'all',
      USERNAME_TIMEOUT_MS: '60000',
    };
    const provider = createUsernameProvider(600_000);
    const searches = new Map<string, { plan: Plan; handle: string; sites: string[] }>();
    for (const run of checked) {
      const key = `${run.plan} ${run.handle}`;
      const search = searches.get(key) ?? { plan: run.plan, handle: run.handle, sites: [] };
      search.sites.push(run.site.name);
      searches.set(key, search);
    }
    const verdicts = (
      await mapLimit([...searches.values()], 8, async ({ plan, handle, sites: names }) => {
        const ctx = unguardedContext(AbortSignal.timeout(600_000), settings);
        const answer = await provider.lookup('person', { username: handle, sites: names }, ctx);
        return names.map((name) => {
          const report = answer.reports?.find((r) => r.provider === `site:${name}`);
          return { name, plan, outcome: report?.outcome, detail: report?.detail };
        });
      })
    ).flat();
    const wrong = verdicts.filter((v) => v.outcome !== (v.plan === 'claimed' ? 'found' : 'not_found'));
    expect(wrong).toEqual([]);

    const simulated = new Set(checked.map((run) => run.site.name)).size;
    const count = (plan: Plan) => verdicts.filter((v) => v.plan === plan).length;
    // The figures ADR 0060 and docs/providers.md give: every site simulated found by its claimed name, and not
    // found by its unclaimed one; the others, each counted by why.
    expect({
      accepted: sites.length,
      simulated,
      found: count('claimed'),
      notFound: count('unclaimed'),
      unsimulated: Object.fromEntries([...unsimulated].map(([why, list]) => [why, list.length])),
    }).toEqual({
      accepted: 2504,
      simulated: 2486,
      found: 2486,
      notFound: 2486,
      unsimulated: {
        // Wix's `support` and crafta.ua's `test` go into the host name, where they are the site's own services
        // (RESERVED_HOST_LABELS); Tuna's `bob` is refused by its own pattern. The unclaimed ones (NameMC, …) are
        // longer than their patterns allow: never checked, so never found, but not a check of the rule either.
        'usernameClaimed refused by its own regexCheck or address': 3,
        'usernameUnclaimed refused by its own regexCheck or address': 4,
        'no usernameClaimed': 1,
        // profi.ru and Profi.ru, d3 and d3.ru, …: the same site twice in Maigret's database, with different rules.
        'its request is the same as another site’s': 10,
      },
    });
  }, 900_000);
});
