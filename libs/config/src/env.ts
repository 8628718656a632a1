import { Resolver } from 'node:dns';
import { isIP } from 'node:net';
import { z } from 'zod';
import { LOOKUP_KINDS, RATE_FORMAT, countryKey, isPhoneRegion, parseRate, type LookupKind } from '@dossier/domain';

/** Where Redis is: one server (`url`), or a Redis Cluster (`clusterNodes`; credentials and TLS still from `url`). */
export interface RedisTarget {
  url: string;
  clusterNodes: { host: string; port: number }[] | null;
}

/** Thrown at boot when the environment is wrong; the message names every bad variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * A number written in decimal digits (`decimals`: with an optional fraction). Not `Number()` of any text:
 * that reads `0x50` as 80, `3e3` as 3000 and a blank as 0 (a `COST_PHONE=' '` made lookups free).
 */
const digits = (decimals: boolean) =>
  z
    .string()
    .trim()
    .regex(decimals ? /^\d+(\.\d+)?$/ : /^\d+$/, decimals ? 'expected a decimal number' : 'expected a whole number')
    .transform(Number);
const int = (min: number, max: number) => digits(false).pipe(z.number().int().min(min).max(max));
const decimal = () => digits(true).pipe(z.number());

/**
 * An interface to listen on: an IP address (an IPv6 one bare, with a zone if need be: `::1`, `fe80::1%eth0`)
 * or a host name (RFC 1123 labels). Refused at start-up otherwise: `0.0.0.0:3000` or `http://localhost`
 * failed only at listen, with an error that named no variable.
 */
const listenHost = (fallback: string) =>
  z
    .string()
    .refine(
      (v) =>
        isIP(v.replace(/%[\w.-]+$/, '')) !== 0 ||
        (v.length <= 253 && /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/i.test(v)),
      'must be an IP address or a host name, e.g. 0.0.0.0, :: or localhost',
    )
    .default(fallback);
/** `10/10m`, `600/300s`: so many per period (parseRate). */
const rate = () =>
  z
    .string()
    .trim()
    .transform((value, ctx) => {
      const limit = parseRate(value);
      if (limit === null) ctx.addIssue({ code: 'custom', message: `expected ${RATE_FORMAT}` });
      return limit ?? z.NEVER;
    });

const costs = {
  COST_PERSON: int(0, 1_000_000).default(1).describe('credits per person lookup (0–1,000,000)'),
  COST_COMPANY: int(0, 1_000_000).default(1).describe('credits per company lookup (0–1,000,000)'),
  COST_EMAIL: int(0, 1_000_000).default(1).describe('credits per e-mail lookup (0–1,000,000)'),
  COST_PHONE: int(0, 1_000_000).default(1).describe('credits per phone lookup (0–1,000,000)'),
};

const common = {
  NODE_ENV: z
    .enum(['development', 'production', 'test'])
    .default('development')
    .describe('`development`, `production` or `test`'),
  DATABASE_URL: z
    .string()
    .url()
    .default('postgres://postgres@127.0.0.1:5432/dossier')
    .describe('Postgres connection; the database must exist (`npm start` creates it)'),
  REDIS_URL: z
    .string()
    .url()
    // redis:// or rediss://, and a database number when the path names one: `redis://h/x` was read as db 0
    .refine((v) => /^rediss?:\/\/[^/]*(\/\d{0,5})?$/.test(v), 'must be redis://[user:password@]host[:port][/db number]')
    .default('redis://127.0.0.1:6379')
    .describe(
      'Redis connection (`rediss://` for TLS; user, password and db number from the URL, a path that is not ' +
        'a number refused); with `REDIS_CLUSTER_NODES` only its user, password and TLS are used',
    ),
  /** Default `dossier`, or `{dossier}` with REDIS_CLUSTER_NODES (see queuePrefixOf, queuePrefixFor). */
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_{}-]{1,64}$/, 'letters, digits, _ - { } only (no ":")')
    .optional()
    .describe(
      'prefix of every BullMQ key and of the rate-limit buckets; letters, digits, `_ - { }`, no `:`. Unset: ' +
        '`dossier`, or `{dossier}` with `REDIS_CLUSTER_NODES`. With `REDIS_CLUSTER_NODES` it must hold a ' +
        'non-empty `{hash tag}`, else the process refuses to start; each queue then gets a tag of its own, ' +
        '`{dossier-person-lookup}:person-lookup:…` (see [Redis Cluster](operations.md#redis-cluster))',
    ),
  /** `host:port,…` of Redis Cluster nodes: when set, every connection is a cluster client and REDIS_URL's host is unused. */
  REDIS_CLUSTER_NODES: z
    .string()
    .regex(/^\s*[^\s,:]+:\d{1,5}\s*(,\s*[^\s,:]+:\d{1,5}\s*)*$/, 'a comma-separated list of host:port')
    .optional()
    .describe(
      '`host:port,…` of Redis Cluster nodes: every connection (queues, queue events, rate-limit buckets, ' +
        'key revocations, provider limits) goes to the cluster instead of `REDIS_URL` (see ' +
        '[Redis Cluster](operations.md#redis-cluster))',
    ),
  LOG_LEVEL: z
    .enum(['debug', 'info', 'warn', 'error'])
    .default('info')
    .describe(
      '`debug`, `info`, `warn` or `error`: the least severe log line written (JSON lines; see ' +
        '[Operations](operations.md))',
    ),
  /** `auto`: readable lines when stdout is a terminal, JSON lines otherwise. */
  LOG_FORMAT: z
    .enum(['auto', 'json', 'pretty'])
    .default('auto')
    .describe(
      '`json` (one JSON object per line), `pretty` (coloured lines) or `auto`: `pretty` when stdout is a ' +
        'terminal; `npm start` on a terminal sets `pretty`',
    ),
  DB_POOL_SIZE: int(1, 200).default(10).describe('Postgres connections per process (1–200; the CLI always uses 2)'),
  RESULTS_TTL_DAYS: int(1, 3650)
    .default(30)
    .describe(
      'how long search inputs and results are kept: the retention job erases them after this many days (the ' +
        'audit columns stay), deletes webhook delivery attempts as old, and caps `JOB_KEEP_*_S`',
    ),
};

