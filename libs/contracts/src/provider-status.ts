import { z } from 'zod';
import type { LookupKind } from '@dossier/domain';

/**
 * Which providers are on — called for lookups and, where they have one, their upstream answered a quick
 * check — which are off (not configured: why, naming the setting) and which are on but unreachable (why).
 */
export const providerStatusSchema = z.object({
  on: z.array(z.string()),
  off: z.record(z.string(), z.string()),
  unreachable: z.record(z.string(), z.string()),
});
export type ProviderStatus = z.infer<typeof providerStatusSchema>;

/**
 * WARNING — wire contract, see QUEUE_NAMES: a worker's report of one lookup kind's providers, as it found them
 * at its start (its `providerStatus`), kept in Redis (`providerReportKey`) for the gateways' start-up log.
 * Evolve through `v`.
 */
export const providerReportSchema = providerStatusSchema.extend({
  v: z.literal(1),
  /** When the worker finished its checks. */
  checked_at: z.string(),
  /** `<host name>/<pid>` of the worker that reported. */
  worker: z.string(),
});
export type ProviderReport = z.infer<typeof providerReportSchema>;

/**
 * How long a report is kept: a running worker writes its reports again every PROVIDER_REPORT_REFRESH_MS, so
 * the reports there are those of workers running now (or stopped less than this ago).
 */
export const PROVIDER_REPORT_TTL_MS = 90_000;
export const PROVIDER_REPORT_REFRESH_MS = 30_000;

/** WARNING — wire contract, see QUEUE_NAMES. The Redis key of the report on `kind`'s providers. */
export function providerReportKey(prefix: string, kind: LookupKind): string {
  return `${prefix}:provider-status:${kind}`;
}

/** `status` narrowed to the providers `ids` (one lookup kind's). */
export function statusOf(status: ProviderStatus, ids: readonly string[]): ProviderStatus {
  const pick = (entries: Record<string, string>) =>
    Object.fromEntries(Object.entries(entries).filter(([id]) => ids.includes(id)));
  return {
    on: status.on.filter((id) => ids.includes(id)),
    off: pick(status.off),
    unreachable: pick(status.unreachable),
  };
}

/**
 * The status in words, for people reading the log: `on: email, gleif; off: pdl (not configured: set
 * PDL_API_KEY); unreachable: gravatar (no connection to api.gravatar.com within 3000 ms …)`.
 */
export function describeStatus(status: ProviderStatus): string {
  const listed = (entries: Record<string, string>): string =>
    Object.entries(entries)
      .map(([id, why]) => `${id} (${why})`)
      .join(', ') || 'none';
  return `on: ${status.on.join(', ') || 'none'}; off: ${listed(status.off)}; unreachable: ${listed(status.unreachable)}`;
}

/**
 * WARNING — wire contract, see QUEUE_NAMES: the username sites a person worker checks (ADR 0049) — each site's
 * name, tags and popularity rank, in its list's order — kept in Redis (`usernameSitesKey`) beside its provider
 * report, on the same refresh and expiry, so that a gateway can refuse a search's `sites` and `tags` that no site
 * has before anything is charged. Evolve through `v`.
 */
export const usernameSitesReportSchema = z.object({
  v: z.literal(1),
  checked_at: z.string(),
  worker: z.string(),
  sites: z.array(z.object({ name: z.string(), tags: z.array(z.string()), rank: z.number().int().nullable() })),
});
export type UsernameSitesReport = z.infer<typeof usernameSitesReportSchema>;

/** WARNING — wire contract, see QUEUE_NAMES. The Redis key of the person workers' username sites. */
export function usernameSitesKey(prefix: string): string {
  return `${prefix}:username-sites`;
}
