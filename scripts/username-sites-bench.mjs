// A username search over a whole site list against loopback, in one process (ADR 0060): how long it takes
// and how much memory it holds, under the worker's default settings. Every site keeps its host name (a DNS
// server on loopback answers 127.0.0.1 for every name) and answers from one HTTP server, as its own
// definition says, after 100–800 ms; 5% never answer, 3% have the profile (ADR 0049's bench).
//
//   npm run build && node scripts/username-sites-bench.mjs [maigret|sherlock] [USERNAME_TOP: default|N|all] [wait: seconds|async]
import { createServer } from 'node:http';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const require = createRequire(import.meta.url);
const dist = (path) => require(resolve('dist/libs/providers/src', path));
const http = dist('http.js');
const { unguardedContext } = dist('provider.js');
const { createUsernameProvider } = dist('username/username.provider.js');
const { probeRequest } = dist('username/site-check.js');
const { loadSiteList, MAIGRET_SITES_FILE, SHERLOCK_SITES_FILE } = dist('username/site-list.js');

const [which = 'maigret', topArg = 'default', waitArg = '10'] = process.argv.slice(2);
const HANDLE = 'ghopper';

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const route = routes.get(`${req.method} ${req.headers.host}${req.url?.split('#')[0]}`);
    if (!route) return void res.writeHead(500).end();
    if (route.plan === 'hang') return; // never answers
    setTimeout(() => {
      res.writeHead(route.status, { 'content-type': 'text/html; charset=utf-8', ...route.headers });
      res.end(req.method === 'HEAD' ? undefined : route.body);
    }, route.latency);
  });
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const port = server.address().port;

const dns = createSocket('udp4');
dns.on('message', (query, peer) => {
  let end = 12;
  while (end < query.length && query[end] !== 0) end += query[end] + 1;
  const isA = query.readUInt16BE(end + 1) === 1;
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  header.writeUInt16BE(0x8180, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(isA ? 1 : 0, 6);
  const record = Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1]);
  dns.send(Buffer.concat([header, query.subarray(12, end + 5), ...(isA ? [record] : [])]), peer.port, peer.address);
});
dns.bind(0, '127.0.0.1');
await once(dns, 'listening');
http.useUpstreamNetwork({ connectTimeoutMs: 3000, dnsServers: [`127.0.0.1:${dns.address().port}`] });

// The list, every address at the server's port (scheme http, host kept).
const source = which === 'sherlock' ? SHERLOCK_SITES_FILE : MAIGRET_SITES_FILE;
const atPort = (v) => (typeof v === 'string' ? v.replace(/^https?:\/\/([^/?#:]*)(:\d+)?/i, `http://$1:${port}`) : v);
const move = (o) =>
  Object.fromEntries(
    Object.entries(o).map(([k, v]) => [k, ['url', 'urlMain', 'urlProbe', 'errorUrl'].includes(k) ? atPort(v) : v]),
  );
const data = JSON.parse(readFileSync(source, 'utf8'));
const moved =
  which === 'sherlock'
    ? Object.fromEntries(Object.entries(data).map(([n, s]) => [n, typeof s === 'object' ? move(s) : s]))
    : {
        ...data,
        sites: Object.fromEntries(Object.entries(data.sites).map(([n, s]) => [n, move(s)])),
        engines: Object.fromEntries(Object.entries(data.engines).map(([n, e]) => [n, { ...e, site: move(e.site) }])),
      };
const dir = mkdtempSync(join(tmpdir(), 'dossier-bench-'));
const file = join(dir, 'data.json');
writeFileSync(file, JSON.stringify(moved));

// Each site's plan and latency, drawn from its name (the same every run), and its answer by its own rules.
const routes = new Map();
const draw = (name, salt) => {
  let h = 2166136261 ^ salt;
  for (const ch of name) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return ((h >>> 0) % 10000) / 10000;
};
for (const site of loadSiteList(file)) {
  const req = probeRequest(site, HANDLE);
  if (!req) continue;
  const roll = draw(site.name, 1);
  const plan = roll < 0.05 ? 'hang' : roll < 0.08 ? 'found' : 'not_found';
  const type = site.errorTypes[0];
  const answer =
    plan === 'found'
      ? { status: 200, body: `<p>${site.presenceStrs[0] ?? 'a profile'}</p>` }
      : type === 'message'
        ? { status: 200, body: `<p>${site.errorMsgs[0] ?? 'nothing'}</p>` }
        : type === 'response_url'
          ? {
              status: 302,
              body: '',
              headers: { location: site.errorUrl ? site.errorUrl.replace('{}', HANDLE) : `http://x:${port}/` },
            }
          : { status: site.errorCodes[0] ?? 404, body: '' };
  const url = new URL(req.url);
  routes.set(`${req.method} ${url.host}${url.pathname}${url.search}`, {
    plan,
    latency: 100 + Math.round(draw(site.name, 2) * 700),
    ...answer,
  });
}

const settings = { USERNAME_SITES_FILE: file, ...(topArg === 'default' ? {} : { USERNAME_TOP: topArg }) };
const provider = createUsernameProvider();
let peak = { rss: 0, heapUsed: 0 };
global.gc?.();
const before = process.memoryUsage();
const sampler = setInterval(() => {
  const m = process.memoryUsage();
  peak = { rss: Math.max(peak.rss, m.rss), heapUsed: Math.max(peak.heapUsed, m.heapUsed) };
}, 50);
const started = Date.now();
const ctx = {
  ...unguardedContext(AbortSignal.timeout(120_000), settings),
  ...(waitArg === 'async' ? {} : { deadlineAt: started + Number(waitArg) * 1000 }),
};
const answer = await provider.lookup('person', { username: HANDLE }, ctx);
const took = Date.now() - started;
clearInterval(sampler);
const counts = {};
for (const r of answer.reports) if (r.provider.startsWith('site:')) counts[r.outcome] = (counts[r.outcome] ?? 0) + 1;
const mib = (b) => `${(b / 1024 / 1024).toFixed(0)} MiB`;
console.log(
  JSON.stringify({
    list: which,
    top: topArg,
    wait: waitArg,
    sites: answer.reports.filter((r) => r.provider.startsWith('site:')).length,
    took_ms: took,
    outcomes: counts,
    bytes: JSON.stringify(answer).length,
    rss: `${mib(before.rss)} → peak ${mib(peak.rss)}`,
    heap: `${mib(before.heapUsed)} → peak ${mib(peak.heapUsed)}`,
  }),
);
server.closeAllConnections();
server.close();
dns.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
