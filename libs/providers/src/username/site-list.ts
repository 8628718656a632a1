import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { byPopularity } from '@dossier/domain';
import { checkSwitch, integerSetting } from '../http';
import { isMaigretList, parseMaigretList, REFUSALS, type Refusal, type RefusedSite } from './maigret-list';
import { parseSherlockList } from './sherlock-list';
import type { Site } from './site';

/**
 * Site definitions for username presence, in Sherlock's `data.json` format or Maigret's (told apart by their
 * shape: Maigret's has `sites` and `engines` at its top). The default list is Maigret's database, in `maigret/`
 * beside this file with its MIT licence; Sherlock's is in `sherlock/`. Each file is read, validated and
 * compiled once per process. A broken Sherlock site is an error naming the file, the site and the field; a
 * Maigret site that cannot be checked is left out and counted by why (`siteListReport`).
 */

export type { ErrorType, Site } from './site';

const here = () =>
  // Jest runs the sources as ES modules, without __dirname; its working directory is the repository.
  typeof __dirname === 'string' ? __dirname : resolve('libs/providers/src/username');

/** Maigret's database, shipped in the repository (copied beside the compiled code by the build: nest-cli.json assets). */
export const MAIGRET_SITES_FILE = join(here(), 'maigret', 'data.json');
/** Sherlock's list, shipped beside it: `USERNAME_SITES_FILE` chooses it. */
export const SHERLOCK_SITES_FILE = join(here(), 'sherlock', 'data.json');
/** The list read when USERNAME_SITES_FILE is not set (ADR 0060). */
export const DEFAULT_SITES_FILE = MAIGRET_SITES_FILE;

/** What a list file holds: its format, its sites that can be checked, and every other one with why not. */
export interface SiteList {
  format: 'sherlock' | 'maigret';
  sites: readonly Site[];
  refused: readonly RefusedSite[];
}

const loaded = new Map<string, SiteList>();

/** Every site of a list file that can be checked, in the file's order; read and validated once per file (then cached). */
export function loadSiteList(file: string): readonly Site[] {
  return readSiteList(file).sites;
}

