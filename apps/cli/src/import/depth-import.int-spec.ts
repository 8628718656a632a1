import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import type { CompanyResultItem } from '@dossier/contracts';
import { LocalIndexRepository, openDataSource } from '@dossier/persistence';
import { localProvider, unguardedContext } from '@dossier/providers';
import { REPO_ROOT, ownDatabase, runCli } from '@dossier/testing';

const FIXTURES = join(REPO_ROOT, 'apps/cli/src/import/fixtures');

/**
 * The company-depth imports (ADR 0066) as an operator runs them — the compiled CLI on a database of its own,
 * Companies House's PSC snapshot and GLEIF's relationship records in their published layouts, bad lines
 * included — and the local provider answering what they hold.
 */
describe('CLI import of company depth (real Postgres)', () => {
  const env = { DATABASE_URL: '' };
  let database: Awaited<ReturnType<typeof ownDatabase>> | undefined;
  let ds: DataSource;
  const cli = (...args: string[]) => runCli(args, env);

  beforeAll(async () => {
    database = await ownDatabase('company_depth');
    env.DATABASE_URL = database.url;
    ds = await openDataSource({ url: env.DATABASE_URL, poolSize: 2, applicationName: 'company-depth' });
  });
  afterAll(async () => {
    await ds?.destroy();
    await database?.drop();
  });

  const psc = () => cli('import', 'company', join(FIXTURES, 'psc-snapshot.txt'), '--format', 'companies-house-psc');
  const rr = () => cli('import', 'company', join(FIXTURES, 'gleif-rr.csv'), '--format', 'gleif-rr');

  it('imports the PSC snapshot: people and entities stored, statements and totals skipped, bad lines named', async () => {
    const first = await psc();
    expect([first.code, first.stderr.match(/^line .*/gm)]).toEqual([
      1,
      ['line 4: company_number: "NOTANUMBER9" is not a company number', 'line 5: invalid JSON'],
    ]);
    expect(first.stdout).toContain('read 6, imported 2, updated 0, unchanged 0, superseded 0, rejected 2, skipped 2');
    const again = await psc();
    expect(again.stdout).toContain('read 6, imported 0, updated 0, unchanged 2, superseded 0, rejected 2, skipped 2');
    expect(
      await ds.query(
        `SELECT company_number, registration_key, name, kind, natures_of_control,
                to_char(notified_on, 'YYYY-MM-DD') AS notified_on, ceased_on
           FROM company_controllers ORDER BY name`,
      ),
    ).toEqual([
      {
        company_number: '01234567',
        registration_key: '1234567',
        name: 'Example Holdings GmbH',
        kind: 'corporate',
        natures_of_control: ['ownership-of-shares-50-to-75-percent'],
        notified_on: '2019-01-15',
        ceased_on: null,
      },
      expect.objectContaining({ name: 'Mrs Jane Alice Example', kind: 'individual', notified_on: '2016-04-06' }),
    ]);
  });

  it("imports GLEIF's relationship records: active accounting consolidations only, a bad LEI named", async () => {
    const first = await rr();
    expect([first.code, first.stderr.match(/^line .*/gm)]).toEqual([
      1,
      ['line 6: Relationship.StartNode.NodeID: "NOT-AN-LEI" is not an LEI'],
    ]);
    expect(first.stdout).toContain('read 5, imported 2, updated 0, unchanged 0, superseded 0, rejected 1, skipped 2');
    expect((await rr()).stdout).toContain('imported 0, updated 0, unchanged 2');
    expect(
      await ds.query(`SELECT child_lei, level, parent_lei, external_id FROM company_parents ORDER BY level`),
    ).toEqual([
      {
        child_lei: '5493001KJTIIGC8Y1R12',
        level: 'direct',
        parent_lei: '529900T8BM49AURSDO55',
        external_id: '5493001KJTIIGC8Y1R12>IS_DIRECTLY_CONSOLIDATED_BY>529900T8BM49AURSDO55',
      },
      expect.objectContaining({ level: 'ultimate', parent_lei: '529900T8BM49AURSDO55' }),
    ]);
  });

  it('lets the local provider answer the controllers and parents of the companies it holds', async () => {
    const house = await cli(
      'import',
      'company',
      join(FIXTURES, 'companies-house-basic.csv'),
      '--format',
      'companies-house',
    );
    const gleif = await cli('import', 'company', join(FIXTURES, 'gleif-golden-copy.csv'), '--format', 'gleif');
    expect([house.code, gleif.code]).toEqual([1, 1]); // their own bad lines (import.int-spec.ts)
    const ctx = unguardedContext(AbortSignal.timeout(5000), {}, new LocalIndexRepository(ds));
    const answer = await localProvider.lookup('company', { registration_number: '01234567', country: 'GB' }, ctx);
    const items = answer.items as CompanyResultItem[];
    const register = items.find((i) => i.registration_number === '01234567' && i.jurisdiction === 'GB')!;
    expect(register.controllers).toEqual([
      {
        name: 'Example Holdings GmbH',
        kind: 'corporate',
        natures_of_control: ['ownership-of-shares-50-to-75-percent'],
        notified_on: '2019-01-15',
        ceased_on: null,
        source: {
          provider: 'local',
          record_id: '/company/01234567/persons-with-significant-control/corporate-entity/zY8xW6vU4tS2rQ0pO8nM6lK4jI2',
        },
      },
      expect.objectContaining({ name: 'Mrs Jane Alice Example', kind: 'individual' }),
    ]);
    const leiRecord = items.find((i) => i.sources.includes('local') && i.parents !== null)!;
    expect(leiRecord.parents).toEqual({
      direct: {
        lei: '529900T8BM49AURSDO55',
        name: 'Example Holdings GmbH',
        source: {
          provider: 'local',
          record_id: '5493001KJTIIGC8Y1R12>IS_DIRECTLY_CONSOLIDATED_BY>529900T8BM49AURSDO55',
        },
      },
      ultimate: {
        lei: '529900T8BM49AURSDO55',
        name: 'Example Holdings GmbH',
        source: {
          provider: 'local',
          record_id: '5493001KJTIIGC8Y1R12>IS_ULTIMATELY_CONSOLIDATED_BY>529900T8BM49AURSDO55',
        },
      },
    });
    // Officers are not imported: not known from the index.
    expect(register.officers).toBeNull();
  });
});
