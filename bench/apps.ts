/**
 * The real gateway and worker as the bench runs them: production mode, the bench's database and queue
 * prefix, limits out of the way, --node-arg / --profile / --count-wire applied, ready when their
 * health endpoints say so.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Api, DIST, LOOPBACK_PROVIDER_ENV, freePort, REPO_ROOT, waitFor, type AppProcess } from '@dossier/testing';
import type { BenchContext } from './context';
import { countingProxy, type WireCounters } from './wire-counter';

/** Preloaded with --profile: SIGWINCH starts and stops a V8 CPU profile (see cpu-profile-hook.ts). */
const PROFILE_HOOK = resolve(REPO_ROOT, 'dist/bench/cpu-profile-hook.js');
/** A large profile takes a few seconds to serialise. */
const PROFILE_WRITE_TIMEOUT_MS = 30_000;

export interface BenchApp {
  readonly role: 'gateway' | 'worker';
  readonly app: AppProcess;
  /** The counting proxies in front of its Postgres and Redis (--count-wire), else null. */
  readonly wire: WireCounters | null;
}

export interface BenchGateway extends BenchApp {
  readonly baseUrl: string;
}

/** Starts a gateway with no rate limit and credits for any run; `env` goes under --gateway-env. */
export async function startGateway(ctx: BenchContext, env: Record<string, string> = {}): Promise<BenchGateway> {
  const port = await freePort();
  const { env: common, wire } = await commonEnv(ctx);
  const app = start(ctx, 'gateway', DIST.gateway, {
    ...common,
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMIT_RPS: '1000000',
    RATE_LIMIT_BURST: '10000000',
    SIGNUP_CREDITS: '100000000',
    ...env,
    ...ctx.opts.gatewayEnv,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await app.waitReady(`${baseUrl}/health/ready`);
  return { role: 'gateway', app, wire, baseUrl };
}

/** Registers `count` accounts through the gateway (each with the signup credits); returns their API keys. */
export async function registerAccounts(gateway: BenchGateway, count: number): Promise<string[]> {
  const api = new Api(gateway.baseUrl);
  const keys: string[] = [];
  for (let i = 0; i < count; i++) keys.push((await api.register()).key);
  return keys;
}

/**
 * Starts a worker and waits until its health endpoint says it consumes. `env` goes under
 * --worker-env, `pinnedEnv` over it (what the phase measures, e.g. a concurrency).
 */
export async function startWorker(
  ctx: BenchContext,
  env: Record<string, string> = {},
  pinnedEnv: Record<string, string> = {},
): Promise<BenchApp> {
  const healthPort = await freePort();
  const { env: common, wire } = await commonEnv(ctx);
  const app = start(ctx, 'worker', DIST.worker, {
    ...common,
    ...env,
    ...ctx.opts.workerEnv,
    ...pinnedEnv,
    WORKER_HEALTH_PORT: String(healthPort),
    WORKER_HEALTH_HOST: '127.0.0.1',
  });
  await app.waitReady(`http://127.0.0.1:${healthPort}/health/ready`);
  return { role: 'worker', app, wire };
}

/** Stops the process and its counting proxies. */
export async function stopApp(ctx: BenchContext, app: BenchApp): Promise<void> {
  await ctx.stop(app.app);
  if (app.wire) await Promise.all([ctx.release(app.wire.pg.proxy), ctx.release(app.wire.redis.proxy)]);
}

/** Throws with its output when one of them has exited (a run with a dead process measures nothing). */
export function assertRunning(apps: BenchApp[]): void {
  for (const { app } of apps) {
    if (!app.running)
      throw new Error(
        `${app.name} exited during the run (${String(app.child.exitCode ?? app.child.signalCode)}):\n${app.logs}`,
      );
  }
}

/** Zeroes the wire counts at the start of a measured window. */
export function resetWire(apps: BenchApp[]): void {
  for (const { wire } of apps) {
    wire?.pg.counts.reset();
    wire?.redis.counts.reset();
  }
}

/** --profile: starts the CPU profile of each app (the window's start). */
export function startProfiles(ctx: BenchContext, apps: BenchApp[]): void {
  if (ctx.opts.profileDir) for (const { app } of apps) app.child.kill('SIGWINCH');
}

/** --profile: stops the CPU profile of each app and waits until each has written `<pid>.cpuprofile`. */
export async function stopProfiles(ctx: BenchContext, apps: BenchApp[]): Promise<void> {
  const dir = ctx.opts.profileDir;
  if (!dir) return;
  await Promise.all(
    apps.map(async ({ app }) => {
      const file = join(dir, `${app.pid}.cpuprofile`);
      rmSync(file, { force: true }); // an earlier window's profile of the same process
      app.child.kill('SIGWINCH');
      await waitFor(
        async () => existsSync(file),
        (written) => written,
        { timeoutMs: PROFILE_WRITE_TIMEOUT_MS, what: `${app.name}'s cpu profile ${file}` },
      );
    }),
  );
}

function start(ctx: BenchContext, name: BenchApp['role'], script: string, env: Record<string, string>): AppProcess {
  const dir = ctx.opts.profileDir;
  if (dir) mkdirSync(dir, { recursive: true });
  return ctx.start(name, script, env, {
    nodeArgs: [...ctx.opts.nodeArgs, ...(dir ? ['-r', PROFILE_HOOK] : [])],
    cwd: dir ?? undefined,
  });
}

/** The connections and mode every app gets; with --count-wire, through its own counting proxies. */
async function commonEnv(ctx: BenchContext): Promise<{ env: Record<string, string>; wire: WireCounters | null }> {
  let wire: WireCounters | null = null;
  let dbUrl = ctx.dbUrl;
  let redisUrl = ctx.config.redisUrl;
  if (ctx.opts.countWire) {
    const pg = await countingProxy('postgres', ctx.dbUrl);
    ctx.own(pg.proxy);
    const redis = await countingProxy('redis', ctx.config.redisUrl);
    ctx.own(redis.proxy);
    wire = { pg, redis };
    dbUrl = pg.proxy.url(ctx.dbUrl);
    redisUrl = redis.proxy.url(ctx.config.redisUrl);
  }
  return {
    env: {
      DATABASE_URL: dbUrl,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: ctx.prefix,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      // Nothing the bench starts leaves loopback (a phase points a provider at a fake where it needs one).
      ...LOOPBACK_PROVIDER_ENV,
    },
    wire,
  };
}
