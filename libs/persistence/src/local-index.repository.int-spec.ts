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

  /** The plans of statements (SQL, parameters, EXPLAIN options), all read over one set of rows. */
  const plans = async (statements: [sql: string, params: unknown[], explain?: string][]) => {
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
        `INSERT INTO person_words (word)
         SELECT DISTINCT w FROM person_names, unnest(string_to_array(name_key, ' ')) AS w
          WHERE person_id LIKE 'plan-%' ON CONFLICT DO NOTHING`,
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
        'person_words_trgm_idx',
      ])
        await runner.query(`SELECT gin_clean_pending_list($1::regclass)`, [index]);
      await runner.query('ANALYZE people, person_names, person_words, companies');
      const texts: string[] = [];
      for (const [sql, params, explain = 'EXPLAIN'] of statements) {
        const rows = (await runner.query(`${explain} ${sql}`, params)) as { 'QUERY PLAN': string }[];
        texts.push(rows.map((r) => r['QUERY PLAN']).join('\n'));
      }
      return texts;
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  };

  /** WORDS's md5 of row number `i`. */
  const md5 = (i: number) => createHash('md5').update(String(i)).digest('hex');

  const plan = async (sql: string, params: unknown[], explain?: string) => (await plans([[sql, params, explain]]))[0]!;

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
    expect(text).not.toMatch(/Seq Scan on (people|person_names|person_words)/);
  });

  it('widen a typo to the stored words near it: the words index finds the name, the trigram scan never runs', async () => {
    // Person plan-3's name, as WORDS makes it, and its second word with a letter left out.
    const [given, family] = [md5(3).slice(0, 7), md5(21).slice(0, 8)];
    const typo = family.slice(0, 4) + family.slice(5);
    const searched = [given, typo];
    const params = [searched.join(' '), null, null, null, 1800, 2200, 25, searched, [], null, [given], [typo]];
    const analyze = 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)';
    // A word with nothing stored near it is not widened: the trigram scan looks for the name.
    const farOff = [given, 'zzzzqqqq'];
    const [text, far] = await plans([
      [findPeopleSql(2), params, analyze],
      [
        findPeopleSql(2),
        [farOff.join(' '), null, null, null, 1800, 2200, 25, farOff, [], null, [given], ['zzzzqqqq']],
        analyze,
      ],
    ]);
    expect(text).toMatch(/Index Scan on person_names_words_idx \(actual rows=[1-9]/);
    expect(text).toMatch(/Index Scan on person_names_trgm_idx \(never executed\)/);
    expect(far).toMatch(/Index Scan on person_names_trgm_idx \(actual rows=/);
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
    const name = `${md5(1).slice(0, 5)} ${md5(7).slice(0, 6)}`;
    const [found, missed] = await plans([
      [FIND_COMPANIES, [name, null, null, null, 200], 'EXPLAIN (ANALYZE, COSTS OFF)'],
      [FIND_COMPANIES, ['zzzz qqqq', null, null, null, 200], 'EXPLAIN (ANALYZE, COSTS OFF)'],
    ]);
    expect(found).toMatch(/CTE alike[\s\S]*Bitmap Index Scan on companies_name_trgm_idx \(never executed\)/);
    expect(found).toMatch(/Bitmap Index Scan on companies_name_trgm_idx \(actual/);
    // A name none holds: both scans run, each through the trigram index.
    expect(missed).not.toMatch(/never executed/);
    expect(missed!.split('companies_name_trgm_idx').length - 1).toBeGreaterThanOrEqual(2);
    expect(missed).not.toMatch(/Seq Scan on companies/);
  });
});
