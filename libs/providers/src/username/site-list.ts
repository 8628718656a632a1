import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { checkSwitch, integerSetting } from '../http';
import { pythonRegex } from './python-regex';

/**
 * Site definitions for username presence, in Sherlock's `data.json` format (the default list is a copy
 * of Sherlock's, in `sherlock/` beside this file with its MIT licence). Each file is read, validated
 * and compiled once per process; a broken one is an error that names the file, the site and the field.
 */

const ERROR_TYPES = ['status_code', 'message', 'response_url'] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

const oneOrMany = <T extends z.ZodType>(item: T) => z.union([item, z.array(item).min(1)]);
const httpUrlTemplate = z
  .string()
  .regex(/^https?:\/\/[^/\s]+/i, 'must be an absolute http(s) URL (with {} where the username goes)');

/** One entry of Sherlock's data.json: every field its schema (data.schema.json) allows, nothing else. */
const siteEntrySchema = z
  .object({
    url: httpUrlTemplate,
    urlMain: z.string(),
    urlProbe: httpUrlTemplate.optional(),
    errorType: oneOrMany(z.enum(ERROR_TYPES)),
    errorMsg: oneOrMany(z.string().min(1)).optional(),
    errorUrl: z.string().min(1).optional(),
    errorCode: oneOrMany(z.number().int().min(100).max(599)).optional(),
    regexCheck: z.string().optional(),
    request_method: z.enum(['GET', 'POST', 'HEAD', 'PUT']).optional(),
    request_payload: z.record(z.string(), z.unknown()).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    isNSFW: z.boolean().optional(),
    /** Sherlock's categories (its schema knows `adult` and `gaming`); a search's `tags` choose by them. */
    tags: oneOrMany(z.string().min(1)).optional(),
    // Read by Sherlock's own tests and tooling, not by the check.
    username_claimed: z.string().optional(),
    response_url: z.string().optional(),
    __comment__: z.string().optional(),
  })
  .strict()
  .superRefine((site, ctx) => {
    const types: readonly string[] = Array.isArray(site.errorType) ? site.errorType : [site.errorType];
    const needs = (field: 'errorMsg' | 'errorUrl', type: ErrorType) => {
      if (types.includes(type) && site[field] === undefined)
        ctx.addIssue({ code: 'custom', path: [field], message: `is required when errorType is ${type}` });
    };
    needs('errorMsg', 'message');
    needs('errorUrl', 'response_url');
    // The answer to a HEAD has no body: the message is never in it, and every name would be found there.
    if (types.includes('message') && site.request_method === 'HEAD')
      ctx.addIssue({
        code: 'custom',
        path: ['request_method'],
        message: 'HEAD has no body to look for errorMsg in (errorType message)',
      });
    if (site.regexCheck !== undefined) {
      try {
        pythonRegex(site.regexCheck);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['regexCheck'], message: (error as Error).message });
      }
    }
  });

/** A site, ready to check: its rules normalised (lists for one-or-many fields, the regex compiled). */
export interface Site {
  name: string;
  /** The profile's address: `{}` is the username. Reported in `accounts[].url`. */
  url: string;
  /** The address asked instead, where the site has one (an API, a lighter page). */
  urlProbe: string | null;
  errorTypes: readonly ErrorType[];
  errorMsgs: readonly string[];
  errorUrl: string | null;
  errorCodes: readonly number[];
  /** Usernames the site can have (its Python pattern, read as Python reads it); others are not checked there. */
  regexCheck: RegExp | null;
  method: 'GET' | 'POST' | 'HEAD' | 'PUT';
  payload: Record<string, unknown> | null;
  headers: Readonly<Record<string, string>>;
  nsfw: boolean;
  /** Its categories and countries, lower case: its own `tags`, else those site-meta gives its name. */
  tags: readonly string[];
  /** Its popularity rank (1 is the most visited), from site-meta; null: unranked. */
  rank: number | null;
}

const list = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** The list shipped in the repository (copied beside the compiled code by the build: nest-cli.json assets). */
export const DEFAULT_SITES_FILE = join(
  // Jest runs the sources as ES modules, without __dirname; its working directory is the repository.
  typeof __dirname === 'string' ? __dirname : resolve('libs/providers/src/username'),
  'sherlock',
  'data.json',
);

