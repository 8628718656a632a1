import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DomainError, selectSites, selectsSites, type FieldIssue, type LookupKind } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import type { RedisClient } from '@dossier/runtime';
import {
  usernameSitesKey,
  usernameSitesReportSchema,
  type PersonInput,
  type UsernameSitesReport,
} from '@dossier/contracts';
import { GATEWAY_CONFIG, REDIS } from '../infra/tokens';

/** How often the person workers' username sites are read again. */
const REFRESH_MS = 10_000;

/**
 * The username sites the person workers check (ADR 0049), as they report them in Redis (`usernameSitesKey`):
 * the sites run in the workers, with the workers' settings (USERNAME_SITES_FILE, USERNAME_SITES,
 * USERNAME_INCLUDE_NSFW), so the gateway knows them only from there. Read at start and every REFRESH_MS, so
 * that a search's `sites` and `tags` are checked against them without a Redis call of its own; while no worker
 * has reported, a search's names go through, and the worker reports a name it lacks as that site `skipped`.
 */
@Injectable()
export class UsernameSitesService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(UsernameSitesService.name);
  private report: UsernameSitesReport | null = null;
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  onApplicationBootstrap(): void {
    void this.read();
    this.timer = setInterval(() => void this.read(), REFRESH_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /**
   * Refuses a username search whose `sites` or `tags` no site of the workers' list has, or that chooses no site
   * at all (`validation_error` naming the field). Other lookups, and every search while no worker has reported
   * its sites, go through.
   */
  check(req: { kind: LookupKind; input: unknown }): void {
    if (req.kind !== 'person' || this.report === null) return;
    const input = req.input as PersonInput;
    if (!selectsSites(input)) return;
    const chosen = selectSites(this.report.sites, input);
    const issues: FieldIssue[] = [
      ...chosen.unknownSites.map((name) => ({
        field: 'sites',
        issue: `no site named ${JSON.stringify(name)} is checked (GET /v1/username/sites lists them)`,
      })),
      ...chosen.unknownTags.map((tag) => ({
        field: 'tags',
        issue: `no site carries the tag ${JSON.stringify(tag)} (GET /v1/username/sites lists them)`,
      })),
    ];
    if (issues.length === 0 && chosen.sites.length === 0)
      issues.push({ field: 'tags', issue: 'no site of those named in sites carries any of these tags' });
    if (issues.length > 0) throw DomainError.validation(issues);
  }

  /** The sites as the workers report them now (read afresh); `unavailable` while no person worker has reported. */
  async list(): Promise<UsernameSitesReport> {
    const report = await this.read();
    if (!report) throw DomainError.unavailable('no person worker has reported its username sites; retry once one runs');
    return report;
  }

  /** Reads the report (null when there is none, or none this gateway can read); keeps the last one if Redis fails. */
  private async read(): Promise<UsernameSitesReport | null> {
    try {
      const value = await this.redis.get(usernameSitesKey(this.config.queuePrefix));
      const parsed = value === null ? null : usernameSitesReportSchema.safeParse(JSON.parse(value));
      this.report = parsed?.success ? parsed.data : null;
    } catch (err) {
      this.logger.debug(`could not read the workers' username sites: ${String(err)}`);
    }
    return this.report;
  }
}
