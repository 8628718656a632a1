import { join } from 'node:path';
import { Client } from 'pg';
import { REPO_ROOT, ownDatabase, runCli } from '@dossier/testing';

const FIXTURES = join(REPO_ROOT, 'libs/providers/src/watchlists/fixtures');
const ok = (file: string) => join(FIXTURES, 'ok', file);
const notOk = (file: string) => join(FIXTURES, 'not-ok', file);

/**
 * `watchlists:import` as an operator runs it (ADR 0064): the compiled CLI on a database of its own, each list's
 * published layouts, a list replaced whole, bad lines by number, a broken file leaving the list as it was.
 */
describe('CLI watchlists:import (real Postgres)', () => {
  const env = { DATABASE_URL: '' };
  let database: Awaited<ReturnType<typeof ownDatabase>> | undefined;
  let db: Client;
  const cli = (...args: string[]) => runCli(args, env);
  const entries = async (list: string) =>
    (
      await db.query(
        `SELECT entry_id, entity_type, name, aliases, programmes, birth_years, countries
           FROM watchlist_entries WHERE list = $1 ORDER BY entry_id`,
        [list],
      )
    ).rows;

  beforeAll(async () => {
    database = await ownDatabase('watchlists');
    env.DATABASE_URL = database.url;
    db = new Client({ connectionString: env.DATABASE_URL });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await database?.drop();
  });

  it('reads OFAC sdn.csv with alt.csv, and sdn.xml into the same entries; vessels are not subjects', async () => {
    const csv = await cli('watchlists:import', 'ofac-sdn', ok('ofac-sdn.csv'), '--aliases', ok('ofac-alt.csv'));
    expect(csv.stderr).toContain('line 5: entry 9005: no name');
    expect(csv).toMatchObject({ code: 1 });
    expect(csv.stdout).toContain(
      'ofac-sdn: read 5, 3 entries (was 0), 1 neither a person nor an organisation, rejected 1',
    );
    const karimov = {
      entry_id: '9001',
      entity_type: 'person',
      name: 'KARIMOV, Rustam Bakhtiyorovich',
      aliases: ['KARIMOV, Rustam', 'QARIMOV, Rostam'],
      programmes: ['SDGT', 'IRGC'],
      birth_years: [1961],
      countries: ['UZ'],
    };
    expect((await entries('ofac-sdn'))[0]).toEqual(karimov);

    const xml = await cli('watchlists:import', 'ofac-sdn', ok('ofac-sdn.xml'));
    expect(xml).toMatchObject({ code: 0 });
    expect(xml.stdout).toContain('ofac-sdn: read 3, 2 entries (was 3), 1 neither a person nor an organisation');
    expect(await entries('ofac-sdn')).toEqual([
      karimov,
      {
        entry_id: '9002',
        entity_type: 'organisation',
        name: 'ORLANDO FREIGHT LINES S.A.',
        aliases: ['ORLANDO CARGO S.A.'],
        programmes: ['SDNTK'],
        birth_years: [],
        countries: ['PA'],
      },
    ]);
  });

  it('reads the UN list, the EU list (CSV and XML alike), the UK list and FtM lines', async () => {
    expect(await cli('watchlists:import', 'un-sc', ok('un-consolidated.xml'))).toMatchObject({ code: 0 });
    expect(await entries('un-sc')).toEqual([
      expect.objectContaining({ entry_id: 'KPi.950', name: 'SERGEI VOLKOV', birth_years: [1955, 1956, 1957] }),
      expect.objectContaining({
        entry_id: 'QDe.990',
        entity_type: 'organisation',
        name: 'CRESCENT RELIEF & TRADING COMPANY',
      }),
      expect.objectContaining({
        entry_id: 'QDi.901',
        aliases: ['Hamed Nasir al-Qadiri', 'Abu Nasser', 'حامد ناصر القادري'],
        programmes: ['Al-Qaida'],
        birth_years: [1968],
        countries: ['YE'],
      }),
    ]);
    expect(await cli('watchlists:import', 'eu-fsf', ok('eu-fsf.csv'))).toMatchObject({ code: 0 });
    const fromCsv = await entries('eu-fsf');
    expect(fromCsv[0]).toEqual({
      entry_id: 'EU.9001.01',
      entity_type: 'person',
      name: 'Aleksandr Viktorovich Lebedenko',
      aliases: ['Александр Викторович Лебеденко'],
      programmes: ['UKR'],
      birth_years: [1972],
      countries: ['RU'],
    });
    expect(await cli('watchlists:import', 'eu-fsf', ok('eu-fsf.xml'))).toMatchObject({ code: 0 });
    expect(await entries('eu-fsf')).toEqual(fromCsv);
    const uk = await cli('watchlists:import', 'uk-sanctions', ok('uk-sanctions-list.csv'));
    expect(uk.stdout).toContain('uk-sanctions: read 3, 2 entries (was 0), 1 neither a person nor an organisation');
    expect((await entries('uk-sanctions'))[1]).toEqual({
      entry_id: 'RUS9001',
      entity_type: 'person',
      name: 'Yekaterina Igorevna MOROZOVA',
      aliases: ['Ekaterina MOROZOVA', 'Katya MOROZOVA', 'Екатерина Игоревна Морозова'],
      programmes: ['Russia'],
      birth_years: [1975],
      countries: ['RU'],
    });
    expect(await cli('watchlists:import', 'opensanctions', ok('opensanctions.ftm.jsonl'))).toMatchObject({ code: 0 });
    expect(await entries('opensanctions')).toEqual([
      expect.objectContaining({
        entry_id: 'NK-fict0001',
        birth_years: [1980],
        countries: ['PL'],
        programmes: ['EU-BLR'],
      }),
      expect.objectContaining({ entry_id: 'NK-fict0002', entity_type: 'organisation', countries: ['CY'] }),
    ]);
  });

  it('is idempotent, reports bad lines by number, and leaves a list as it was when a file breaks off', async () => {
    await cli('watchlists:import', 'un-sc', ok('un-consolidated.xml'));
    const before = await entries('un-sc');
    const again = await cli('watchlists:import', 'un-sc', ok('un-consolidated.xml'));
    expect(again.stdout).toContain('3 entries (was 3)');
    expect(await entries('un-sc')).toEqual(before);

    const broken = await cli('watchlists:import', 'un-sc', notOk('un-broken.xml'));
    expect(broken).toMatchObject({ code: 1 });
    expect(broken.stderr).toContain('stopped: line 12: invalid XML: unexpected close tag.; the list is as it was');
    expect(await entries('un-sc')).toEqual(before);

    const lines = await cli('watchlists:import', 'opensanctions', notOk('opensanctions-bad-lines.jsonl'));
    expect(lines).toMatchObject({ code: 1 });
    for (const line of ['line 1: invalid JSON', 'line 2: must be a JSON object', 'line 3: entry NK-fict0005: no name'])
      expect(lines.stderr).toContain(line);
    expect((await entries('opensanctions')).map((e) => e.entry_id)).toEqual(['NK-fict0006']);
  });

  it("refuses another list, a format the list is not published in, and another list's file", async () => {
    expect(await cli('watchlists:import', 'interpol', ok('ofac-sdn.xml'))).toMatchObject({ code: 2 });
    const format = await cli('watchlists:import', 'un-sc', ok('eu-fsf.csv'));
    expect(format).toMatchObject({ code: 2 });
    expect(format.stderr).toContain('un-sc is read as xml, not "csv"');
    const other = await cli('watchlists:import', 'un-sc', ok('eu-fsf.xml'));
    expect(other).toMatchObject({ code: 2 });
    expect(other.stderr).toContain('the document element is <export>, not <CONSOLIDATED_LIST>');
    const list = await cli('watchlists:list');
    expect(list.stdout).toMatch(/^eu-fsf\t2 entries\tsha256 [0-9a-f]{64}\timported /m);
  });
});
