import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { EmailInput, EmailResultItem } from '@dossier/contracts';
import { parseEmail } from '@dossier/domain';
import { emailItem, hasValidSyntax } from '../email-item';
import { baseUrlOf, baseUrlReach, checkBaseUrl, checkSwitch, expectJson, request } from '../http';
import type { Provider, ProviderAnswer, ProviderContext } from '../provider';

const ID = 'gravatar';
const DEFAULT_BASE_URL = 'https://api.gravatar.com';

/** The parts of Gravatar's REST API v3 profile (`GET /v3/profiles/{sha256}`) that Dossier reads. */
const profileSchema = z.object({
  hash: z.string(),
  display_name: z.string().nullish(),
  profile_url: z.string(),
  verified_accounts: z
    .array(
      z.object({
        service_type: z.string(),
        service_label: z.string().nullish(),
        url: z.string(),
        is_hidden: z.boolean().nullish(),
      }),
    )
    .nullish(),
});

/** Gravatar's error body (its OpenAPI `Error`: `{ "error": "…", "code": "…" }`), which its 404 carries. */
const errorSchema = z.object({ error: z.string(), code: z.string().optional() });

/** The account name in a profile URL: its last path segment, or the subdomain of a blog-style host. */
export function usernameFromUrl(url: string): string | null {
  try {
    const u = new URL(url);
    const segment = u.pathname.split('/').filter(Boolean).pop();
    if (segment) return decodeURIComponent(segment.replace(/^@/, ''));
    const [first, ...rest] = u.hostname.split('.');
    return first && first !== 'www' && rest.length >= 2 ? first : null;
  } catch {
    return null;
  }
}

/**
 * Associated accounts from the address's Gravatar profile (REST API v3, looked up by the SHA-256 of the
 * trimmed, lower-cased address): the profile itself and the accounts its owner verified, hidden ones left
 * out. Keyless (`GRAVATAR_API_KEY` raises the vendor's limit); off with `GRAVATAR_ENABLED=false`.
 */
export const gravatarProvider: Provider<'email'> = {
  id: ID,
  kinds: ['email'],
  configKeys: ['GRAVATAR_ENABLED', 'GRAVATAR_BASE_URL', 'GRAVATAR_API_KEY'],
  defaultTimeoutMs: 5000,
  transport: 'http',
  findsOnly: 'accounts',
  // Gravatar's published limit for unauthenticated calls; set GRAVATAR_RATE_LIMIT for a key's larger one.
  rateLimit: { max: 100, perMs: 3_600_000 },
  validateSettings(settings) {
    checkBaseUrl(settings, 'GRAVATAR_BASE_URL');
    checkSwitch(settings, 'GRAVATAR_ENABLED');
  },
  isConfigured: (settings) => settings['GRAVATAR_ENABLED'] !== 'false' || 'disabled (GRAVATAR_ENABLED=false)',
  checkReach: baseUrlReach(ID, DEFAULT_BASE_URL),
  appliesTo: hasValidSyntax,

  async lookup(_kind, input: EmailInput, ctx: ProviderContext): Promise<ProviderAnswer<'email'>> {
    const hash = createHash('sha256').update(parseEmail(input.email).normalized.toLowerCase()).digest('hex');
    const base = baseUrlOf(ctx.settings, 'GRAVATAR_BASE_URL', DEFAULT_BASE_URL);
    const key = ctx.settings['GRAVATAR_API_KEY'];
    const res = await request(
      ID,
      {
        url: `${base}/v3/profiles/${hash}`,
        headers: { accept: 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      },
      ctx.signal,
    );
    // Gravatar's 429 names the end of its window in X-RateLimit-Reset (a Unix time), not in Retry-After.
    // Its 404 with its error body is "no profile"; a 404 without it reached no Gravatar API.
    const profile = expectJson(ID, res, profileSchema, {
      notFound: { status: [404], body: errorSchema },
      reset: 'x-ratelimit-reset',
    });
    if (!profile) return { outcome: 'not_found', items: [] };
    const accounts: EmailResultItem['accounts'] = [
      { service: 'gravatar', username: usernameFromUrl(profile.profile_url), url: profile.profile_url },
      ...(profile.verified_accounts ?? [])
        .filter((a) => !a.is_hidden)
        .map((a) => ({ service: a.service_type, username: usernameFromUrl(a.url), url: a.url })),
    ];
    return { outcome: 'found', items: [emailItem(input.email, ID, { accounts })] };
  },
};
