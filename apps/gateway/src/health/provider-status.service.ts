import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { LOOKUP_KINDS, type LookupKind } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import type { RedisClient } from '@dossier/runtime';
import { describeStatus, providerReportKey, providerReportSchema, type ProviderReport } from '@dossier/contracts';
import { GATEWAY_CONFIG, REDIS } from '../infra/tokens';

/** How often the workers' reports are read while some kind has none, and for how long at most. */
const POLL_MS = 1000;
const WAIT_MS = 60_000;

/**
 * Says, once at start, which providers are on, off and unreachable, as the workers report them (ADR 0048):
 * providers run in the workers, with the workers' settings (a licensed provider's key is theirs), so the
 * gateway has nothing of its own to say. In the background — readiness never waits for it: it reads the
 * reports in Redis (`providerReportKey`) until there is one for every lookup kind, or WAIT_MS has passed, and
 * logs one line, structured (`providers`: each kind's report, null for a kind no running worker reported) and
 * in words.
 */
@Injectable()
export class ProviderStatusService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('providers');
  private readonly stop = new AbortController();

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  onApplicationBootstrap(): void {
    void this.watch().catch((err: unknown) => {
      if (!this.stop.signal.aborted) this.logger.warn(`could not read the workers' provider reports: ${String(err)}`);
    });
  }

  onApplicationShutdown(): void {
    this.stop.abort();
  }

  private async watch(): Promise<void> {
    const until = Date.now() + WAIT_MS;
    let reports = await this.read();
    while (LOOKUP_KINDS.some((kind) => !reports[kind]) && Date.now() < until) {
      await sleep(POLL_MS, undefined, { signal: this.stop.signal });
      reports = await this.read();
    }
    const missing = LOOKUP_KINDS.filter((kind) => !reports[kind]);
    const text = LOOKUP_KINDS.map((kind) => {
      const report = reports[kind];
      return `${kind}: ${report ? describeStatus(report) : 'no worker has reported'}`;
    }).join(' | ');
    const line = { msg: `providers, as the workers report them — ${text}`, providers: reports };
    if (missing.length > 0) this.logger.warn(line);
    else this.logger.log(line);
  }

  /** Each kind's report, null where there is none (or one this gateway cannot read: another version's). */
  private async read(): Promise<Record<LookupKind, ProviderReport | null>> {
    const keys = LOOKUP_KINDS.map((kind) => providerReportKey(this.config.queuePrefix, kind));
    const values = await this.redis.mget(keys).catch((): (string | null)[] => keys.map(() => null));
    return Object.fromEntries(LOOKUP_KINDS.map((kind, i) => [kind, parsed(values[i] ?? null)])) as Record<
      LookupKind,
      ProviderReport | null
    >;
  }
}

function parsed(value: string | null): ProviderReport | null {
  if (value === null) return null;
  try {
    const report = providerReportSchema.safeParse(JSON.parse(value));
    return report.success ? report.data : null;
  } catch {
    return null;
  }
}
