import { adminSql, freePort, runCli, testEnv, withDatabase } from '@dossier/testing';

/** `db:migrate` as deploys run it: several at once on an empty database (a migrate job and an operator's). */
describe('CLI db:migrate (real Postgres)', () => {
  const database = `${new URL(testEnv.databaseUrl).pathname.slice(1)}_migrate_race`.slice(0, 63);
  const url = withDatabase(testEnv.baseDatabaseUrl, database);

  beforeAll(async () => {
    await adminSql(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await adminSql(`CREATE DATABASE "${database}"`);
  });
  afterAll(async () => {
    await adminSql(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  });

  it('lets three runs at once take turns: one applies every migration, the others find nothing left', async () => {
    const runs = await Promise.all([1, 2, 3].map(() => runCli(['db:migrate'], { DATABASE_URL: url })));
    expect(runs.map((r) => [r.code, r.stderr])).toEqual([
      [0, ''],
      [0, ''],
      [0, ''],
    ]);
    const again = await runCli(['db:migrate'], { DATABASE_URL: url });
    expect(again.code).toBe(0);
    const { Client } = await import('pg');
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number; distinct_n: number }>(
        'SELECT count(*)::int AS n, count(DISTINCT name)::int AS distinct_n FROM migrations',
      );
      expect(rows[0]!.n).toBe(rows[0]!.distinct_n);
      expect(rows[0]!.n).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
  });

  it("gives the outbox rows waiting at the upgrade to the deployment's relay (ADR 0067), new rows by default", async () => {
    const { Client } = await import('pg');
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      // The database as it was before the relay column, with one event waiting.
      await client.query(`ALTER TABLE outbox DROP COLUMN relay`);
      await client.query(`DELETE FROM migrations WHERE name = 'OutboxRelay2180000000000'`);
      await client.query(
        `INSERT INTO outbox (search_id, event, announce) VALUES ('srch_waiting', 'search.failed', true)`,
      );
      const run = await runCli(['db:migrate'], { DATABASE_URL: url, QUEUE_PREFIX: 'prod-a' });
      expect([run.code, run.stdout, run.stderr]).toEqual([0, 'applied: OutboxRelay2180000000000\n', '']);
      await client.query(
        `INSERT INTO outbox (search_id, event, announce) VALUES ('srch_unnamed', 'search.failed', true)`,
      );
      const { rows } = await client.query(`SELECT search_id, relay FROM outbox ORDER BY id`);
      expect(rows).toEqual([
        { search_id: 'srch_waiting', relay: 'prod-a' },
        { search_id: 'srch_unnamed', relay: null },
      ]);
    } finally {
      await client.query(`DELETE FROM outbox`);
      await client.end();
    }
  });

  it('says it cannot reach Postgres, naming DATABASE_URL (never its password), exit 1, when nothing listens there', async () => {
    const port = await freePort(); // nothing listens there
    const run = await runCli(['db:migrate'], { DATABASE_URL: `postgres://postgres:s3cret@127.0.0.1:${port}/dossier` });
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(
        new RegExp(
          `^cannot reach Postgres at 127\\.0\\.0\\.1:${port}/dossier \\(DATABASE_URL\\): connect ECONNREFUSED .*\n$`,
        ),
      ),
    });
    expect(run.stderr).not.toContain('s3cret');
  });
});
