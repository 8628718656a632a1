import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { pythonRegex } from './python-regex';
import type { ErrorType, Site } from './site';

/**
 * Site definitions in Sherlock's `data.json` format (Sherlock's own list is in `sherlock/` beside this file,
 * with its MIT licence). Every site must be valid: a broken one is an error naming the file, the site and
 * the field. Ranks and tags, which Sherlock's list lacks, come from site-meta (Maigret's, by site name).
 */

const ERROR_TYPES = ['status_code', 'message', 'response_url'] as const;

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

const list = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** Ranks and tags by site name (lower case), for lists whose sites have none: Maigret's, for Sherlock's sites. */
export const SITE_META_FILE = join(
  // Jest runs the sources as ES modules, without __dirname; its working directory is the repository.
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
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(SITE_META_FILE, 'utf8')) as unknown;
    } catch (error) {
      throw new Error(`${SITE_META_FILE}: cannot read the site ranks and tags (${(error as Error).message})`);
    }
    const parsed = siteMetaSchema.safeParse(data);
    if (!parsed.success)
      throw new Error(`${SITE_META_FILE}: invalid site ranks and tags: ${parsed.error.issues[0]!.message}`);
    siteMeta = new Map(Object.entries(parsed.data.sites).map(([name, meta]) => [name.toLowerCase(), meta]));
  }
  return siteMeta;
}

/** Validates a parsed Sherlock list; errors name the file, then each bad site and field (the first few). */
export function parseSherlockList(data: Record<string, unknown>, origin: string): Site[] {
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
      presenceStrs: [],
      failureSigns: [],
      ignore403: false,
      redirectIsAbsence: false,
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
