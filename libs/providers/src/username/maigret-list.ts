import { z } from 'zod';
import { pythonRegex } from './python-regex';
import type { Site } from './site';

/**
 * Site definitions in Maigret's `data.json` format: `{ sites, engines, tags }` (Maigret's own database is in
 * `maigret/` beside this file, with its MIT licence). Read as Maigret reads it (maigret/sites.py, checking.py):
 * a site naming an `engine` takes the engine's `site` fields — lists appended to its own, objects merged,
 * anything else replacing its own; its `url` and `urlProbe` are Python format strings of `urlMain`,
 * `urlSubpath` and `username`. Maigret's database holds sites no HTTP check of a username can use (other
 * identifiers, Tor and I2P, switched off by Maigret): each site not taken is counted by why (`refused`), never
 * dropped unsaid, and never an error of the whole file.
 */

/** Why a site of a Maigret list is not checked. */
export const REFUSALS = {
  disabled: 'Maigret marks it disabled',
  'not a username': 'it looks up another identifier (type: gaia_id, steam_id, …)',
  'not on the web': 'it is reached over Tor, I2P or DNS (protocol), not HTTP',
  'needs activation': 'it needs a token fetched from another address first (activation)',
  'similar names': 'its hits are similar names, not the username (similarSearch)',
  'no sign': 'a message check with neither absenceStrs nor presenseStrs: every page would be a profile',
  'forced encoding': 'its pages are decoded in a charset other than the one they declare (encoding)',
  'unknown engine': 'it names an engine the file does not define',
  'unknown field': 'it has a field Maigret does not define (its meaning unknown)',
  invalid: 'a field is missing or not valid (url, checkType, regexCheck, a template, the payload)',
} as const;
export type Refusal = keyof typeof REFUSALS;

export interface RefusedSite {
  name: string;
  reason: Refusal;
  detail: string;
}

const CHECK_TYPES = ['status_code', 'message', 'response_url'] as const;

/** A site once its engine is merged in: every field Maigret's check reads, and those it keeps for other uses. */
const siteSchema = z
  .object({
    url: z.string(),
    urlMain: z.string().optional(),
    urlSubpath: z.string().optional(),
    urlProbe: z.string().optional(),
    checkType: z.enum(CHECK_TYPES),
    presenseStrs: z.array(z.string().min(1)).optional(),
    absenceStrs: z.array(z.string().min(1)).optional(),
    errors: z.record(z.string(), z.string()).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    regexCheck: z.string().optional(),
    requestMethod: z.enum(['GET', 'POST', 'HEAD', 'PUT', 'get', 'post', 'head', 'put']).optional(),
    requestPayload: z.record(z.string(), z.unknown()).optional(),
    requestHeadOnly: z.boolean().optional(),
    ignore403: z.boolean().optional(),
    tags: z.array(z.string().min(1)).optional(),
    alexaRank: z.number().optional(),
    disabled: z.boolean().optional(),
    engine: z.string().optional(),
    // Kept by Maigret for its self-check, mirrors and reports; not read by its check (nor by Dossier's).
    usernameClaimed: z.string().optional(),
    usernameUnclaimed: z.string().optional(),
    source: z.string().optional(),
    protection: z.array(z.string()).optional(),
    mirrors: z.array(z.string()).optional(),
    type: z.literal('username').optional(),
    // Fields Maigret's code never reads (misspelt, or left from Sherlock's format): Dossier does not either.
    presenceStrs: z.unknown().optional(),
    caseSentitive: z.unknown().optional(),
    errorUrl: z.unknown().optional(),
  })
  .strict();
type MaigretSite = z.infer<typeof siteSchema>;

const engineSchema = z.object({ site: z.record(z.string(), z.unknown()) });

/** Whether parsed JSON is a Maigret database: `sites` and `engines` objects at its top. */
export function isMaigretList(data: Record<string, unknown>): boolean {
  const object = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  return object(data['sites']) && object(data['engines']);
}

const SLOT = '\u0000';