/**
 * The region a national phone number is read in when nothing names one (a person search with no `country`
 * and no country in its `location`; an imported record naming no country; a suppressed number): a
 * two-letter code whose numbering plan libphonenumber knows, in either case (`UK` read as GB).
 */
const phoneRegion = {
  DEFAULT_REGION: z
    .string()
    .trim()
    .transform(countryKey)
    .refine(isPhoneRegion, 'must be a region code whose phone numbering plan is known, such as US or GB')
    .default('US')
    .describe(
      "region a national phone is read in when nothing names one (a person search's `country` or " +
        "`location`, an imported record's country) and for suppressions; one libphonenumber knows " +
        '([ADR 0044](adr/0044-phones-in-any-format.md))',
    ),
};

/** How long (seconds) and how many finished lookup jobs Redis keeps; ages are capped at RESULTS_TTL_DAYS. */
const jobRetention = {
  JOB_KEEP_COMPLETED_S: int(1, 315_360_000)
    .default(3600)
    .describe(
      "completed lookup jobs (their payloads hold the lookup's input) stay in Redis at most this many " +
        'seconds; the age is capped at `RESULTS_TTL_DAYS`',
    ),
  JOB_KEEP_COMPLETED_COUNT: int(0, 10_000_000)
    .default(5000)
    .describe('completed lookup jobs kept in Redis per queue at most'),
  JOB_KEEP_FAILED_S: int(1, 315_360_000)
    .default(7 * 86_400)
    .describe(
      'failed lookup jobs stay in Redis at most this many seconds (7 days: longer than completed ones, so ' +
        'they can be looked at and retried on the board); the age is capped at `RESULTS_TTL_DAYS`',
    ),
  JOB_KEEP_FAILED_COUNT: int(0, 10_000_000)
    .default(10_000)
    .describe('failed lookup jobs kept in Redis per queue at most'),
};

/** The gateway's and the worker's V8 heap (ADR 0025). */
const heap = {
  /** How far the old generation may grow past what the last full GC kept, in percent; 0 leaves it to V8 (10–300 %). */
  HEAP_GROWING_PERCENT: int(0, 1000)
    .default(10)
    .describe(
      'how far (in %) V8 lets the old generation grow past what its last full collection kept; `0` leaves ' +
        'V8 its own factor (ADR 0025: 10 % took the worker from ~260 to ~177 MiB RSS after the bench at no ' +
        'measured throughput cost)',
    ),
};

/** `host:port,…` DNS servers (IP addresses; IPv6 with a port as `[::1]:53`), as a list. */
const dnsServerList = () =>
  z
    .string()
    .transform((v) => v.split(',').map((s) => s.trim()))
    .refine(isDnsServerList, 'expected IP addresses as host:port,…');

/** WEBHOOK_SECRET_KEY: 32 bytes, as 64 hex characters or base64 (e.g. `openssl rand -base64 32`). */
function webhookKeyOf(value: string): Buffer | null {
  const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  return key.length === 32 ? key : null;
}

