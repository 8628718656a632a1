import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { parseSuppressionSubject } from '@dossier/domain';
import { testEnv } from '@dossier/testing';
import { openDataSource } from './data-source';
import { SuppressionsRepository } from './suppressions.repository';

describe('SuppressionsRepository against the real Postgres', () => {
  let db: DataSource;
  let list: SuppressionsRepository;
  // The run's database is shared with other suites: subjects only this test uses.
  const tag = randomUUID().slice(0, 8);
  const email = parseSuppressionSubject({ email: `Opt.Out+${tag}@Example.com` }, 'US');
  const name = parseSuppressionSubject({ name: `Ada ${tag} Byron`, birth_year: 1815 }, 'US');

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 4, applicationName: 'int-spec' });
    list = new SuppressionsRepository(db);
  });
  afterAll(async () => {
    await list?.remove(email);
    await list?.remove(name);
    await db?.destroy();
  });

  it('adds a subject once: adding it again, even at the same time, returns the same entry', async () => {
    const first = await list.add(email);
    expect(first).toEqual({
      created: true,
      entry: { id: expect.stringMatching(/^sup_/), kind: 'email', hint: email.hint, created_at: expect.any(Date) },
    });
    const again = await Promise.all(
      [1, 2, 3].map(() => list.add(parseSuppressionSubject({ email: `opt.out+${tag}@example.COM` }, 'US'))),
    );
    expect(again).toEqual([1, 2, 3].map(() => ({ created: false, entry: first.entry })));
    const rows = await db.query(`SELECT * FROM suppressions WHERE id = $1`, [first.entry.id]);
    expect(rows).toHaveLength(1);
  });

  it('stores no readable subject: only the key hash and the masked hint', async () => {
    const { entry } = await list.add(name);
    const [row] = (await db.query(`SELECT * FROM suppressions WHERE id = $1`, [entry.id])) as Record<string, unknown>[];
    expect(Object.keys(row!).sort()).toEqual(['alias_hash', 'created_at', 'hint', 'id', 'key_hash', 'kind']);
    expect(row!['key_hash']).toMatch(/^[0-9a-f]{64}$/);
    expect(row!['alias_hash']).toBeNull(); // "Ada … Byron" folds one way only
    // The hash and the id are hex and base62 noise: "ada" turns up in one hash in ~70. Only
    // the other columns could hold a readable subject.
    const { key_hash: _hash, id: _id, ...readable } = row!;
    expect(JSON.stringify(readable)).not.toMatch(new RegExp(`ada|byron|${tag}`, 'i'));
    expect(row!['hint']).toBe('A… ' + `${tag[0]!.toUpperCase()}… B…, 1815`);
  });

  it('finds which of many keys are listed in one query, and lists the entries', async () => {
    const matched = await list.matching([
      email.key,
      `name:ada ${tag} byron:1815`,
      `name:ada ${tag} byron:1816`,
      'email:someone.else@example.com',
      email.key,
    ]);
    expect([...matched].sort()).toEqual([email.key, name.key].sort());
    expect(await list.matching([])).toEqual(new Set());
    const ids = (await list.list()).map((e) => e.hint);
    expect(ids).toEqual(expect.arrayContaining([email.hint, name.hint]));
  });

  it('answers the checks made in one tick with one query, each check with its own keys', async () => {
    await list.add(email);
    await list.add(name);
    // The same database, counting the connections the repository borrows: one per statement.
    let statements = 0;
    const counted = Object.create(db, {
      createQueryRunner: {
        value: (...args: Parameters<DataSource['createQueryRunner']>) => {
          statements += 1;
          return db.createQueryRunner(...args);
        },
      },
    }) as DataSource;
    const checks = new SuppressionsRepository(counted);
    const other = `email:someone.else+${tag}@example.com`;
    const answers = await Promise.all([
      checks.matching([email.key]),
      checks.matching([other]),
      checks.matching([other, email.key, email.key]),
      checks.matching([]),
      checks.matching([`name:ada ${tag} byron:1816`, name.key]),
    ]);
    expect(answers.map((a) => [...a])).toEqual([[email.key], [], [email.key], [], [name.key]]);
    expect(statements).toBe(1);
  });

  it('removes by subject or by id, and says when there was nothing to remove', async () => {
    const removed = await list.remove(email);
    expect(removed).toMatchObject({ kind: 'email', hint: email.hint });
    expect(await list.remove(email)).toBeNull();
    expect(await list.matching([email.key])).toEqual(new Set());
    const { entry } = await list.add(name);
    expect(await list.removeById(entry.id)).toMatchObject({ id: entry.id });
    expect(await list.removeById(entry.id)).toBeNull();
  });
});