/** Ranks and tags by site name (lower case), for lists whose sites have none: Maigret's, for Sherlock's sites. */
export const SITE_META_FILE = join(
  typeof __dirname === 'string' ? __dirname : resolve('libs/providers/src/username'),
  'site-meta',
  'sites.json',
);

const siteMetaSchema = z.object({
  sites: z.record(
    z.string(),
    z.object({ rank: z.number().int().min(1).nullable(), tags: z.array(z.string().min(1)) }).strict(),
  ),
});

type SiteMeta = ReadonlyMap<string, { rank: number | null; tags: readonly string[] }>;
let siteMeta: SiteMeta | undefined;

/** The ranks and tags shipped (read once); a broken file is an error naming it. */
function siteMetaByName(): SiteMeta {
  if (!siteMeta) {
    const parsed = siteMetaSchema.safeParse(readJson(SITE_META_FILE, 'site ranks and tags'));
    if (!parsed.success)
      throw new Error(`${SITE_META_FILE}: invalid site ranks and tags: ${parsed.error.issues[0]!.message}`);
    siteMeta = new Map(Object.entries(parsed.data.sites).map(([name, meta]) => [name.toLowerCase(), meta]));
  }
  return siteMeta;
}

const loaded = new Map<string, readonly Site[]>();

/** Every site of a list file, in the file's order; read and validated once per file (then cached). */
export function loadSiteList(file: string): readonly Site[] {
  const path = resolve(file);
  const cached = loaded.get(path);
  if (cached) return cached;
  const sites = parseSiteList(readJson(path, 'site list'), path);
  loaded.set(path, sites);
  return sites;
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

/** Validates a parsed list; errors name the file, then each bad site and field (the first few). */
export function parseSiteList(data: unknown, origin: string): Site[] {
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new Error(`${origin}: the site list must be an object of site name → definition`);
  const problems: string[] = [];
  const sites: Site[] = [];
  for (const [name, entry] of Object.entries(data)) {
    if (name.startsWith('$')) continue; // "$schema"
    const parsed = siteEntrySchema.safeParse(entry);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        problems.push(`site "${name}": ${issue.path.join('.') || 'definition'}: ${issue.message}`);
      continue;
    }
    const site = parsed.data;
    const meta = siteMetaByName().get(name.toLowerCase());
    const own = list(site.tags).map((tag) => tag.toLowerCase());
    sites.push({
      name,
      url: site.url,
      urlProbe: site.urlProbe ?? null,
      errorTypes: list(site.errorType),
      errorMsgs: list(site.errorMsg),
      errorUrl: site.errorUrl ?? null,
      errorCodes: list(site.errorCode),
      regexCheck: site.regexCheck === undefined ? null : pythonRegex(site.regexCheck),
      method: site.request_method ?? 'GET',
      payload: site.request_payload ?? null,
      headers: site.headers ?? {},
      nsfw: site.isNSFW ?? false,
      tags: own.length > 0 ? [...new Set(own)] : (meta?.tags ?? []),
      rank: meta?.rank ?? null,
    });
  }
  if (problems.length > 0) {
    const more = problems.length > 5 ? `\n    … and ${problems.length - 5} more` : '';
    throw new Error(`${origin}: invalid site list:\n    ${problems.slice(0, 5).join('\n    ')}${more}`);
  }
  return sites;
}

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
 * The username settings, resolved: the list from `USERNAME_SITES_FILE` (default: the shipped one),
 * narrowed to `USERNAME_SITES` (names, case-insensitive), NSFW sites only with `USERNAME_INCLUDE_NSFW=true`.
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
  return {
    sites,
    file,
    timeoutMs: integerSetting(settings, 'USERNAME_TIMEOUT_MS', DEFAULT_TIMEOUT_MS, 100, 60_000),
    concurrency: integerSetting(settings, 'USERNAME_CONCURRENCY', DEFAULT_CONCURRENCY, 1, 1000),
    maxConnections: integerSetting(settings, 'USERNAME_MAX_CONNECTIONS', DEFAULT_MAX_CONNECTIONS, 1, 10_000),
    maxPerHost: integerSetting(settings, 'USERNAME_MAX_PER_HOST', DEFAULT_MAX_PER_HOST, 1, 1000),
  };
}

function flag(settings: Readonly<Record<string, string | undefined>>, key: string): boolean {
  checkSwitch(settings, key);
  return settings[key] === 'true';
}