/** Webhooks (ADR 0020): the key their signing secrets are encrypted under, and whether private targets are allowed. */
const webhooks = {
  WEBHOOK_SECRET_KEY: z
    .string()
    .refine((v) => webhookKeyOf(v) !== null, 'must be 32 bytes, as 64 hex characters or base64')
    .optional()
    .describe(
      '32 bytes as 64 hex characters or base64: webhook secrets are stored encrypted under it ' +
        '(AES-256-GCM). Unset: `POST /v1/webhooks` answers `503`, nothing is delivered ' +
        '([ADR 0020](adr/0020-webhooks.md))',
    ),
  /** `true`: webhook URLs may be http and may resolve to loopback or private addresses (tests, closed networks). */
  WEBHOOK_ALLOW_PRIVATE: z
    .enum(['true', 'false'])
    .default('false')
    .describe(
      '`true`: webhook URLs may be `http` and resolve to loopback, private, link-local or metadata ' +
        'addresses (tests, closed networks); `false`: refused (`400`), and skipped at delivery',
    ),
  /**
   * Worker: longest one delivery attempt may take (resolving the URL's host, connecting, the receiver's
   * answer); gateway: longest the host lookup may take when a webhook is registered.
   */
  WEBHOOK_TIMEOUT_MS: int(100, 60_000)
    .default(10_000)
    .describe(
      "longest one delivery attempt may take, resolving the URL's host, connecting and the receiver's " +
        'answer together (past it the attempt counts as failed and is retried); at registration, longest the ' +
        'host lookup may take (past it: `400` on `url`)',
    ),
  /** `host:port,…` DNS servers a webhook URL's host is resolved through; unset: the system's resolver. */
  WEBHOOK_DNS_SERVERS: dnsServerList()
    .optional()
    .describe(
      "DNS servers a webhook URL's host is resolved through, at registration and at each delivery, instead of " +
        "the system's resolver (`/etc/hosts`, then its DNS): IP addresses as `host:port,…` (a bare address: " +
        "port 53; IPv6 with a port as `[::1]:53`); unset: the system's",
    ),
  /**
   * The first retry's wait; each next one doubles (capped at an hour), for at least 24 h in all. The gateway
   * reads it too: the `batch.completed` it queues (a batch it completed itself) is retried as long.
   */
  WEBHOOK_RETRY_BASE_MS: int(10, 3_600_000)
    .default(30_000)
    .describe(
      "wait before a webhook delivery's first retry; each next one doubles (up to an hour), plus up to 25 % " +
        'jitter, for at least 24 hours in all (the gateway: for a batch it completes itself)',
    ),
};

/** Whether Node's resolver takes these servers (IP addresses, with a port or not; IPv6 with one as `[::1]:53`). */
function isDnsServerList(servers: string[]): boolean {
  try {
    new Resolver().setServers(servers);
    return true;
  } catch {
    return false;
  }
}

function webhooksOf(e: {
  WEBHOOK_SECRET_KEY?: string | undefined;
  WEBHOOK_ALLOW_PRIVATE: 'true' | 'false';
  WEBHOOK_TIMEOUT_MS: number;
  WEBHOOK_DNS_SERVERS?: string[] | undefined;
  WEBHOOK_RETRY_BASE_MS: number;
}) {
  return {
    /** null: webhooks cannot be registered (gateway) nor delivered (worker). */
    key: e.WEBHOOK_SECRET_KEY === undefined ? null : webhookKeyOf(e.WEBHOOK_SECRET_KEY),
    allowPrivate: e.WEBHOOK_ALLOW_PRIVATE === 'true',
    timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    /** null: the system's resolver. */
    dnsServers: e.WEBHOOK_DNS_SERVERS ?? null,
    retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
  };
}