function readSiteList(file: string): SiteList {
  const path = resolve(file);
  const cached = loaded.get(path);
  if (cached) return cached;
  const list = parseAnySiteList(readJson(path, 'site list'), path);
  loaded.set(path, list);
  return list;
}

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new Error(`${path}: cannot read the ${what} (${typeof code === 'string' ? code : 'read error'})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`${path}: the ${what} is not JSON (${(error as Error).message})`);
  }
}

/** A parsed list in either format (Maigret's when it has `sites` and `engines` objects, else Sherlock's). */
export function parseAnySiteList(data: unknown, origin: string): SiteList {
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new Error(`${origin}: the site list must be an object of site name → definition`);
  const fields = data as Record<string, unknown>;
  if (isMaigretList(fields)) return { format: 'maigret', ...parseMaigretList(fields, origin) };
  return { format: 'sherlock', sites: parseSherlockList(fields, origin), refused: [] };
}

/** The sites of a parsed list that can be checked (a broken Sherlock site throws; see parseAnySiteList). */
export function parseSiteList(data: unknown, origin: string): Site[] {
  return [...parseAnySiteList(data, origin).sites];
}

/** What the loader makes of a list file: the sites in it, those it takes, and those it leaves out, by why. */
export interface SiteListReport {
  file: string;
  format: SiteList['format'];
  inFile: number;
  accepted: number;
  /** Per reason (REFUSALS), the sites left out, in the file's order. */
  refused: Partial<Record<Refusal, string[]>>;
}

export function siteListReport(file: string): SiteListReport {
  const list = readSiteList(file);
  const refused: SiteListReport['refused'] = {};
  for (const site of list.refused) (refused[site.reason] ??= []).push(site.name);
  return {
    file,
    format: list.format,
    inFile: list.sites.length + list.refused.length,
    accepted: list.sites.length,
    refused,
  };
}

export { REFUSALS };

export interface UsernameSettings {
  sites: readonly Site[];
  /** The file the sites come from (for messages). */
  file: string;
  timeoutMs: number;
  concurrency: number;
  /** Site checks in flight in this process, every lookup's together: each holds one connection at most. */
  maxConnections: number;
  /** Of those, at most this many to one host (the probe's `host:port`), every lookup's together. */
  maxPerHost: number;
  /** The sites kept: the file's N most popular (USERNAME_TOP); null: all of them. */
  top: number | null;
}

const DEFAULT_TIMEOUT_MS = 8000;
/**
 * Maigret's default (`--max-connections 100`): the shipped list's sites, 100–800 ms each with 5% hanging, are all
 * answered within the default 10 s wait (at 32, a fifth of them were not reached before it: ADR 0049).
 */
const DEFAULT_CONCURRENCY = 100;
/** Two and a half lookups' worth at USERNAME_CONCURRENCY's default; at the person queue's default 16 jobs, 16 each. */
const DEFAULT_MAX_CONNECTIONS = 256;
/**
 * Parallel lookups walk the list in the same order: at the person queue's 16 jobs, each site had 16
 * requests at once, which is what sites rate-limit and wall. Four lets a lookup's sites that share a host
 * (two at most in the shipped list: Genius's artists and users) go together, so one lookup is not slowed.
 */
const DEFAULT_MAX_PER_HOST = 4;
/**
 * Maigret's own default (`--top-sites 500`), and what a search of every site answers within the default 10 s
 * wait: of Maigret's 2,472 sites, 500 are (ADR 0060); all of them take about 30 s.
 */
const DEFAULT_TOP = 500;

/**
 * The username settings, resolved: the list from `USERNAME_SITES_FILE` (default: Maigret's, shipped),
 * narrowed to `USERNAME_SITES` (names, case-insensitive), NSFW sites only with `USERNAME_INCLUDE_NSFW=true`,
 * then to its `USERNAME_TOP` most popular (by rank, the unranked after them in the file's order; default 500,
 * none when USERNAME_SITES names them, `all` for every one), kept in the file's order.
 * Throws an Error naming the variable (or the file, site and field) when something is wrong.
 */
export function usernameSettings(settings: Readonly<Record<string, string | undefined>>): UsernameSettings {
  const file = settings['USERNAME_SITES_FILE'] ?? DEFAULT_SITES_FILE;
  let all: readonly Site[];
  try {
    all = loadSiteList(file);
  } catch (error) {
    throw new Error(`USERNAME_SITES_FILE: ${(error as Error).message}`);
  }
  const nsfw = flag(settings, 'USERNAME_INCLUDE_NSFW');
  const wanted = (settings['USERNAME_SITES'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  let sites = all.filter((site) => nsfw || !site.nsfw);
  if (wanted.length > 0) {
    const byName = new Map(all.map((site) => [site.name.toLowerCase(), site]));
    const unknown = wanted.filter((name) => !byName.has(name.toLowerCase()));
    if (unknown.length > 0)
      throw new Error(`USERNAME_SITES: no site named ${unknown.map((n) => `"${n}"`).join(', ')} in ${file}`);
    const names = new Set(wanted.map((name) => name.toLowerCase()));
    sites = sites.filter((site) => names.has(site.name.toLowerCase()));
  }
  const top = topOf(settings, wanted.length > 0);
  if (top !== null && sites.length > top) {
    const kept = new Set(byPopularity(sites).slice(0, top));
    sites = sites.filter((site) => kept.has(site));
  }
  return {
    sites,
    file,
    top,
    timeoutMs: integerSetting(settings, 'USERNAME_TIMEOUT_MS', DEFAULT_TIMEOUT_MS, 100, 60_000),
    concurrency: integerSetting(settings, 'USERNAME_CONCURRENCY', DEFAULT_CONCURRENCY, 1, 1000),
    maxConnections: integerSetting(settings, 'USERNAME_MAX_CONNECTIONS', DEFAULT_MAX_CONNECTIONS, 1, 10_000),
    maxPerHost: integerSetting(settings, 'USERNAME_MAX_PER_HOST', DEFAULT_MAX_PER_HOST, 1, 1000),
  };
}

function topOf(settings: Readonly<Record<string, string | undefined>>, named: boolean): number | null {
  const value = settings['USERNAME_TOP'];
  if (value === undefined) return named ? null : DEFAULT_TOP;
  if (value.trim().toLowerCase() === 'all') return null;
  const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`USERNAME_TOP: expected a whole number from 1, or all, got "${value}"`);
  return n;
}

function flag(settings: Readonly<Record<string, string | undefined>>, key: string): boolean {
  checkSwitch(settings, key);
  return settings[key] === 'true';
}
