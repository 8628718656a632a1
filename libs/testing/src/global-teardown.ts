import IORedis from 'ioredis';
import { Client } from 'pg';
import { testEnv, withDatabase } from './test-env';

export default async function globalTeardown(): Promise<void> {
  const database = process.env['DOSSIER_TEST_DATABASE'];
  if (database && !process.env['DOSSIER_TEST_KEEP']) {
    const admin = new Client({ connectionString: withDatabase(testEnv.baseDatabaseUrl, 'postgres') });
    await admin.connect();
    try {
      // The run's database and any database a test file made of its own (ownDatabase) and left behind.
      const { rows } = await admin.query<{ datname: string }>(
        `SELECT datname FROM pg_database WHERE datname = $1 OR starts_with(datname, $1 || '_')`,
        [database],
      );
      for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  }
  const prefix = process.env['DOSSIER_TEST_PREFIX'];
  if (prefix) {
    const redis = new IORedis(testEnv.redisUrl);
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }
}