const gatewaySchema = z.object({
  ...common,
  ...heap,
  ...jobRetention,
  ...costs,
  ...webhooks,
  ...phoneRegion,
  PORT: int(0, 65535).default(3000).describe('HTTP port'),
  HOST: listenHost('0.0.0.0').describe('interface to listen on: an IP address or a host name (else refused at start)'),
  /** When set, /metrics is served only on this port (and no longer on PORT); 0 picks a free port. */
  METRICS_PORT: int(0, 65535)
    .optional()
    .describe(
      'serve `GET /metrics` on this port only (`PORT` then answers `404` for it); unset: on `PORT`. See ' +
        '[Operations](operations.md)',
    ),
  /** The interface METRICS_PORT listens on. */
  METRICS_HOST: listenHost('0.0.0.0').describe(
    'interface `METRICS_PORT` listens on (keep the port unpublished; on a bare host use `127.0.0.1` or an ' +
      'internal address)',
  ),
  SIGNUP_CREDITS: int(0, 1_000_000_000)
    .default(100)
    .describe('credits granted on register (recorded in the ledger as a `grant`)'),
  /**
   * Per key. Bounded so that its token bucket works: the bucket's Redis key expires once it is full again
   * (RATE_LIMIT_BURST / RATE_LIMIT_RPS seconds), and past what Redis takes as an expiry every request failed.
   */
  RATE_LIMIT_RPS: decimal()
    .pipe(
      z.number().refine((rps) => rps >= 0.001 && rps <= 1_000_000, 'must be from 0.001 to 1000000 requests a second'),
    )
    .default(50)
    .describe(
      'token-bucket refill per key (per client address on register/login), requests per second: 0.001 to ' +
        '1,000,000',
    ),
  RATE_LIMIT_BURST: int(1, 10_000_000)
    .default(100)
    .describe('bucket size (1 to 10,000,000); reported as `RateLimit-Limit`'),
  /** Failed logins allowed per account (or unknown e-mail) before login answers 429 for it: 10 per 10 min. */
  LOGIN_FAILURE_LIMIT: rate()
    .prefault('10/10m')
    .describe(
      'failed logins allowed per account (or unknown e-mail) as `count/period` (`ms`, `s`, `m`, `h`; up to ' +
        '8784h); past it, login answers `429` with `Retry-After`, even to the right password, until the ' +
        'bucket refills (successes do not count)',
    ),
  /**
   * Password hashes (scrypt, ~32 MiB and ~100 ms of a core each) a gateway computes at once for register
   * and login; PASSWORD_HASH_MAX_WAITING more wait their turn, and past that they are 503 at once.
   */
  PASSWORD_HASH_CONCURRENCY: int(1, 64)
    .default(2)
    .describe(
      'password hashes (scrypt, ~32 MiB and ~100 ms of a core each) a gateway computes at once for register ' +
        'and login',
    ),
  PASSWORD_HASH_MAX_WAITING: int(0, 10_000)
    .default(32)
    .describe(
      'how many more password hashes wait their turn; past that, register and login answer ' +
        '`503 unavailable` with `Retry-After` at once (ADR 0007)',
    ),
  SYNC_WAIT_DEFAULT_S: decimal()
    .pipe(z.number().min(0).max(600))
    .default(10)
    .describe('how long a lookup waits for its result when the request has no `Prefer: wait=N`'),
  SYNC_WAIT_MAX_S: decimal()
    .pipe(z.number().min(0).max(600))
    .default(60)
    .describe('upper bound on `Prefer: wait=N`; must be at least `SYNC_WAIT_DEFAULT_S`'),
  QUEUE_MAX_WAITING: int(1, 100_000_000)
    .default(50_000)
    .describe(
      'waiting jobs in one queue above which new lookups of that kind get `503` (sampled once a second; ' +
        'nothing is charged)',
    ),
  REQUIRE_PERMISSIBLE_PURPOSE: z
    .enum(['true', 'false'])
    .default('false')
    .describe(
      '`true`: person searches (including `POST /v1/search` with `type` `person` or `username`) without ' +
        '`permissible_purpose` are `400`',
    ),
  // Basic auth splits user and password at the first colon: a user name with one could never sign in.
  ADMIN_USER: z
    .string()
    .min(1)
    .refine((v) => !v.includes(':'), 'must not contain ":"')
    .optional()
    .describe(
      'user name for the admin surface (Bull board); set with `ADMIN_PASSWORD` or neither — unset means ' +
        'closed to everyone; may not contain `:` (Basic auth)',
    ),
  ADMIN_PASSWORD: z
    .string()
    .min(1)
    .optional()
    .describe('password for the admin surface; set with `ADMIN_USER` or neither'),
  /**
   * How many proxies in front of the gateway append to X-Forwarded-For: `false` (none: the socket's
   * address), `true` (one), or a count. The client address is the entry the farthest of them wrote; what
   * the client sent itself, further left, is never read (it could name any address it likes).
   */
  TRUST_PROXY: z
    .string()
    .trim()
    .regex(/^(true|false|\d{1,2})$/, 'expected true, false or the number of proxies in front (0–99)')
    .transform((v) => (v === 'true' ? 1 : v === 'false' ? 0 : Number(v)))
    .default(0)
    .describe(
      '`true`: one proxy in front appends the client address to `X-Forwarded-For`; a number: that many do; ' +
        '`false` or `0`: none. The address is the one the farthest proxy wrote, never one the client sent ' +
        '(per-address limits)',
    ),
  /** Longest a client may take to send a request's headers, counted from the connection (or, kept alive, the first byte). */
  HTTP_HEADERS_TIMEOUT_MS: int(100, 600_000)
    .default(10_000)
    .describe(
      "longest a client may take to send a request's headers (from connecting, or from its first byte when " +
        'kept alive); past it: `408 request_timeout`, closed',
    ),
  /** Longest a client may take to send a whole request, headers and body; the wait for the answer is not counted. */
  HTTP_REQUEST_TIMEOUT_MS: int(100, 600_000)
    .default(30_000)
    .describe(
      'longest a client may take to send a whole request, body included (at least ' +
        '`HTTP_HEADERS_TIMEOUT_MS`); the wait for the answer is not counted',
    ),
  /** How long an idle keep-alive connection stays open after an answer. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(100, 600_000)
    .default(72_000)
    .describe(
      'how long an idle keep-alive connection stays open; keep it above the idle timeout of a load balancer ' +
        'in front (AWS ALB: 60 s)',
    ),
});

/**
 * Jobs of each kind a worker process runs at once when neither `WORKER_CONCURRENCY_<KIND>` nor
 * `WORKER_CONCURRENCY` says (ADR 0061): person and company searches spend their time waiting on
 * upstreams (People Data Labs, GLEIF, …: a few hundred ms each), so many overlap on one core; phone and
 * e-mail checks are mostly the worker's own CPU, where more at once only queues them in the process.
 */
const KIND_CONCURRENCY: Readonly<Record<LookupKind, number>> = {
  person: 256,
  company: 256,
  email: 16,
  phone: 16,
};

const workerSchema = z.object({
  ...common,
  ...heap,
  ...jobRetention,
  ...webhooks,
  WEBHOOK_CONCURRENCY: int(1, 1000)
    .default(16)
    .describe(
      'webhook deliveries in flight per worker process, on their own queue: a slow receiver never holds a lookup',
    ),
  LOOKUP_QUEUES: z
    .string()
    .default(LOOKUP_KINDS.join(','))
    .describe('comma-separated lookup kinds this worker consumes'),
  WORKER_CONCURRENCY: int(1, 1000)
    .optional()
    .describe(
      'jobs processed in parallel per queue and process, for every kind; unset, each kind has its own default ' +
        '(`WORKER_CONCURRENCY_<KIND>`)',
    ),
  WORKER_CONCURRENCY_PERSON: int(1, 1000)
    .optional()
    .describe(
      `person jobs processed in parallel per process; unset, \`WORKER_CONCURRENCY\`, else ${KIND_CONCURRENCY.person} ` +
        '(they wait on upstreams: ADR 0061)',
    ),
  WORKER_CONCURRENCY_COMPANY: int(1, 1000)
    .optional()
    .describe(
      `company jobs processed in parallel per process; unset, \`WORKER_CONCURRENCY\`, else ${KIND_CONCURRENCY.company} ` +
        '(they wait on upstreams: ADR 0061)',
    ),
  WORKER_CONCURRENCY_EMAIL: int(1, 1000)
    .optional()
    .describe(
      `e-mail jobs processed in parallel per process; unset, \`WORKER_CONCURRENCY\`, else ${KIND_CONCURRENCY.email}`,
    ),
  WORKER_CONCURRENCY_PHONE: int(1, 1000)
    .optional()
    .describe(
      `phone jobs processed in parallel per process; unset, \`WORKER_CONCURRENCY\`, else ${KIND_CONCURRENCY.phone}`,
    ),
  WORKER_LOCK_MS: int(1000, 600_000)
    .default(30_000)
    .describe(
      'BullMQ job lock (lookups and webhook deliveries); a job whose worker died is redelivered once its ' +
        'lock has expired',
    ),
  WORKER_STALLED_INTERVAL_MS: int(500, 600_000).default(30_000).describe('how often workers look for stalled jobs'),
  WORKER_SHUTDOWN_GRACE_MS: int(0, 600_000)
    .default(30_000)
    .describe(
      'on `SIGTERM`/`SIGINT`, how long active jobs may take to finish before the worker closes anyway ' +
        '(those jobs are redelivered)',
    ),
  /** A search still pending this long with no live job is failed and its reservation released. */
  RECONCILE_AFTER_S: int(5, 86_400)
    .default(30)
    .describe(
      'how old a pending search must be before the reconciler checks its job (the time a gateway may take ' +
        'between reserving a search and queueing its job). One older whose job is gone — never queued, removed ' +
        'on the Bull board, lost with Redis data, failed for good — is failed and its credits released; one ' +
        'whose job exists (waiting, delayed, running) is left alone at any age. A lost search is so released ' +
        'at the latest RECONCILE_AFTER_S + RECONCILE_INTERVAL_MS after its reservation or RECONCILE_INTERVAL_MS ' +
        "after its job's loss, whichever is later (45 s and 15 s by default). A batch this old whose searches " +
        'have all settled is completed if nothing completed it',
    ),
  RECONCILE_INTERVAL_MS: int(100, 3_600_000)
    .default(15_000)
    .describe('how often each worker runs the reconciler (see `RECONCILE_AFTER_S`)'),
  /** Consecutive failures that open an upstream's circuit breaker; how long it stays open before a probe. */
  PROVIDER_BREAKER_THRESHOLD: int(1, 1000)
    .default(5)
    .describe('consecutive failures of one upstream that open its circuit breaker (see [Providers](providers.md))'),
  PROVIDER_BREAKER_HALF_OPEN_MS: int(100, 3_600_000)
    .default(30_000)
    .describe('how long an open breaker skips the upstream before one probe call'),
  /** Attempts per upstream call for transient failures (5xx, refused, reset), the first included. */
  PROVIDER_MAX_ATTEMPTS: int(1, 10)
    .default(2)
    .describe('attempts per upstream call for transient failures (5xx, refused, reset), the first included'),
  UPSTREAM_CONNECT_TIMEOUT_MS: int(100, 60_000)
    .default(3000)
    .describe(
      'longest connecting to an HTTP upstream may take (resolving its host, the TCP and TLS handshakes), apart ' +
        'from the wait for its answer: an upstream that cannot be reached costs a lookup this much, reported as ' +
        '`timeout`; the default lets one lost SYN be sent again (Linux waits 1 s) and a TLS handshake across an ' +
        'ocean finish',
    ),
  /** `host:port,…` DNS servers HTTP upstreams' host names are resolved through; unset: the system's resolver. */
  UPSTREAM_DNS_SERVERS: dnsServerList()
    .optional()
    .describe(
      "DNS servers HTTP upstreams' host names are resolved through instead of the system's resolver: as " +
        "`WEBHOOK_DNS_SERVERS`; unset: the system's. E-mail checks use their own (`DNS_SERVERS`)",
    ),
  /** Port of the worker's /health/live and /health/ready (off when unset; 0 picks a free port). */
  WORKER_HEALTH_PORT: int(0, 65535)
    .optional()
    .describe(
      "port of the worker's `GET /health/live`, `GET /health/ready` and `GET /metrics` (ready: every " +
        "queue's worker running and connected, no job left waiting past `WORKER_READY_STALL_MS` unfinished, " +
        'Postgres answering); `0` picks a free port; unset: off',
    ),
  WORKER_HEALTH_HOST: listenHost('0.0.0.0').describe("interface the worker's health port listens on"),
  /** Not ready when a consumed queue's oldest waiting job is older than this while this worker finished no job in as long. */
  WORKER_READY_STALL_MS: int(1000, 3_600_000)
    .default(60_000)
    .describe(
      'a worker is not ready (`jobs: stalled`) when a queue it consumes has had a job waiting this long ' +
        "while it finished none of that queue's jobs in as long; one with a free slot is then restarted",
    ),
  /** `false`: this worker neither schedules nor runs the retention job (the maintenance queue). */
  WORKER_MAINTENANCE: z
    .enum(['true', 'false'])
    .default('true')
    .describe(
      '`false`: this worker neither upserts the retention schedule nor runs retention jobs (the ' +
        '`maintenance` queue)',
    ),
  /** How often the retention job (one schedule for all workers) purges expired searches and finished jobs. */
  RETENTION_INTERVAL_MS: int(100, 86_400_000)
    .default(3_600_000)
    .describe('how often the retention job runs (one schedule for all workers; the last worker to start sets it)'),
});

const cliSchema = z.object({ ...common, ...phoneRegion, SIGNUP_CREDITS: gatewaySchema.shape.SIGNUP_CREDITS });

/** Each app's schema: what the configuration reference (docs/configuration.md, `npm run docs:config`) is made from. */
export const ENV_SCHEMAS = { gateway: gatewaySchema, worker: workerSchema, cli: cliSchema } as const;

/** The variables each app reads (its schema's keys): what deployment files may set, checked by their tests. */
export const ENV_NAMES: Readonly<Record<'gateway' | 'worker' | 'cli', readonly string[]>> = {
  gateway: Object.keys(gatewaySchema.shape),
  worker: Object.keys(workerSchema.shape),
  cli: Object.keys(cliSchema.shape),
};

/** Empty counts as unset, and so does a value of spaces only (a `KEY= ` left in an env file). */
function isSet(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

/**
 * Variables whose values a message never repeats: secrets, and connection URLs (their passwords). A
 * refusal names them and says what was expected; the operator knows what they set.
 */
const UNSHOWN = new Set(['ADMIN_PASSWORD', 'WEBHOOK_SECRET_KEY', 'DATABASE_URL', 'REDIS_URL']);
/** Longest value a message repeats whole. */
const SHOWN_MAX = 80;

/** `, got "value"` for a refusal's message (cut short past SHOWN_MAX), or why it is not shown. */
function gotOf(name: string, value: string | undefined): string {
  if (value === undefined) return '';
  if (UNSHOWN.has(name)) return ' (value not shown)';
  const shown = value.length <= SHOWN_MAX ? value : `${value.slice(0, SHOWN_MAX)}…`;
  return `, got ${JSON.stringify(shown)}${value.length > SHOWN_MAX ? ` (${value.length} characters)` : ''}`;
}

function parse<T extends z.ZodTypeAny>(schema: T, env: NodeJS.ProcessEnv): z.infer<T> {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => isSet(v)));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = i.path.join('.');
      return `  ${name || '(env)'}: ${i.message}${gotOf(name, cleaned[name])}`;
    });
    throw new ConfigError(`invalid environment:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

export type Costs = Record<LookupKind, number>;

function costsOf(env: { COST_PERSON: number; COST_COMPANY: number; COST_EMAIL: number; COST_PHONE: number }): Costs {
  return { person: env.COST_PERSON, company: env.COST_COMPANY, email: env.COST_EMAIL, phone: env.COST_PHONE };
}

/** `host:port,…` → nodes. */
function clusterNodesOf(list: string | undefined): RedisTarget['clusterNodes'] {
  if (list === undefined) return null;
  return list.split(',').map((entry) => {
    const at = entry.trim().lastIndexOf(':');
    return { host: entry.trim().slice(0, at), port: Number(entry.trim().slice(at + 1)) };
  });
}

/**
 * Redis Cluster keeps a multi-key command's keys in one slot only when they share a hash tag, and
 * every BullMQ script and the token bucket touch several keys: on a cluster the prefix must hold a
 * `{tag}`. Unset, it is `{dossier}`; set without one, the process refuses to start (wrapping it
 * silently would rename every key an operator's dashboards and autoscalers watch).
 */
function queuePrefixOf(prefix: string | undefined, cluster: boolean): string {
  if (!cluster) return prefix ?? 'dossier';
  if (prefix === undefined) return '{dossier}';
  if (!hasHashTag(prefix)) {
    throw new ConfigError(
      `invalid environment:\n  QUEUE_PREFIX: with REDIS_CLUSTER_NODES it must contain a non-empty {hash tag}, e.g. {${prefix.replace(/[{}]/g, '')}}`,
    );
  }
  return prefix;
}

/**
 * The BullMQ prefix of the queue named `queue`: QUEUE_PREFIX as is on one Redis (no key moves). With
 * REDIS_CLUSTER_NODES each queue gets a hash tag of its own, the operator's tag with `-<queue>` inside it
 * (`{dossier}` → `{dossier-person-lookup}`, `prod-{dq}` → `prod-{dq-person-lookup}`): all of a queue's keys,
 * its events stream with them, stay in one slot as BullMQ's scripts need, and the queues hash to different
 * slots, spread over the masters (ADR 0065). Every process and tool that opens a queue takes its prefix
 * here; Dossier's own keys (rate limits, revocations, provider reports, reply channels) keep `queuePrefix`.
 */
export function queuePrefixFor(config: { queuePrefix: string; redis: RedisTarget }, queue: string): string {
  const prefix = config.queuePrefix;
  if (config.redis.clusterNodes === null) return prefix;
  const close = prefix.indexOf('}', prefix.indexOf('{') + 1);
  return `${prefix.slice(0, close)}-${queue}${prefix.slice(close)}`;
}

/** Redis's rule: the text between the first `{` and the next `}`, when not empty, is what the slot is hashed from. */
export function hasHashTag(key: string): boolean {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1;
}

function commonOf(env: z.infer<z.ZodObject<typeof common>>) {
  const redis: RedisTarget = { url: env.REDIS_URL, clusterNodes: clusterNodesOf(env.REDIS_CLUSTER_NODES) };
  return {
    env: env.NODE_ENV,
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    redis,
    queuePrefix: queuePrefixOf(env.QUEUE_PREFIX, redis.clusterNodes !== null),
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT,
    dbPoolSize: env.DB_POOL_SIZE,
    resultsTtlDays: env.RESULTS_TTL_DAYS,
  };
}

export type CommonConfig = ReturnType<typeof commonOf>;

/**
 * BullMQ's removeOnComplete/removeOnFail for lookup jobs (their payloads hold the lookup's input): by
 * age and by count, an age never beyond RESULTS_TTL_DAYS.
 */
function jobRetentionOf(e: z.infer<z.ZodObject<typeof jobRetention>> & { RESULTS_TTL_DAYS: number }) {
  const maxAge = e.RESULTS_TTL_DAYS * 86_400;
  return {
    completed: { age: Math.min(e.JOB_KEEP_COMPLETED_S, maxAge), count: e.JOB_KEEP_COMPLETED_COUNT },
    failed: { age: Math.min(e.JOB_KEEP_FAILED_S, maxAge), count: e.JOB_KEEP_FAILED_COUNT },
  };
}

/**
 * The HTTP server's receive-side limits. Node checks the headers and request deadlines on a timer
 * (30 s by default); ticking at a tenth of the shorter one, between 50 ms and 1 s, ends a stalled
 * request within about its timeout rather than up to 30 s after it.
 */
function httpTimeoutsOf(e: {
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number;
}) {
  const shorter = Math.min(e.HTTP_HEADERS_TIMEOUT_MS, e.HTTP_REQUEST_TIMEOUT_MS);
  return {
    headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    timeoutCheckIntervalMs: Math.min(1000, Math.max(50, Math.floor(shorter / 10))),
  };
}

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env) {
  const e = parse(gatewaySchema, env);
  if (e.SYNC_WAIT_DEFAULT_S > e.SYNC_WAIT_MAX_S) {
    throw new ConfigError(
      `invalid environment:\n  SYNC_WAIT_DEFAULT_S: ${e.SYNC_WAIT_DEFAULT_S} must not exceed SYNC_WAIT_MAX_S (${e.SYNC_WAIT_MAX_S})`,
    );
  }
  if ((e.ADMIN_USER === undefined) !== (e.ADMIN_PASSWORD === undefined)) {
    throw new ConfigError('invalid environment:\n  ADMIN_USER/ADMIN_PASSWORD: set both or neither');
  }
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT !== 0 && e.METRICS_PORT === e.PORT) {
    throw new ConfigError(
      `invalid environment:\n  METRICS_PORT: ${e.METRICS_PORT} must differ from PORT (unset it to serve /metrics on PORT)`,
    );
  }
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError(
      `invalid environment:\n  HTTP_HEADERS_TIMEOUT_MS: ${e.HTTP_HEADERS_TIMEOUT_MS} must not exceed HTTP_REQUEST_TIMEOUT_MS (${e.HTTP_REQUEST_TIMEOUT_MS})`,
    );
  }
  return {
    ...commonOf(e),
    heapGrowingPercent: e.HEAP_GROWING_PERCENT,
    jobRetention: jobRetentionOf(e),
    port: e.PORT,
    host: e.HOST,
    /** Where /metrics is served apart from the API; null: on PORT with the API. */
    metrics: e.METRICS_PORT === undefined ? null : { port: e.METRICS_PORT, host: e.METRICS_HOST },
    signupCredits: e.SIGNUP_CREDITS,
    costs: costsOf(e),
    rateLimit: { rps: e.RATE_LIMIT_RPS, burst: e.RATE_LIMIT_BURST },
    loginFailureLimit: e.LOGIN_FAILURE_LIMIT,
    passwordHashing: { concurrency: e.PASSWORD_HASH_CONCURRENCY, maxWaiting: e.PASSWORD_HASH_MAX_WAITING },
    syncWaitDefaultS: e.SYNC_WAIT_DEFAULT_S,
    syncWaitMaxS: e.SYNC_WAIT_MAX_S,
    queueMaxWaiting: e.QUEUE_MAX_WAITING,
    requirePermissiblePurpose: e.REQUIRE_PERMISSIBLE_PURPOSE === 'true',
    /** DEFAULT_REGION: where a person search's national phone is read when it names no country. */
    defaultRegion: e.DEFAULT_REGION,
    admin: e.ADMIN_USER && e.ADMIN_PASSWORD ? { user: e.ADMIN_USER, password: e.ADMIN_PASSWORD } : null,
    /** Proxy hops trusted for X-Forwarded-For (0: none); a hop count, never "trust every hop". */
    trustProxy: e.TRUST_PROXY,
    http: httpTimeoutsOf(e),
    webhooks: webhooksOf(e),
  };
}
export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;

export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env) {
  const e = parse(workerSchema, env);
  const queues = e.LOOKUP_QUEUES.split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const unknown = queues.filter((q) => !(LOOKUP_KINDS as readonly string[]).includes(q));
  if (queues.length === 0 || unknown.length > 0) {
    throw new ConfigError(
      `invalid environment:\n  LOOKUP_QUEUES: unknown lookup kind(s) ${JSON.stringify(unknown)}; use a comma-separated subset of ${LOOKUP_KINDS.join(',')}`,
    );
  }
  const kinds = [...new Set(queues)] as LookupKind[];
  const perKind: Record<LookupKind, number | undefined> = {
    person: e.WORKER_CONCURRENCY_PERSON,
    company: e.WORKER_CONCURRENCY_COMPANY,
    email: e.WORKER_CONCURRENCY_EMAIL,
    phone: e.WORKER_CONCURRENCY_PHONE,
  };
  const concurrency = Object.fromEntries(
    LOOKUP_KINDS.map((k) => [k, perKind[k] ?? e.WORKER_CONCURRENCY ?? KIND_CONCURRENCY[k]]),
  ) as Record<LookupKind, number>;
  return {
    ...commonOf(e),
    heapGrowingPercent: e.HEAP_GROWING_PERCENT,
    jobRetention: jobRetentionOf(e),
    kinds,
    concurrency,
    lockDurationMs: e.WORKER_LOCK_MS,
    stalledIntervalMs: e.WORKER_STALLED_INTERVAL_MS,
    shutdownGraceMs: e.WORKER_SHUTDOWN_GRACE_MS,
    reconcileAfterS: e.RECONCILE_AFTER_S,
    reconcileIntervalMs: e.RECONCILE_INTERVAL_MS,
    upstreams: {
      breakerThreshold: e.PROVIDER_BREAKER_THRESHOLD,
      halfOpenAfterMs: e.PROVIDER_BREAKER_HALF_OPEN_MS,
      maxAttempts: e.PROVIDER_MAX_ATTEMPTS,
    },
    /** How HTTP upstreams are reached (the providers' `useUpstreamNetwork`). */
    upstreamNetwork: {
      connectTimeoutMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
      /** null: the system's resolver. */
      dnsServers: e.UPSTREAM_DNS_SERVERS ?? null,
    },
    healthPort: e.WORKER_HEALTH_PORT ?? null,
    healthHost: e.WORKER_HEALTH_HOST,
    readyStallMs: e.WORKER_READY_STALL_MS,
    maintenance: e.WORKER_MAINTENANCE === 'true' ? { intervalMs: e.RETENTION_INTERVAL_MS } : null,
    webhooks: {
      ...webhooksOf(e),
      concurrency: e.WEBHOOK_CONCURRENCY,
    },
  };
}
export type WorkerConfig = ReturnType<typeof loadWorkerConfig>;

export function loadCliConfig(env: NodeJS.ProcessEnv = process.env) {
  const e = parse(cliSchema, env);
  return { ...commonOf(e), signupCredits: e.SIGNUP_CREDITS, defaultRegion: e.DEFAULT_REGION };
}
export type CliConfig = ReturnType<typeof loadCliConfig>;

/**
 * The raw values of the given provider configuration keys (API keys, base URLs). Read here and only here;
 * a blank one is unset, as for every other variable (`HUNTER_API_KEY=' '` must not switch Hunter on).
 */
export function loadProviderSettings(
  keys: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string | undefined> {
  return Object.fromEntries(keys.map((k) => [k, isSet(env[k]) ? env[k] : undefined]));
}

const benchSchema = z.object({
  /** The Postgres server to use: the bench creates (and drops) its own database there; the path is ignored. */
  DATABASE_URL: common.DATABASE_URL,
  REDIS_URL: common.REDIS_URL,
  /** Refused: the benchmark measures one Redis (its proxies count the wire and its cleanup scans one keyspace). */
  REDIS_CLUSTER_NODES: z
    .string()
    .optional()
    .refine((v) => v === undefined, 'the benchmark runs against one Redis (REDIS_URL): unset REDIS_CLUSTER_NODES'),
});

/** The benchmark's connections (`npm run bench`); everything else it takes as command-line flags. */
export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env) {
  const e = parse(benchSchema, env);
  return { databaseUrl: e.DATABASE_URL, redisUrl: e.REDIS_URL };
}
export type BenchConfig = ReturnType<typeof loadBenchConfig>;
