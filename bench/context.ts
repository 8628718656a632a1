/**
 * What every phase runs against: the bench's own database (created, migrated and dropped here), its
 * own queue prefix (keys deleted at the end), the window accounting, and the processes and proxies
 * to stop whatever happens.
 */
import IORedis, { type Redis } from 'ioredis';
import { Client } from 'pg';
import type { BenchConfig } from '@dossier/config';
import { redisOptionsFromUrl } from '@dossier/runtime';
import { AppProcess, runCli, type StartOptions } from '@dossier/testing';
import { Accounting } from './accounting';
import type { BenchOptions } from './options';

/** The bench keeps this much of each process's output (the newest), for failure messages. */
const KEEP_OUTPUT_CHARS = 64_000;

export class BenchContext {
  readonly dbName = `dossier_bench_${process.pid}`;
  readonly prefix = `bench-${process.pid}-${Date.now().toString(36)}`;
  /** The bench database on the DATABASE_URL server. */
  readonly dbUrl: string;
  /** The server's `postgres` database: creates and drops the bench database, reads pg_stat_*. */
  readonly admin: Client;
  readonly redis: Redis;
  readonly acct: Accounting;
  private readonly aborter = new AbortController();
  private readonly apps = new Set<AppProcess>();
  private readonly closeables = new Set<{ close(): Promise<void> }>();
  private dbCreated = false;

  constructor(
    readonly opts: BenchOptions,
    readonly config: BenchConfig,
  ) {
    const adminUrl = new URL(config.databaseUrl);
    adminUrl.pathname = '/postgres';
    const dbUrl = new URL(config.databaseUrl);
    dbUrl.pathname = `/${this.dbName}`;
    this.dbUrl = dbUrl.toString();
    this.admin = new Client({ connectionString: adminUrl.toString(), application_name: 'dossier-bench' });
    this.redis = new IORedis({ ...redisOptionsFromUrl(config.redisUrl), maxRetriesPerRequest: 2, lazyConnect: true });
    this.acct = new Accounting(this.admin, this.redis, this.dbName);
  }

  /** Aborted by SIGINT/SIGTERM: load loops stop issuing and the bench cleans up. */
  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  /** Connects, creates the bench database (with --pg-set applied) and migrates it with the compiled CLI. */
  async open(): Promise<void> {
    await this.admin.connect();
    await this.redis.connect();
    await this.admin.query(`CREATE DATABASE ${this.dbName}`);
    this.dbCreated = true;
    for (const [k, v] of Object.entries(this.opts.pgSet)) {
      await this.admin.query(`ALTER DATABASE ${this.dbName} SET ${k} = ${v}`);
    }
    const migrate = await runCli(['db:migrate'], { DATABASE_URL: this.dbUrl });
    if (migrate.code !== 0) {
      throw new Error(`cli db:migrate exited with ${String(migrate.code)}:\n${migrate.stdout}${migrate.stderr}`);
    }
  }

  /** Starts a compiled script as a process that `close()` stops if its phase does not. */
  start(name: string, script: string, env: Record<string, string>, options: StartOptions = {}): AppProcess {
    const app = AppProcess.start(name, script, env, { maxOutputChars: KEEP_OUTPUT_CHARS, ...options });
    this.apps.add(app);
    return app;
  }

  async stop(app: AppProcess): Promise<void> {
    await app.stop();
    this.apps.delete(app);
  }

  /** Something `close()` closes if its phase does not (e.g. a proxy). */
  own<T extends { close(): Promise<void> }>(thing: T): T {
    this.closeables.add(thing);
    return thing;
  }

  async release(thing: { close(): Promise<void> }): Promise<void> {
    this.closeables.delete(thing);
    await thing.close();
  }

  /** SIGINT/SIGTERM: the load stops and every process is asked to stop. */
  interrupt(): void {
    this.aborter.abort(new Error('interrupted'));
    for (const app of this.apps) if (app.running) app.child.kill('SIGTERM');
  }

  /** Stops what still runs, drops the database, deletes the prefix's keys; reports but never throws. */
  async close(): Promise<void> {
    await Promise.all([...this.apps].map((app) => this.stop(app)));
    await Promise.all(
      [...this.closeables].map((c) => this.release(c).catch((e: unknown) => console.error(`close: ${String(e)}`))),
    );
    if (this.dbCreated) {
      await this.admin
        .query(`DROP DATABASE IF EXISTS ${this.dbName} WITH (FORCE)`)
        .catch((e: unknown) => console.error(`could not drop ${this.dbName}: ${String(e)}`));
    }
    if (this.redis.status === 'ready') {
      await deleteKeys(this.redis, this.prefix).catch((e: unknown) =>
        console.error(`could not delete ${this.prefix}:* keys: ${String(e)}`),
      );
    }
    await this.admin.end().catch(() => undefined);
    this.redis.disconnect();
  }
}

async function deleteKeys(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}
