import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { testEnv } from '@dossier/testing';
import { openDataSource } from './data-source';
import { FIND_COMPANIES, HOLDERS_OF, findPeopleSql } from './local-index.repository';

/**
 * Every path of the local searches goes through an index. On a few rows a scan is the cheaper plan, so the
 * plans are read on 50,000 people and companies written (and analysed) inside a transaction that is rolled
 * back: a predicate written in a way no index serves (a function around the column, a cast) scans, and
 * fails here. The bench (`npm run bench -- --data`) measures the same statements at 1,000,000 people.
 */
describe('local index queries', () => {
  let db: DataSource;

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 1, applicationName: 'local-plans' });
  });
  afterAll(async () => {
    await db?.destroy();
  });

  const ROWS = 50_000;
  /** Random words of 4–9 letters from the row number, so names share trigrams as real names do. */
  const WORDS = `substr(md5(i::text), 1, 4 + i % 6) || ' ' || substr(md5((i * 7)::text), 1, 5 + i % 4)`;

  const plan = async (sql: string, params: unknown[], explain = 'EXPLAIN') => {
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(
        `INSERT INTO people (id, source, external_id, full_name, email_keys, phone_keys, username_keys)
         SELECT 'plan-' || i, 'plan-spec', i::text, ${WORDS}, ARRAY[md5(i::text) || '@x.example'],
                ARRAY['+1555' || lpad(i::text, 7, '0')], ARRAY['u' || i] FROM generate_series(1, ${ROWS}) AS i`,
      );
      await runner.query(
        `INSERT INTO person_names (person_id, name_key, is_alias)
         SELECT 'plan-' || i, ${WORDS}, false FROM generate_series(1, ${ROWS}) AS i`,
      );
      await runner.query(
        `INSERT INTO companies (id, source, external_id, name, name_key, registration_key, domain_key, country)
         SELECT 'plan-' || i, 'plan-spec', i::text, ${WORDS}, ${WORDS}, i::text, md5(i::text) || '.example', 'GB'
           FROM generate_series(1, ${ROWS}) AS i`,
      );
      // As after an import and autovacuum: the GIN indexes' pending lists merged, the statistics fresh.
      for (const index of [
        'person_names_words_idx',
        'person_names_trgm_idx',
        'people_email_keys_idx',
        'people_phone_keys_idx',
        'people_username_keys_idx',
        'companies_name_trgm_idx',
      ])
        await runner.query(`SELECT gin_clean_pending_list($1::regclass)`, [index]);
      await runner.query('ANALYZE people, person_names, companies');
      const rows = (await runner.query(`${explain} ${sql}`, params)) as { 'QUERY PLAN': string }[];
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  };

  it('find people by name, e-mail, phone and username through their indexes', async () => {
    const text = await plan(findPeopleSql(2), [
      'ada lovelace',
      'ada@example.com',
      '+442079460018',
      'ada_l',
      1800,
      2200,
      200,
      ['ada', 'lovelace'],
      [],
      'GB',
      ['ada', 'adeline', 'adelaide'],
      ['lovelace'],
    ]);
    for (const index of [
      'person_names_words_idx',
      'person_names_trgm_idx',
      'people_email_keys_idx',
      'people_phone_keys_idx',
      'people_username_keys_idx',
    ])
      expect([index, text.includes(index)]).toEqual([index, true]);
    expect(text).not.toMatch(/Seq Scan on (people|person_names)/);
  });

  it('find the holders of e-mail addresses and phones through their indexes', async () => {
    const text = await plan(HOLDERS_OF, [['ada@example.com', 'b@x.example'], ['+442079460018'], 6]);
    for (const index of ['people_email_keys_idx', 'people_phone_keys_idx'])
      expect([index, text.includes(index)]).toEqual([index, true]);
    expect(text).not.toMatch(/Seq Scan on people/);
  });

  it('find companies by name, domain and registration number through their indexes', async () => {
    const text = await plan(FIND_COMPANIES, ['acme widgets', 'acme.com', ['SC12345', 'SC012345'], 'GB', 200]);
    for (const index of ['companies_name_trgm_idx', 'companies_domain_key_idx', 'companies_registration_key_idx'])
      expect([index, text.includes(index)]).toEqual([index, true]);
    expect(text).not.toMatch(/Seq Scan on companies/);
  });

  it('look for companies like a name by similarity only when none holds it by word similarity', async () => {
    // A name of the table (row 1's) is held: the similarity scan is never run.
    const md5 = (i: number) => createHash('md5').update(String(i)).digest('hex');
    const name = `${md5(1).slice(0, 5)} ${md5(7).slice(0, 6)}`;
    const found = await plan(FIND_COMPANIES, [name, null, null, null, 200], 'EXPLAIN (ANALYZE, COSTS OFF)');
    expect(found).toMatch(/CTE alike[\s\S]*Bitmap Index Scan on companies_name_trgm_idx \(never executed\)/);
    expect(found).toMatch(/Bitmap Index Scan on companies_name_trgm_idx \(actual/);
    // A name none holds: both scans run, each through the trigram index.
    const missed = await plan(FIND_COMPANIES, ['zzzz qqqq', null, null, null, 200], 'EXPLAIN (ANALYZE, COSTS OFF)');
    expect(missed).not.toMatch(/never executed/);
    expect(missed.split('companies_name_trgm_idx').length - 1).toBeGreaterThanOrEqual(2);
    expect(missed).not.toMatch(/Seq Scan on companies/);
  });
});
