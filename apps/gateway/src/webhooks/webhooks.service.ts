import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@dossier/domain';
import type { GatewayConfig } from '@dossier/config';
import {
  WEBHOOK_EVENTS,
  checkWebhookTarget,
  newWebhookSecret,
  resolverAt,
  sealSecret,
  type ResolveHost,
  type WebhookEvent,
} from '@dossier/contracts';
import { WebhooksRepository, type DeliveryRow, type WebhookRow } from '@dossier/persistence';
import type { AuthContext } from '../auth/auth-context';
import { GATEWAY_CONFIG } from '../infra/tokens';
import { WEBHOOK_URL_MAX_LENGTH } from './webhooks.schema';

const DELIVERIES_SHOWN = 100;
const notFound = () => new DomainError('not_found', 'no such webhook');
const WEBHOOK_ID = /^wh_[0-9A-Za-z]{1,64}$/;

const viewOf = (w: WebhookRow) => ({
  id: w.id,
  url: w.url,
  events: w.events as WebhookEvent[],
  created_at: w.created_at.toISOString(),
});

/**
 * The most webhooks an account may have in one mode (ADR 0020): each settled search is one delivery job per
 * webhook, retried for a day, so an account with many pointed at someone else's server multiplies traffic
 * to it. Stripe's limit (16 endpoints per account and mode) is the model.
 */
const MAX_WEBHOOKS = 16;

/**
 * Retry-After of the 503 a gateway without WEBHOOK_SECRET_KEY answers (ADR 0020): only its operator can end
 * that, so an hour, past the longest any client of ours sleeps (60 s): they hand the error over at once,
 * instead of the 1 s a transient 503 asks for, which invited a client to retry in a loop.
 */
const KEYLESS_RETRY_AFTER_S = 3600;

/**
 * `/v1/webhooks`: an account registers, lists and deletes its endpoints, and reads their delivery attempts.
 * A webhook belongs to the mode of the key that registered it (ADR 0034): it takes that mode's events, and
 * only keys of that mode see and manage it.
 */
@Injectable()
export class WebhooksService {
  /** How a webhook's host is resolved: the system's resolver, or the test's DNS servers. */
  private readonly resolveHost: ResolveHost | undefined;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(WebhooksRepository) private readonly webhooks: WebhooksRepository,
  ) {
    this.resolveHost = config.webhooks.dnsServers ? resolverAt(config.webhooks.dnsServers) : undefined;
  }

  async create({ accountId, mode }: AuthContext, body: { url: string; events?: WebhookEvent[] | undefined }) {
    const key = this.config.webhooks.key;
    if (key === null) {
      throw new DomainError('unavailable', 'webhooks are not enabled on this server (no WEBHOOK_SECRET_KEY)', {
        retryAfterS: KEYLESS_RETRY_AFTER_S,
      });
    }
    // A name server that never answers must not hold the request (and a gateway's resolver thread) for long.
    const { allowPrivate, timeoutMs } = this.config.webhooks;
    const check = await checkWebhookTarget(body.url, allowPrivate, this.resolveHost, AbortSignal.timeout(timeoutMs));
    if (!check.ok) {
      const issue = check.timedOut ? `has a host name that did not resolve within ${timeoutMs} ms` : check.reason;
      throw DomainError.validation([{ field: 'url', issue }]);
    }
    // What is stored and POSTed to is the normalised URL: each non-ASCII character percent-encoded, 2,021 `€`
    // (2,040 characters as given) became 18,208. The schema's bound is on what was given.
    const url = check.target.url.toString();
    if (url.length > WEBHOOK_URL_MAX_LENGTH) {
      const issue = `must be at most ${WEBHOOK_URL_MAX_LENGTH} characters as stored, normalised with non-ASCII characters percent-encoded (€ is %E2%82%AC, 9 characters): this one is ${url.length}`;
      throw DomainError.validation([{ field: 'url', issue }]);
    }
    const events = body.events ? WEBHOOK_EVENTS.filter((e) => body.events!.includes(e)) : [...WEBHOOK_EVENTS];
    const secret = newWebhookSecret();
    const row = await this.webhooks.create(accountId, mode, url, events, sealSecret(secret, key), MAX_WEBHOOKS);
    if (row === 'full') {
      throw DomainError.validation([
        {
          field: 'url',
          issue: `this account has ${MAX_WEBHOOKS} webhooks already, the most it may have; delete one first`,
        },
      ]);
    }
    return { status: 'success' as const, webhook: viewOf(row), secret };
  }

  async list({ accountId, mode }: AuthContext) {
    return { status: 'success' as const, webhooks: (await this.webhooks.listForAccount(accountId, mode)).map(viewOf) };
  }

  async delete({ accountId, mode }: AuthContext, id: string) {
    const row = WEBHOOK_ID.test(id) ? await this.webhooks.findForAccount(id, accountId, mode) : null;
    if (!row || !(await this.webhooks.deleteForAccount(id, accountId, mode))) throw notFound();
    return { status: 'success' as const, webhook: viewOf(row) };
  }

  async deliveries({ accountId, mode }: AuthContext, id: string) {
    const row = WEBHOOK_ID.test(id) ? await this.webhooks.findForAccount(id, accountId, mode) : null;
    if (!row) throw notFound();
    const rows = await this.webhooks.deliveries(id, DELIVERIES_SHOWN);
    return { status: 'success' as const, deliveries: rows.map(deliveryOf) };
  }
}

function deliveryOf(d: DeliveryRow) {
  return {
    event_id: d.event_id,
    type: d.event_type as WebhookEvent,
    attempt: d.attempt,
    outcome: d.outcome,
    status_code: d.status_code,
    error: d.error,
    duration_ms: d.duration_ms,
    attempted_at: d.attempted_at.toISOString(),
  };
}