/**
 * A Maigret template (Python's str.format) as Dossier's: `{urlMain}` and `{urlSubpath}` put in, `{username}`
 * as `{}`, `{{` and `}}` as single braces. Throws on another field, a stray brace, or a literal `{}` (which
 * would read as the username).
 */
export function pythonFormat(template: string, fields: Readonly<Record<string, string>>): string {
  const out = template.replace(/\{\{|\}\}|\{([^{}]*)\}|[{}]/g, (token, field: string | undefined) => {
    if (token === '{{') return '{';
    if (token === '}}') return '}';
    if (field === undefined) throw new Error(`a stray "${token}"`);
    if (field === 'username') return SLOT;
    const value = fields[field];
    if (value === undefined) throw new Error(`an unknown field {${field}}`);
    return value;
  });
  if (out.includes('{}')) throw new Error('a literal {} (read as the username)');
  return out.replaceAll(SLOT, '{}');
}

/** Maigret's `url.format(...)` then `re.sub("(?<!:)/+", "/", url)`: runs of slashes made one, but after a colon. */
const collapseSlashes = (url: string) => url.replace(/(?<!:)\/+/g, '/');

const HTTP_URL = /^https?:\/\/[^/\s]+/i;

/** A site's own fields with its engine's merged in, as MaigretSite.update_from_engine does. */
function withEngine(site: Record<string, unknown>, engine: Record<string, unknown>): Record<string, unknown> {
  const merged = { ...site };
  for (const [key, value] of Object.entries(engine)) {
    const own = merged[key];
    if (Array.isArray(value)) merged[key] = [...(Array.isArray(own) ? own : []), ...value];
    else if (typeof value === 'object' && value !== null)
      merged[key] = { ...(typeof own === 'object' && own !== null ? own : {}), ...value };
    else merged[key] = value;
  }
  return merged;
}

/** The site ready to check, or why not. */
function siteOf(
  name: string,
  raw: Record<string, unknown>,
  engines: ReadonlyMap<string, Record<string, unknown>>,
): Site | RefusedSite {
  const refuse = (reason: Refusal, detail: string = REFUSALS[reason]): RefusedSite => ({ name, reason, detail });
  if (raw['disabled'] === true) return refuse('disabled');
  if (raw['type'] !== undefined && raw['type'] !== 'username')
    return refuse('not a username', `type ${String(raw['type'])}`);
  if (raw['protocol'] !== undefined && raw['protocol'] !== '')
    return refuse('not on the web', `protocol ${String(raw['protocol'])}`);
  if (raw['activation'] !== undefined) return refuse('needs activation');
  if (raw['similarSearch'] === true) return refuse('similar names');
  if (raw['encoding'] !== undefined) return refuse('forced encoding', `encoding ${String(raw['encoding'])}`);
  let merged = raw;
  if (raw['engine'] !== undefined) {
    const engine = engines.get(String(raw['engine']));
    if (!engine) return refuse('unknown engine', `engine ${String(raw['engine'])}`);
    merged = withEngine(raw, engine);
  }
  const parsed = siteSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    if (issue.code === 'unrecognized_keys') return refuse('unknown field', issue.keys.join(', '));
    return refuse('invalid', `${issue.path.join('.') || 'definition'}: ${issue.message}`);
  }
  const site = parsed.data;
  const absence = site.checkType === 'message' ? (site.absenceStrs ?? []) : [];
  const presence = site.checkType === 'status_code' ? [] : (site.presenseStrs ?? []);
  if (site.checkType === 'message' && absence.length === 0 && presence.length === 0) return refuse('no sign');
  try {
    return ready(name, site, absence, presence);
  } catch (error) {
    return refuse('invalid', (error as Error).message);
  }
}

