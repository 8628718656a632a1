import { randomBytes } from 'node:crypto';

/**
 * Where the tests find Redis and Postgres, and the names this run isolates itself under.
 * Jest's global setup fixes the run's database and prefix in the environment; test files read them here.
 */
export const testEnv = {
  redisUrl: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
  /** The server and base name tests derive their own database from. */
  baseDatabaseUrl:
    process.env['DOSSIER_TEST_BASE_DATABASE_URL'] ??
    process.env['DATABASE_URL'] ??
    'postgres://postgres@127.0.0.1:5432/dossier_test',
  /** Debian's Chromium, for the tests that drive a page in a headless browser (playwright-core). */
  chromiumPath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
  get databaseUrl(): string {
    const url = process.env['DOSSIER_TEST_DATABASE_URL'];
    if (!url) throw new Error('DOSSIER_TEST_DATABASE_URL is not set: run the tests through jest (global setup)');
    return url;
  },
  get runPrefix(): string {
    const prefix = process.env['DOSSIER_TEST_PREFIX'];
    if (!prefix) throw new Error('DOSSIER_TEST_PREFIX is not set: run the tests through jest (global setup)');
    return prefix;
  },
};

/** A fresh queue prefix under this run's prefix (no ':' — BullMQ reserves it). */
export function uniquePrefix(label: string): string {
  return `${testEnv.runPrefix}-${label}-${randomBytes(3).toString('hex')}`;
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
