import { hostname } from 'node:os';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { WorkerConfig } from '@dossier/config';
import type { RedisClient } from '@dossier/runtime';
import {
  PROVIDER_REPORT_REFRESH_MS,
  PROVIDER_REPORT_TTL_MS,
  describeStatus,
  providerReportKey,
  statusOf,
  usernameSitesKey,
  type ProviderReport,
  type UsernameSitesReport,
} from '@dossier/contracts';
import { PROVIDERS, providerStatus, providersFor, usernameSiteCatalog } from '@dossier/providers';
import { PROVIDER_SETTINGS, REDIS, WORKER_CONFIG } from '../infra/tokens';

/** What a reachability check may take past the connection: the upstream's first answer (any status). */
const ANSWER_MS = 2000;
/** How soon a username sites report Redis did not take is written again. */
const SITES_RETRY_MS = 1000;

/**
 * Says, once at start, which providers of this worker's lookup kinds are on, off (not configured: the setting
 * that turns each on) and unreachable (on, but its upstream failed a quick check: `Provider.checkReach`) —
 * one log line, structured (`providers`) and in words. The checks run in the background: the worker is ready
 * and takes jobs meanwhile; the line comes once they are done, within UPSTREAM_CONNECT_TIMEOUT_MS and an
 * answer's wait. The same, per lookup kind, goes to Redis (`providerReportKey`) for the gateways' start-up
 * log, written again while the worker runs so that only running workers' reports are there; a person worker's
 * username sites (`usernameSitesKey`) go there too, at once, for the gateways to check searches' `sites` and `tags`.
 */
@Injectable()
export class ProviderStatusService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('providers');
  private timer?: NodeJS.Timeout;
  private sitesTimer?: NodeJS.Timeout;
  private closing = false;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    @Inject(PROVIDER_SETTINGS) private readonly settings: Readonly<Record<string, string | undefined>>,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  onApplicationBootstrap(): void {
    // The username sites at once (the gateways check searches' `sites` and `tags` against them), the rest once checked.
    this.keepPublished(this.usernameSites());
    void this.check().catch((err: unknown) => this.logger.warn(`could not check the providers: ${String(err)}`));
  }

  onApplicationShutdown(): void {
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
    clearTimeout(this.sitesTimer);
  }

  /**
   * Writes `reports` now and again every PROVIDER_REPORT_REFRESH_MS; a write Redis did not take (its connection not
   * yet up at start) is tried again after SITES_RETRY_MS.
   */
  private keepPublished(reports: { key: string; value: string }[]): void {
    if (reports.length === 0) return;
    const write = async (): Promise<void> => {
      const written = await this.publish(reports);
      if (!this.closing)
        this.sitesTimer = setTimeout(() => void write(), written ? PROVIDER_REPORT_REFRESH_MS : SITES_RETRY_MS).unref();
    };
    void write();
  }

  /** A person worker's username sites (ADR 0049), as the report it keeps in Redis; none for other workers. */
  private usernameSites(): { key: string; value: string }[] {
    if (!this.config.kinds.includes('person')) return [];
    const report: UsernameSitesReport = {
      v: 1,
      checked_at: new Date().toISOString(),
      worker: `${hostname()}/${process.pid}`,
      sites: usernameSiteCatalog(this.settings).map(({ name, tags, rank }) => ({ name, tags: [...tags], rank })),
    };
    return [{ key: usernameSitesKey(this.config.queuePrefix), value: JSON.stringify(report) }];
  }

  private async check(): Promise<void> {
    const served = new Set(this.config.kinds.flatMap((kind) => providersFor(kind, PROVIDERS)));
    const providers = PROVIDERS.filter((p) => served.has(p));
    const status = await providerStatus(
      providers,
      this.settings,
      this.config.upstreamNetwork.connectTimeoutMs + ANSWER_MS,
    );
    if (this.closing) return;
    this.logger.log({ msg: `providers ${describeStatus(status)}`, providers: status });
    const checkedAt = new Date().toISOString();
    const worker = `${hostname()}/${process.pid}`;
    const reports = this.config.kinds.map((kind) => {
      const report: ProviderReport = {
        v: 1,
        checked_at: checkedAt,
        worker,
        ...statusOf(
          status,
          providersFor(kind, PROVIDERS).map((p) => p.id),
        ),
      };
      return { key: providerReportKey(this.config.queuePrefix, kind), value: JSON.stringify(report) };
    });
    await this.publish(reports);
    this.timer = setInterval(() => void this.publish(reports), PROVIDER_REPORT_REFRESH_MS);
    this.timer.unref();
  }

  /** Best effort: a report Redis did not take is written again at the next refresh. Whether Redis took them all. */
  private async publish(reports: { key: string; value: string }[]): Promise<boolean> {
    try {
      await Promise.all(reports.map(({ key, value }) => this.redis.set(key, value, 'PX', PROVIDER_REPORT_TTL_MS)));
      return true;
    } catch (err) {
      this.logger.debug(`could not report the providers' status: ${String(err)}`);
      return false;
    }
  }
}
