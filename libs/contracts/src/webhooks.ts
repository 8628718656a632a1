import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { Resolver, lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { Queue, type ConnectionOptions } from 'bullmq';
import { z } from 'zod';
import { untilAborted } from '@dossier/domain';
import type { LookupJobRetention } from './enqueue';

/**
 * WARNING — wire contract, see QUEUE_NAMES. Webhook deliveries run on their own queue, consumed by the
 * worker's webhook consumer, so a slow receiver never holds a lookup slot (ADR 0020).
 */
export const WEBHOOK_QUEUE = 'webhook-delivery';
export const WEBHOOK_JOB_NAME = 'webhook.deliver';
/** The custom BullMQ backoff strategy's name (exponential with jitter, see webhookBackoffMs). */
export const WEBHOOK_BACKOFF = 'webhook-jitter';

export const WEBHOOK_EVENTS = ['search.completed', 'search.failed', 'batch.completed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A delivery job: one event for one webhook. The body is fixed at enqueue, so every retry sends the same event. */
export const webhookJobSchema = z.object({
  v: z.literal(1),
  webhook_id: z.string(),
  event: z.object({
    id: z.string().regex(/^evt_[0-9A-Za-z]+$/),
    type: z.enum(WEBHOOK_EVENTS),
    created_at: z.string(),
    data: z.unknown(),
  }),
});
export type WebhookJob = z.infer<typeof webhookJobSchema>;
/** What names a delivery job's webhook and event: read from a job whose payload is otherwise invalid, to record its end. */
export const webhookJobKeysSchema = z.object({
  webhook_id: z.string(),
  event: webhookJobSchema.shape.event.pick({ id: true, type: true }),
});

/** One search settles once, so its event id derives from the search id: stable across retries and redeliveries. */
export function searchEventId(searchId: string): string {
  return `evt_${searchId.replace(/^srch_/, '')}`;
}

/** The delivery job's id: a second enqueue of the same event for the same webhook is a no-op. */
export function webhookJobId(webhookId: string, eventId: string): string {
  return `${webhookId}.${eventId}`;
}

/**
 * The delivery queue, as whoever queues events opens it: the worker (a search settled, a batch completed)
 * and the gateway (a batch it completed by releasing the searches it could not queue). Every event's job gets
 * `attempts` (webhookAttempts) and the finished-job retention of JOB_KEEP_* (`retention`), whoever queued it.
 */
export function openWebhookQueue(
  prefix: string,
  connection: ConnectionOptions,
  attempts: number,
  retention: LookupJobRetention,
): Queue<WebhookJob> {
  return new Queue<WebhookJob>(WEBHOOK_QUEUE, {
    prefix,
    connection,
    defaultJobOptions: {
      attempts,
      backoff: { type: WEBHOOK_BACKOFF },
      removeOnComplete: { ...retention.completed },
      removeOnFail: { ...retention.failed },
    },
  });
}

/** One delivery job per webhook; the job id (webhook + event) makes a second enqueue of the same event a no-op. */
export async function queueWebhookEvent(
  queue: Queue<WebhookJob>,
  subscribers: readonly { id: string }[],
  event: WebhookJob['event'],
): Promise<void> {
  await queue.addBulk(
    subscribers.map((w) => ({
      name: WEBHOOK_JOB_NAME,
      data: { v: 1 as const, webhook_id: w.id, event },
      opts: { jobId: webhookJobId(w.id, event.id) },
    })),
  );
}

// ---- signature -------------------------------------------------------------------------------

export const SIGNATURE_HEADER = 'Dossier-Signature';

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` (Stripe's scheme). */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** A new signing secret: `whsec_` + 32 random bytes, base64url. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

// ---- secret at rest (AES-256-GCM under WEBHOOK_SECRET_KEY) ---------------------------------------

const SEALED_VERSION = 'v1';

/** `v1.<iv>.<tag>.<ciphertext>` (base64url): the secret encrypted with a fresh 12-byte IV under the 32-byte key. */
export function sealSecret(secret: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [SEALED_VERSION, iv, cipher.getAuthTag(), ct]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

/** The secret sealed by sealSecret; throws when the key is not the one it was sealed with (GCM's tag check). */
export function openSecret(sealed: string, key: Buffer): string {
  const [version, iv, tag, ct] = sealed.split('.');
  if (version !== SEALED_VERSION || !iv || !tag || ct === undefined) throw new Error('not a sealed webhook secret');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}

// ---- retries -----------------------------------------------------------------------------------

/** The longest wait between two attempts. */
export const WEBHOOK_BACKOFF_CAP_MS = 3_600_000;
/** Retries go on for at least this long before an event is recorded failed. */
export const WEBHOOK_RETRY_SPAN_MS = 24 * 3_600_000;

/**
 * The wait before attempt `attemptsMade + 1`: base·2^(attemptsMade−1), capped at an hour, plus up to a
 * quarter more at random (jitter, so receivers coming back are not hit by every sender at once).
 */
export function webhookBackoffMs(attemptsMade: number, baseMs: number, random: () => number = Math.random): number {
  const plain = Math.min(baseMs * 2 ** Math.max(0, attemptsMade - 1), WEBHOOK_BACKOFF_CAP_MS);
  return Math.round(plain * (1 + random() / 4));
}

/** Attempts whose waits (jitter left out: it only lengthens them) add up to at least WEBHOOK_RETRY_SPAN_MS. */
export function webhookAttempts(baseMs: number): number {
  let waited = 0;
  let attempts = 1;
  while (waited < WEBHOOK_RETRY_SPAN_MS) {
    waited += Math.min(baseMs * 2 ** (attempts - 1), WEBHOOK_BACKOFF_CAP_MS);
    attempts += 1;
  }
  return attempts;
}

// ---- SSRF defence --------------------------------------------------------------------------------

const refused = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  refused.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 96], // unspecified, loopback, and IPv4-compatible addresses (deprecated: ::7f00:1 is 127.0.0.1)
  ['64:ff9b::', 96], // NAT64
  ['64:ff9b:1::', 48], // NAT64 for local use (RFC 8215): 64:ff9b:1::a9fe:a9fe can reach 169.254.169.254
  ['2002::', 16], // 6to4: embeds an IPv4 address (2002:7f00:1:: is 127.0.0.1's)
  ['fec0::', 10], // site-local (deprecated, still routed inside some networks)
  ['fc00::', 7], // unique local, fd00:ec2::254 (AWS metadata) among them
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  refused.addSubnet(net, bits, 'ipv6');

/**
 * Loopback, private, link-local, CGNAT, metadata, unspecified, multicast or reserved: never a webhook's
 * target, nor an address the SMTP mailbox probe connects to (unless the operator allows them). An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`) is judged by its IPv4 rules
 * (BlockList does so itself; a `::ffff:0:0/96` rule would make it refuse every IPv4 address).
 */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return refused.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface ResolvedTarget {
  url: URL;
  /**
   * Every address checked, in the resolver's order (never empty): the request connects to these, one after
   * another when one fails (and to no other the name may resolve to later).
   */
  addresses: readonly { address: string; family: 4 | 6 }[];
}

/**
 * Why a URL may not receive webhooks (the message a 400 shows), or its checked address. `timedOut`: the
 * host name did not resolve before the check's signal aborted (nothing is known about its addresses).
 */
export type TargetCheck = { ok: true; target: ResolvedTarget } | { ok: false; reason: string; timedOut?: true };

/** A host name's addresses, all of them; `signal` (when given) ends the lookup early. */
export type ResolveHost = (host: string, signal?: AbortSignal) => Promise<{ address: string; family: number }[]>;

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS). It cannot be cancelled: the check stops waiting. */
export const systemResolve: ResolveHost = (host) => lookup(host, { all: true, verbatim: true });

