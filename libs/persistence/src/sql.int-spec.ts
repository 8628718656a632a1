import type { DataSource } from 'typeorm';
import { testEnv } from '@dossier/testing';
import { openDataSource } from './data-source';
import { queryGeneric, queryRows } from './sql';

describe('queryGeneric and the connection settings against the real Postgres', () => {
  let db: DataSource;

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 2, applicationName: 'sql-spec' });
  });
  afterAll(async () => {
    await db?.destroy();
  });

  const ECHO = `SELECT $1::text AS s, $2::int AS n, $3::text[] AS a, $4::text AS missing, current_setting('plan_cache_mode') AS mode`;

  it('passes strings, numbers, nulls and arrays through as the extended protocol would, quotes and backslashes included', async () => {
    const awkward = `O'Brien \\ "x" ; DROP TABLE searches; --`;
    const values = [awkward, 42, [awkward, 'plain', ''], null] as const;
    const [generic] = await queryGeneric<Record<string, unknown>>(db, ECHO, [...values]);
    const [extended] = await queryRows<Record<string, unknown>>(db, ECHO, [...values]);
    expect({ ...generic, mode: undefined }).toEqual({ ...extended, mode: undefined });
    expect(generic).toEqual({
      s: awkward,
      n: 42,
      a: [awkward, 'plain', ''],
      missing: null,
      mode: 'force_generic_plan',
    });
    const [empty] = await queryGeneric<{ a: string[] }>(db, ECHO, ['', 0, [], undefined]);
    expect(empty!.a).toEqual([]);
  });

  it('runs under the generic plan only for its own statement: the connection keeps the default after it', async () => {
    // More calls than connections: every pooled connection prepares it once, and runs it again after.
    for (let i = 0; i < 6; i++) {
      const [row] = await queryGeneric<{ n: number }>(db, ECHO, ['a', i, ['b'], null]);
      expect(row!.n).toBe(i);
    }
    const modes = await Promise.all(
      [1, 2].map(() => queryRows<{ mode: string }>(db, `SELECT current_setting('plan_cache_mode') AS mode`)),
    );
    expect(modes.flat().map((m) => m.mode)).toEqual(['auto', 'auto']);
  });

  it('runs every connection without JIT compilation or parallel workers (ADR 0072)', async () => {
    const [settings] = await queryRows<{ jit: string; workers: string }>(
      db,
      `SELECT current_setting('jit') AS jit, current_setting('max_parallel_workers_per_gather') AS workers`,
    );
    expect(settings).toEqual({ jit: 'off', workers: '0' });
  });

  it('refuses a value it cannot write as a literal, sending nothing', async () => {
    await expect(queryGeneric(db, ECHO, ['a', Number.NaN, [], null])).rejects.toThrow('not a finite number: NaN');
  });
});
