import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { testEnv, withDatabase } from './test-env';
import { DIST } from './dist';

/** One database and one key prefix per test run: parallel runs and leftovers never interfere. */
export default async function globalSetup(): Promise<void> {
  const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const base = new URL(testEnv.baseDatabaseUrl);
  const baseName = (base.pathname.slice(1) || 'dossier_test').replace(/[^a-z0-9_]/gi, '_');
  const database = `${baseName}_${tag}`.toLowerCase().slice(0, 63);
  const admin = new Client({ connectionString: withDatabase(testEnv.baseDatabaseUrl, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${database}"`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(testEnv.baseDatabaseUrl, database);
  // Migrate with the compiled CLI, exactly as `npm run db:migrate` does (npm test builds first).
  const cli = DIST.cli;
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first (npm test does)`);
  execFileSync(process.execPath, [cli, 'db:migrate'], { env: { ...process.env, DATABASE_URL: url }, stdio: 'pipe' });
  process.env['DOSSIER_TEST_BASE_DATABASE_URL'] = testEnv.baseDatabaseUrl;
  process.env['DOSSIER_TEST_DATABASE_URL'] = url;
  process.env['DOSSIER_TEST_DATABASE'] = database;
  process.env['DOSSIER_TEST_PREFIX'] = `dossiert${tag}`;
}