/**
 * A host's A and AAAA records from these DNS servers (`host:port`), not the system's resolver: what
 * WEBHOOK_DNS_SERVERS and UPSTREAM_DNS_SERVERS name. Each lookup has its own resolver,
 * cancelled when the signal aborts.
 */
export function resolverAt(servers: readonly string[]): ResolveHost {
  return async (host, signal) => {
    const resolver = new Resolver();
    resolver.setServers(servers);
    const cancel = (): void => resolver.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
      const addresses = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
      ];
      if (addresses.length === 0 && v4.status === 'rejected') throw v4.reason;
      return addresses;
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  };
}

/**
 * Checks a webhook URL: https (http too when `allowPrivate`), then resolves the host and refuses it if
 * any address it resolves to is refused (unless `allowPrivate`). Its addresses are the ones to connect to.
 * With a `signal`, the lookup ends when it aborts (`timedOut`), whether or not the resolver gives up by then:
 * a delivery attempt's deadline covers its DNS lookup too.
 */
export async function checkWebhookTarget(
  raw: string,
  allowPrivate: boolean,
  resolve: ResolveHost = systemResolve,
  signal?: AbortSignal,
): Promise<TargetCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))
    return { ok: false, reason: allowPrivate ? 'must be an http or https URL' : 'must be an https URL' };
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  // Port 0 is no port anyone listens on; a fragment is never sent, so the URL stored is not the one called.
  if (url.port === '0') return { ok: false, reason: 'must not use port 0' };
  if (raw.includes('#')) return { ok: false, reason: 'must not have a #fragment' };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: { address: string; family: number }[];
  try {
    addresses = isIP(host)
      ? [{ address: host, family: isIP(host) }]
      : await (signal ? untilAborted(resolve(host, signal), signal) : resolve(host));
  } catch {
    if (signal?.aborted) return { ok: false, reason: 'has a host name that did not resolve in time', timedOut: true };
    return { ok: false, reason: 'has a host name that does not resolve' };
  }
  if (addresses.length === 0) return { ok: false, reason: 'has a host name that does not resolve' };
  if (!allowPrivate && addresses.some((a) => isRefusedAddress(a.address)))
    return { ok: false, reason: 'resolves to a loopback, private, link-local or metadata address' };
  const checked = addresses.map((a) => ({ address: a.address, family: a.family === 6 ? (6 as const) : (4 as const) }));
  return { ok: true, target: { url, addresses: checked } };
}
