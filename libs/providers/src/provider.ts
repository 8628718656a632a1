import type { LookupKind, SourceOutcome } from '@dossier/domain';
import type { LookupInputByKind, ResultItemByKind } from '@dossier/contracts';

/**
 * The small set of upstream failure codes every provider maps its errors onto at its edge.
 * `unrecoverable` means retrying the job cannot help (bad credentials, malformed request).
 */
export const PROVIDER_ERROR_CODES = ['rate_limited', 'blocked', 'timeout', 'unavailable', 'unrecoverable'] as const;
export type ProviderErrorCode = (typeof PROVIDER_ERROR_CODES)[number];

export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What a provider call produced. `unknown`: it answered but could not tell (e.g. SMTP greylisting). */
export interface ProviderAnswer<K extends LookupKind> {
  outcome: Extract<SourceOutcome, 'found' | 'not_found' | 'unknown'>;
  items: ResultItemByKind[K][];
}

/** Per-call context: the deadline is an AbortSignal, the settings are this provider's resolved config. */
export interface ProviderContext {
  signal: AbortSignal;
  settings: Readonly<Record<string, string | undefined>>;
}

export interface Provider<K extends LookupKind = LookupKind> {
  /** Stable id, reported in `sources[].provider` and in result items' `sources[]`. */
  readonly id: string;
  readonly kinds: readonly K[];
  /** Environment keys this provider reads (e.g. `PDL_API_KEY`, `PDL_BASE_URL`). */
  readonly configKeys: readonly string[];
  readonly defaultTimeoutMs: number;
  /** Whether the provider can run with these settings; when false it is reported as `skipped`. */
  isConfigured(settings: Readonly<Record<string, string | undefined>>): boolean;
  lookup(kind: K, input: LookupInputByKind[K], ctx: ProviderContext): Promise<ProviderAnswer<K>>;
}

/** Maps a provider error code onto the outcome reported in `sources`. */
export function outcomeOfError(code: ProviderErrorCode): SourceOutcome {
  switch (code) {
    case 'rate_limited':
      return 'rate_limited';
    case 'blocked':
      return 'blocked';
    case 'timeout':
      return 'timeout';
    case 'unavailable':
    case 'unrecoverable':
      return 'error';
  }
}
