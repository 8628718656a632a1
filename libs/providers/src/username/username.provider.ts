import { createHash } from 'node:crypto';
import { bareHandle, byPopularity, mapLimit, selectSites, Slots } from '@dossier/domain';
import type { PersonInput, PersonRecordItem, SourceReport } from '@dossier/contracts';
import type { UpstreamRequest } from '../http';
import { reportOfFailure, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';
import { decide, exchange, PAGE_BUDGET_BYTES, PageBudget, probeRequest, profileUrl, siteId } from './site-check';
import { usernameSettings, type Site } from './site-list';

const ID = 'username';
/**
 * The whole check's longest run: a search that waits for its answer gets it within its wait (the rest of the
 * sites `timeout`); an asynchronous one (`Prefer: respond-async`, or a job taken after its caller's wait had
 * passed) within this.
 */
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * How long before its deadline the check ends the sites still running: time to make their reports and the
 * item before the fan-out's deadline cuts the whole provider (a tenth of what is left, at most half a second).
 */
function marginMs(leftMs: number): number {
  return Math.min(500, Math.floor(leftMs / 10));
}

/**
 * How sure the item is about its subject: the handle matches exactly — the one thing the caller gave —
 * but the same handle on two sites is no proof that one person holds both (common handles are taken
 * everywhere by different people). 0.5: "as likely as not one subject", below any record that matches
 * on a name and more.
 */
export const USERNAME_MATCH_SCORE = 0.5;

/** The handle as the sites know it (`bareHandle`: trimmed, without a leading `@`); null when nothing is left. */
export function handleOf(input: PersonInput): string | null {
  const handle = bareHandle(input.username ?? '');
  return handle ? handle : null;
}

/** A stable id for the item of a handle: the same handle (in any case) gives the same id, in every search. */
export function usernameItemId(handle: string): string {
  return `per_usr_${createHash('sha256').update(handle.toLowerCase()).digest('base64url').slice(0, 20)}`;
}

function usernameItem(handle: string, found: { site: Site; report: SourceReport }[]): PersonRecordItem {
  return {
    id: usernameItemId(handle),
    full_name: null,
    first_name: null,
    last_name: null,
    aliases: [],
    emails: [],
    phones: [],
    usernames: [handle],
    accounts: found.map(({ site }) => ({ service: site.name, username: handle, url: profileUrl(site, handle) })),
    locations: [],
    age: null,
    birth_year: null,
    match_score: USERNAME_MATCH_SCORE,
    matched_on: ['username'],
    sources: found.map(({ report }) => report.provider),
  };
}

/**
 * The site checks in flight in this process, every lookup's together (USERNAME_MAX_CONNECTIONS): one per
 * size, as settings give it (one in a worker; tests ask for others).
 */
const connectionSlots = new Map<number, Slots>();

function slotsOf(size: number): Slots {
  let slots = connectionSlots.get(size);
  if (!slots) connectionSlots.set(size, (slots = new Slots(size)));
  return slots;
}

/** The page bytes every lookup's site checks hold at once in this process (PAGE_BUDGET_BYTES). */
const pageBudget = new PageBudget(PAGE_BUDGET_BYTES);

/**
 * The site checks in flight to each host (`host:port` of the request asked first), every lookup's together
 * (USERNAME_MAX_PER_HOST): per size, then per host — as many as the list has hosts.
 */
const hostSlots = new Map<number, Map<string, Slots>>();

function hostSlotsOf(size: number, url: string): Slots {
  let hosts = hostSlots.get(size);
  if (!hosts) hostSlots.set(size, (hosts = new Map()));
  const host = new URL(url).host.toLowerCase();
  let slots = hosts.get(host);
  if (!slots) hosts.set(host, (slots = new Slots(size)));
  return slots;
}

/**
 * Checks one site through the fan-out's guards for that site (its own breaker, retries of 5xx and refused
 * connections), within the per-site timeout and the whole check's budget. It first waits for its host's
 * turn (USERNAME_MAX_PER_HOST), then for one of the process's connection slots — a check waiting on a busy
 * host holds no connection slot — (the per-site time starts once it has both), and holds them until the
 * site's answer is read — the answer's connection closed. Never rejects: every end is a report, `found` and
 * `not_found` included.
 */
async function checkSite(
  { site, req }: { site: Site; req: UpstreamRequest },
  handle: string,
  ctx: ProviderContext,
  limits: { timeoutMs: number; budget: AbortSignal; slots: Slots; hostSlots: Slots; pages: PageBudget },
): Promise<SourceReport> {
  const id = siteId(site);
  const notReached: SourceReport = {
    provider: id,
    outcome: 'timeout',
    took_ms: 0,
    detail: `${id}: not reached before the check's deadline`,
  };
  const releases: (() => void)[] = [];
  try {
    releases.push(await limits.hostSlots.take(limits.budget));
    releases.push(await limits.slots.take(limits.budget));
  } catch {
    releases.forEach((release) => release());
    return notReached;
  }
  try {
    return await checkHeld({ site, req }, handle, ctx, limits);
  } finally {
    releases.reverse().forEach((release) => release());
  }
}

async function checkHeld(
  { site, req }: { site: Site; req: UpstreamRequest },
  handle: string,
  ctx: ProviderContext,
  limits: { timeoutMs: number; budget: AbortSignal; pages: PageBudget },
): Promise<SourceReport> {
  const id = siteId(site);
  const started = Date.now();
  // One per-site timer for every attempt: made inside the retried call, each retry got the whole timeout again.
  const perSite = AbortSignal.any([limits.budget, AbortSignal.timeout(limits.timeoutMs)]);
  try {
    const verdict = await ctx.upstream({ id }, (signal) => {
      const within = AbortSignal.any([signal, perSite]);
      // Each attempt's page is counted against the process's budget until it is judged.
      const claim = limits.pages.claim();
      return exchange(site, handle, { ...req, allowance: claim }, within)
        .then((ex) => decide(site, handle, { ...ex, cutShort: claim.short }))
        .finally(() => claim.release());
    });
    const took = Date.now() - started;
    return verdict.outcome === 'unknown'
      ? { provider: id, outcome: 'unknown', took_ms: took, detail: verdict.detail }
      : { provider: id, outcome: verdict.outcome, took_ms: took };
  } catch (error) {
    return reportOfFailure(id, error, Date.now() - started);
  }
}

/**
 * Username presence on public sites (Maigret's or Sherlock's site list format): one `site:<Name>` report per
 * site checked, and the profiles found as `accounts[]` of one person item of their own. Sites whose
 * `regexCheck` (or address) refuses the handle are not checked: one `username` report, `skipped`, counts and names them.
 */
export function createUsernameProvider(
  defaultTimeoutMs = DEFAULT_TIMEOUT_MS,
  pages: PageBudget = pageBudget,
): Provider<'person'> {
  // The sites still running when the check's time is up are cut a little before the fan-out's own
  // deadline, so that the answer carries each site's report rather than one `timeout` for the provider.
  const budgetMs = defaultTimeoutMs - marginMs(defaultTimeoutMs);
  return {
    id: ID,
    kinds: ['person'],
    configKeys: [
      'USERNAME_SITES_FILE',
      'USERNAME_SITES',
      'USERNAME_INCLUDE_NSFW',
      'USERNAME_TOP',
      'USERNAME_TIMEOUT_MS',
      'USERNAME_CONCURRENCY',
      'USERNAME_MAX_CONNECTIONS',
      'USERNAME_MAX_PER_HOST',
    ],
    defaultTimeoutMs,
    transport: 'http',
    validateSettings: (settings) => void usernameSettings(settings),
    isConfigured(settings) {
      let sites: readonly Site[];
      try {
        ({ sites } = usernameSettings(settings));
      } catch (error) {
        return (error as Error).message;
      }
      return sites.length > 0 || 'no sites to check (USERNAME_SITES_FILE, USERNAME_SITES, USERNAME_INCLUDE_NSFW)';
    },
    appliesTo: (input) => handleOf(input) !== null,

    async lookup(_kind, input: PersonInput, ctx: ProviderContext): Promise<ProviderAnswer<'person'>> {
      const started = Date.now();
      const handle = handleOf(input);
      const { sites, timeoutMs, concurrency, maxConnections, maxPerHost } = usernameSettings(ctx.settings);
      const chosen = selectSites(sites, input);
      // Names the gateway could not check (no worker had reported its list yet): said, not silently dropped.
      const unknown = chosen.unknownSites.map((name): SourceReport => {
        const id = siteId({ name });
        return { provider: id, outcome: 'skipped', took_ms: 0, detail: `${id}: no site of that name is checked here` };
      });
      // Checked most popular first (a check its deadline cuts short has asked those), reported in the list's order.
      const at = new Map(chosen.sites.map((site, i) => [site, i]));
      const refused: Site[] = [];
      const probes = byPopularity(chosen.sites).flatMap((site) => {
        const req = handle === null ? null : probeRequest(site, handle);
        if (!req) refused.push(site);
        return req ? [{ site, req, at: at.get(site)! }] : [];
      });
      if (handle === null || probes.length === 0) {
        const detail =
          chosen.sites.length === 0
            ? 'no configured site is among the sites and tags asked for'
            : 'no configured site accepts this username (each refuses it by its regexCheck or its address)';
        return {
          outcome: 'unknown',
          items: [],
          reports: [{ provider: ID, outcome: 'skipped', took_ms: 0, detail }, ...unknown],
        };
      }
      const own = started + budgetMs;
      const end =
        ctx.deadlineAt === undefined ? own : Math.min(own, ctx.deadlineAt - marginMs(ctx.deadlineAt - started));
      const budget = AbortSignal.any([ctx.signal, AbortSignal.timeout(Math.max(1, Math.floor(end - started)))]);
      const answered: { at: number; site: Site; report: SourceReport }[] = [];
      const snapshot = () => listed(handle, answered, probes.length - answered.length);
      await mapLimit(probes, concurrency, async (probe) => {
        const report = await checkSite(probe, handle, ctx, {
          timeoutMs,
          budget,
          slots: slotsOf(maxConnections),
          hostSlots: hostSlotsOf(maxPerHost, probe.req.url),
          pages,
        });
        answered.push({ at: probe.at, site: probe.site, report });
        ctx.progress?.(snapshot);
      });
      const { items, reports } = listed(handle, answered, 0);
      const others = [...refusedReport(refused, chosen.sites.length), ...unknown];
      if (items.length > 0) return { outcome: 'found', items, reports: [...reports, ...others] };
      const nothing = reports.every((r) => r.outcome === 'not_found');
      return { outcome: nothing ? 'not_found' : 'unknown', items: [], reports: [...reports, ...others] };
    },
  };
}

/**
 * The sites that cannot have the handle (their regexCheck or address refuses it), said in one `username` report:
 * they are not checked, so have no `site:` entry of their own. None when every chosen site was checked.
 */
function refusedReport(refused: readonly Site[], chosen: number): SourceReport[] {
  if (refused.length === 0) return [];
  const names = refused.slice(0, 10).map((site) => site.name);
  const more = refused.length > 10 ? ', …' : '';
  return [
    {
      provider: ID,
      outcome: 'skipped',
      took_ms: 0,
      detail: `${refused.length} of ${chosen} sites not checked (${chosen - refused.length} checked): their regexCheck or address refuses this username (${names.join(', ')}${more})`,
    },
  ];
}

/** The sites answered so far in the list's order: their reports, and the item of the profiles found (if any). */
function listed(
  handle: string,
  answered: readonly { at: number; site: Site; report: SourceReport }[],
  pending: number,
): { items: PersonRecordItem[]; reports: SourceReport[]; pending: number } {
  const inOrder = [...answered].sort((a, b) => a.at - b.at);
  const found = inOrder.filter(({ report }) => report.outcome === 'found');
  return {
    items: found.length > 0 ? [usernameItem(handle, found)] : [],
    reports: inOrder.map(({ report }) => report),
    pending,
  };
}

/** The sites a worker checks, as a search chooses them (ADR 0049): names, tags and ranks, in the list's order. */
export function usernameSiteCatalog(
  settings: Readonly<Record<string, string | undefined>>,
): { name: string; tags: readonly string[]; rank: number | null }[] {
  return usernameSettings(settings).sites.map(({ name, tags, rank }) => ({ name, tags, rank }));
}

export const usernameProvider = createUsernameProvider();