/** The Site of a valid Maigret definition; throws (naming the field) what Maigret would fail on at its check. */
function ready(name: string, site: MaigretSite, absence: string[], presence: string[]): Site {
  const fields = { urlMain: site.urlMain ?? '', urlSubpath: site.urlSubpath ?? '' };
  const template = (field: 'url' | 'urlProbe', text: string) => {
    let url: string;
    try {
      url = pythonFormat(text, fields);
    } catch (error) {
      throw new Error(`${field}: ${(error as Error).message}`);
    }
    if (!HTTP_URL.test(url)) throw new Error(`${field}: not an absolute http(s) URL`);
    return url;
  };
  const url = collapseSlashes(template('url', site.url));
  const urlProbe = site.urlProbe === undefined ? null : template('urlProbe', site.urlProbe);
  const method = site.requestMethod
    ? (site.requestMethod.toUpperCase() as Site['method'])
    : site.checkType === 'status_code' && site.requestHeadOnly
      ? 'HEAD'
      : 'GET';
  if (method === 'HEAD' && site.checkType !== 'status_code')
    throw new Error(`requestMethod: HEAD has no body to read (checkType ${site.checkType})`);
  let regexCheck: RegExp | null = null;
  if (site.regexCheck !== undefined) {
    try {
      regexCheck = pythonRegex(site.regexCheck);
    } catch (error) {
      throw new Error(`regexCheck: ${(error as Error).message}`);
    }
  }
  const headers = site.headers ?? {};
  const form = Object.entries(headers).some(
    ([key, value]) => key.toLowerCase() === 'content-type' && value.includes('x-www-form-urlencoded'),
  );
  // Maigret sends a payload with a POST only, as JSON unless its Content-Type says a form.
  if (site.requestPayload && method === 'POST' && form)
    throw new Error('requestPayload: a form payload (only JSON is sent)');
  const payload = site.requestPayload && method === 'POST' ? payloadOf(site.requestPayload) : null;
  const tags = [...new Set((site.tags ?? []).map((tag) => tag.toLowerCase()))];
  return {
    name,
    url,
    urlProbe,
    errorTypes: [site.checkType],
    errorMsgs: absence,
    errorUrl: null,
    errorCodes: [],
    presenceStrs: presence,
    failureSigns: Object.entries(site.errors ?? {}).map(([text, meaning]) => ({ text, meaning })),
    ignore403: site.ignore403 ?? false,
    redirectIsAbsence: site.checkType === 'response_url',
    regexCheck,
    method,
    payload,
    headers,
    nsfw: tags.includes('porn') || tags.includes('erotic'),
    tags,
    rank: site.alexaRank !== undefined && site.alexaRank > 0 ? Math.round(site.alexaRank) : null,
  };
}

/** Maigret formats a payload's top-level strings (`{username}`, `{{`); other values go as they are. */
function payloadOf(payload: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(payload).map(([key, value]) => {
      if (typeof value === 'string') {
        try {
          return [key, pythonFormat(value, {})];
        } catch (error) {
          throw new Error(`requestPayload.${key}: ${(error as Error).message}`);
        }
      }
      if (JSON.stringify(value).includes('{}'))
        throw new Error(`requestPayload.${key}: a literal {} (read as the username)`);
      return [key, value];
    }),
  );
}

export interface MaigretList {
  sites: Site[];
  refused: RefusedSite[];
}

/** The sites of a Maigret database that can be checked, in its order, and every other one with why not. */
export function parseMaigretList(data: Record<string, unknown>, origin: string): MaigretList {
  const sites = data['sites'] as Record<string, unknown>;
  const engines = new Map<string, Record<string, unknown>>();
  for (const [name, engine] of Object.entries(data['engines'] as Record<string, unknown>)) {
    const parsed = engineSchema.safeParse(engine);
    if (!parsed.success) throw new Error(`${origin}: invalid site list: engine "${name}": no "site" object`);
    engines.set(name, parsed.data.site);
  }
  const out: MaigretList = { sites: [], refused: [] };
  for (const [name, raw] of Object.entries(sites)) {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      out.refused.push({ name, reason: 'invalid', detail: 'definition: not an object' });
      continue;
    }
    const site = siteOf(name, raw as Record<string, unknown>, engines);
    if ('reason' in site) out.refused.push(site);
    else out.sites.push(site);
  }
  return out;
}
