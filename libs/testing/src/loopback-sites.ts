import { createServer, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { REPO_ROOT } from './repo-root';

/** Sherlock's site list, shipped for username presence beside Maigret's (the default): the one the loopback sites copy. */
export const SHIPPED_SITES_FILE = resolve(REPO_ROOT, 'libs/providers/src/username/sherlock/data.json');

/** What a loopback site does with the searched handle: show its profile, say it has none, or never answer. */
export type SitePlan = 'found' | 'not_found' | 'hang';

export interface LoopbackSitesOptions {
  /** The handle the sites are scripted for (any other gets the site's not-found answer, with the same latency). */
  handle: string;
  /** Seeds each site's plan and latency: the same seed scripts the same sites. */
  seed: number;
  /** Each answer comes after a latency drawn evenly from this range (ms). */
  latencyMs: readonly [number, number];
  /** The share of sites that never answer the handle. */
  hangShare: number;
  /** The share of sites that have a profile of the handle. */
  foundShare: number;
  /** The list copied (Sherlock's format); default the shipped one. */
  file?: string;
}

/** One site of a Sherlock-format list, as read from its JSON. */
interface SiteEntry {
  url: string;
  urlMain: string;
  urlProbe?: string;
  errorType: string | string[];
  errorMsg?: string | string[];
  errorUrl?: string;
  errorCode?: number | number[];
  request_method?: string;
  [field: string]: unknown;
}

const list = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** A deterministic PRNG (mulberry32) seeded from a number and a site name: each site's draws are its own. */
function random(seed: number, name: string): () => number {
  let state = seed >>> 0;
  for (const ch of name) state = Math.imul(state ^ ch.charCodeAt(0), 2654435761) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `https://www.example.com/u/{}` at loopback `base`: the path kept; a handle in the host name
 * (`https://{}.tumblr.com/`) goes to the front of the path (`/{}.tumblr.com/`), as every site is one port.
 */
function atLoopback(template: string, base: string): string {
  const m = /^https?:\/\/([^/?#]*)(.*)$/i.exec(template);
  if (!m) return template;
  const [, host = '', rest = ''] = m;
  return host.includes('{}') ? `${base}/${host}${rest.startsWith('/') ? rest : `/${rest}`}` : `${base}${rest || '/'}`;
}

/**
 * A copy of a username site list whose every site is its own server on loopback (its own port, so its own
 * host for the worker's per-host limit), answering after a latency drawn for it, and scripted per site: a
 * share of them show a profile of the handle, a share never answer it (a site that hangs), the rest give the
 * not-found answer their own rule names (a 404 or their `errorCode`, a page with their `errorMsg`, a redirect
 * to their `errorUrl`). `list` is the copy to write to a USERNAME_SITES_FILE; `requested` the sites asked.
 */
export class LoopbackSites {
  /** The sites asked for the handle (by name), in the order their requests came. */
  readonly requested: string[] = [];
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    /** The copy of the list, each site at its loopback server. */
    readonly list: Record<string, SiteEntry>,
    /** What each site does with the handle. */
    readonly plans: ReadonlyMap<string, SitePlan>,
    private readonly servers: Server[],
  ) {}

  static async start(options: LoopbackSitesOptions): Promise<LoopbackSites> {
    const data = JSON.parse(readFileSync(options.file ?? SHIPPED_SITES_FILE, 'utf8')) as Record<string, unknown>;
    const entries = Object.entries(data).filter(([name]) => !name.startsWith('$')) as [string, SiteEntry][];
    const servers: Server[] = [];
    const copy: Record<string, SiteEntry> = {};
    const plans = new Map<string, SitePlan>();
    const sites = new LoopbackSites(copy, plans, servers);
    try {
      for (const [name, site] of entries) {
        const draw = random(options.seed, name);
        const roll = draw();
        const plan: SitePlan =
          roll < options.hangShare ? 'hang' : roll < options.hangShare + options.foundShare ? 'found' : 'not_found';
        const [min, max] = options.latencyMs;
        const latency = Math.round(min + draw() * (max - min));
        plans.set(name, plan);
        const server = createServer((req, res) => {
          // A site reads its request before it answers: the handle is in its address or its payload (a POST's).
          const chunks: Buffer[] = [];
          req.on('data', (chunk: Buffer) => chunks.push(chunk));
          req.on('end', () => {
            const asked = `${decodeURIComponent(req.url ?? '/')} ${Buffer.concat(chunks).toString()}`;
            sites.answer(
              name,
              site,
              plan,
              latency,
              options.handle,
              asked.includes(options.handle),
              req.url ?? '/',
              res,
            );
          });
        });
        servers.push(server);
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
        const address = server.address();
        if (typeof address !== 'object' || address === null) throw new Error(`loopback site ${name} has no port`);
        const base = `http://127.0.0.1:${address.port}`;
        copy[name] = {
          ...site,
          url: atLoopback(site.url, base),
          urlMain: `${base}/`,
          ...(site.urlProbe ? { urlProbe: atLoopback(site.urlProbe, base) } : {}),
          ...(site.errorUrl ? { errorUrl: atLoopback(site.errorUrl, base) } : {}),
        };
      }
    } catch (error) {
      await sites.close();
      throw error;
    }
    return sites;
  }

  /** How many of the sites asked for the handle were scripted to `plan`. */
  countRequested(plan: SitePlan): number {
    return this.requested.filter((name) => this.plans.get(name) === plan).length;
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    await Promise.all(
      this.servers.map((server) => {
        server.closeAllConnections();
        return new Promise<void>((done) => server.close(() => done()));
      }),
    );
  }

  private answer(
    name: string,
    site: SiteEntry,
    plan: SitePlan,
    latency: number,
    handle: string,
    asked: boolean,
    path: string,
    res: ServerResponse,
  ): void {
    if (asked) this.requested.push(name);
    const outcome = asked ? plan : 'not_found';
    if (outcome === 'hang') {
      this.hanging.add(res);
      res.on('close', () => this.hanging.delete(res));
      return;
    }
    const timer = setTimeout(() => {
      if (res.destroyed) return;
      const head = site.request_method === 'HEAD';
      if (outcome === 'found') {
        const messages = list(site.errorMsg);
        const page = `<!DOCTYPE html><html><head><title>${handle}</title></head><h1>${handle}</h1></html>`;
        const body = messages.some((m) => page.includes(m)) ? handle : page;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(head ? undefined : body);
        return;
      }
      const types = list(site.errorType);
      // A redirect to the error page; a site whose error page is the profile's own address (or no address)
      // answers there with a 404 instead of sending the check round in circles.
      const errorUrl = /^https?:\/\//i.test(site.errorUrl ?? '')
        ? atLoopback(site.errorUrl!.replaceAll('{}', encodeURIComponent(handle)), `http://${res.req.headers.host}`)
        : null;
      if (
        types.includes('response_url') &&
        errorUrl &&
        new URL(errorUrl).pathname !== new URL(path, errorUrl).pathname
      ) {
        res.writeHead(302, { location: errorUrl }).end();
        return;
      }
      const status =
        types.includes('status_code') || types.includes('response_url') ? (list(site.errorCode)[0] ?? 404) : 200;
      const message = list(site.errorMsg)[0] ?? 'Not Found';
      res
        .writeHead(status, { 'content-type': 'text/html; charset=utf-8' })
        .end(head ? undefined : `<!DOCTYPE html><html><body><p>${message}</p></body></html>`);
    }, latency);
    res.on('close', () => clearTimeout(timer));
  }
}
