import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { normalizeCompanyName } from '@dossier/domain';
import { LocalIndexRepository, openDataSource } from '@dossier/persistence';
import { DIST, REPO_ROOT, TcpProxy, ownDatabase, runCli } from '@dossier/testing';
import { BATCH } from './batches';
import { demoCompanies, demoPeople } from './demo';
import { ImportInterrupted, importFile } from './import';

const FIXTURES = join(REPO_ROOT, 'apps/cli/src/import/fixtures');

/**
 * `import` and `demo:seed` as an operator runs them: the compiled CLI as a process, on a database of its
 * own, every format on fixtures in its published layout, bad lines included.
 */
describe('CLI import and demo:seed (real Postgres)', () => {
  // Filled in by beforeAll with the file's own database (ownDatabase).
  const env = { DATABASE_URL: '' };
  let database: Awaited<ReturnType<typeof ownDatabase>> | undefined;
  let db: Client;
  let dir: string;

  const cli = (...args: string[]) => runCli(args, env);
  const rows = async (sql: string, params: unknown[] = []) => (await db.query(sql, params)).rows;
  /** The external ids of the people the local index finds by a phone key (in `country`, when given). */
  const byPhone = async (phone_key: string, country: string | null = null) => {
    const ds = await openDataSource({ url: env.DATABASE_URL, poolSize: 1, applicationName: 'import-by-phone' });
    try {
      const search = {
        name_key: null,
        email_key: null,
        username_key: null,
        birth_year_min: null,
        birth_year_max: null,
      };
      const found = await new LocalIndexRepository(ds).findPeople({ ...search, phone_key, country }, 10);
      return found.map((r) => r.external_id);
    } finally {
      await ds.destroy();
    }
  };

  beforeAll(async () => {
    database = await ownDatabase('import');
    env.DATABASE_URL = database.url;
    db = new Client({ connectionString: env.DATABASE_URL });
    await db.connect();
    dir = mkdtempSync(join(tmpdir(), 'dossier-import-'));
  });
  afterAll(async () => {
    await db?.end();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports people from JSONL, reporting each bad line by number and reason, exit 1', async () => {
    const run = await cli('import', 'person', join(FIXTURES, 'people.jsonl'));
    expect(run.code).toBe(1);
    expect(run.stderr.split('\n').filter((l) => l.startsWith('line '))).toEqual([
      'line 6: invalid JSON',
      'line 7: full_name is required',
      `line 8: birth_year must be a whole number from 1800 to ${new Date().getUTCFullYear()}`,
      'line 9: emails: "not-an-address" is not an e-mail address',
      'line 10: must be a JSON object',
      'line 11: nickname is not a known field',
    ]);
    expect(run.stdout).toMatch(
      /^read 10, imported 4, updated 0, unchanged 0, superseded 0, rejected 6 \(\d+ records\/s\)$/m,
    );
    // Not a terminal: plain progress lines, no bar.
    expect(run.stderr).toMatch(
      /^progress: 100% of the file, read 10, imported 4, updated 0, unchanged 0, superseded 0, rejected 6$/m,
    );
    expect(
      await rows(
        `SELECT external_id, full_name, email_keys, phone_keys, username_keys, birth_year FROM people
          WHERE source = 'fixture' ORDER BY external_id`,
      ),
    ).toEqual([
      {
        external_id: 'p-001',
        full_name: 'Grace Brewster Hopper',
        email_keys: ['grace.hopper@navy.example'],
        phone_keys: ['+12025550147'],
        username_keys: ['ghopper'],
        birth_year: 1906,
      },
      {
        external_id: 'p-002',
        full_name: 'Alan Turing',
        email_keys: ['alan@bletchley.example'],
        phone_keys: ['+441908640404'], // national format, read in the record's country (GB)
        username_keys: [],
        birth_year: 1912,
      },
      {
        external_id: 'p-003',
        full_name: 'Zoë Martínez',
        email_keys: [],
        phone_keys: [],
        username_keys: ['zoe_m'],
        birth_year: null,
      },
      {
        external_id: 'p-004',
        full_name: 'Katherine Johnson',
        email_keys: [],
        phone_keys: [],
        username_keys: [],
        birth_year: 1918,
      },
    ]);
  });

  it('changes nothing when the same file is imported again, and replaces a record that changed', async () => {
    const again = await cli('import', 'person', join(FIXTURES, 'people.jsonl'));
    expect(again.stdout).toMatch(/read 10, imported 0, updated 0, unchanged 4, superseded 0, rejected 6/);
    const file = join(dir, 'changed.jsonl');
    writeFileSync(
      file,
      `${JSON.stringify({ external_id: 'p-002', full_name: 'Alan Mathison Turing', aliases: ['Prof'], source: 'fixture' })}\n`,
    );
    const changed = await cli('import', 'person', file);
    expect([changed.code, changed.stdout]).toEqual([
      0,
      expect.stringMatching(/read 1, imported 0, updated 1, unchanged 0, superseded 0, rejected 0/),
    ]);
    expect(
      await rows(`SELECT full_name, phones, birth_year FROM people WHERE source = 'fixture' AND external_id = 'p-002'`),
    ).toEqual([{ full_name: 'Alan Mathison Turing', phones: [], birth_year: null }]);
    expect(
      await rows(
        `SELECT name_key, is_alias FROM person_names JOIN people ON people.id = person_id
          WHERE external_id = 'p-002' ORDER BY name_key`,
      ),
    ).toEqual([
      { name_key: 'alan mathison turing', is_alias: false },
      { name_key: 'prof', is_alias: true },
    ]);
  });

  it('counts a line that a later line of the file for the same record replaces as superseded, not unchanged', async () => {
    const file = join(dir, 'duplicates.jsonl');
    const line = (external_id: string, full_name: string) => JSON.stringify({ external_id, full_name, source: 'dup' });
    writeFileSync(
      file,
      [line('d-1', 'Ann One'), line('d-2', 'Bob Two'), line('d-1', 'Ann Other'), line('d-2', 'Bob Two'), ''].join('\n'),
    );
    const first = await cli('import', 'person', file);
    expect([first.code, first.stdout]).toEqual([
      0,
      expect.stringMatching(/^read 4, imported 2, updated 0, unchanged 0, superseded 2, rejected 0 /m),
    ]);
    expect(await rows(`SELECT external_id, full_name FROM people WHERE source = 'dup' ORDER BY external_id`)).toEqual([
      { external_id: 'd-1', full_name: 'Ann Other' },
      { external_id: 'd-2', full_name: 'Bob Two' },
    ]);
    const again = await cli('import', 'person', file);
    expect(again.stdout).toMatch(/^read 4, imported 0, updated 0, unchanged 2, superseded 2, rejected 0 /m);
  });

  it('imports people from CSV: lists split at ;, locations as city|region|country', async () => {
    const run = await cli('import', 'person', join(FIXTURES, 'people.csv'));
    expect(run.code).toBe(1);
    expect(run.stderr.match(/^line .*/gm)).toEqual(['line 4: full_name is required']);
    expect(await rows(`SELECT aliases, emails, locations FROM people WHERE external_id = 'c-001'`)).toEqual([
      {
        aliases: ['Augusta Ada King', 'Countess of Lovelace'],
        emails: ['ada@analytical.example', 'countess@lovelace.example'],
        locations: [{ city: 'London', region: 'England', country: 'GB' }],
      },
    ]);
    expect(await rows(`SELECT first_name, last_name, locations FROM people WHERE external_id = 'c-002'`)).toEqual([
      {
        first_name: 'Grace',
        last_name: 'Hopper',
        locations: [
          { city: 'Arlington', region: 'VA', country: 'US' },
          { city: 'New York', region: 'NY', country: 'US' },
        ],
      },
    ]);
    // A country written as its common name is stored as its ISO code.
    expect(await rows(`SELECT locations, location_keys FROM people WHERE external_id = 'c-004'`)).toEqual([
      { locations: [{ city: 'Boston', region: 'MA', country: 'US' }], location_keys: ['boston', 'ma', 'us'] },
    ]);
  });

  it('rejects a line with a NUL or an unpaired surrogate by its field, and imports the lines around it', async () => {
    const good = (id: string) => JSON.stringify({ external_id: id, full_name: `Person ${id}`, source: 'text-check' });
    const lines = [
      ...Array.from({ length: 6_000 }, (_, i) => good(`before-${i}`)), // one batch written before the bad line
      '{"external_id":"nul","full_name":"Bad\\u0000Name","source":"text-check"}',
      ...Array.from({ length: 10 }, (_, i) => good(`after-${i}`)),
      '{"external_id":"lone","full_name":"Lone \\ud800 half","source":"text-check"}',
      '{"external_id":"alias","full_name":"Ok","aliases":["fine","x\\u0000"],"source":"text-check"}',
    ];
    const file = join(dir, 'unstorable.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const run = await cli('import', 'person', file);
    expect([run.code, run.stderr.match(/^line .*/gm)]).toEqual([
      1,
      [
        'line 6001: full_name must not contain NUL characters or unpaired UTF-16 surrogates',
        'line 6012: full_name must not contain NUL characters or unpaired UTF-16 surrogates',
        'line 6013: aliases[1] must not contain NUL characters or unpaired UTF-16 surrogates',
      ],
    ]);
    expect(run.stdout).toMatch(/^read 6013, imported 6010, updated 0, unchanged 0, superseded 0, rejected 3 /m);
    expect(
      await rows(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE external_id LIKE 'after-%')::int AS after,
                count(*) FILTER (WHERE full_name LIKE '%\uFFFD%')::int AS replaced
           FROM people WHERE source = 'text-check'`,
      ),
    ).toEqual([{ n: 6010, after: 10, replaced: 0 }]);
  });

  it('reads JSONL as Windows tools write it: a byte-order mark and CRLF line ends', async () => {
    const file = join(dir, 'windows.jsonl');
    const line = (id: string) => JSON.stringify({ external_id: id, full_name: `Zoë ${id}`, source: 'windows' });
    writeFileSync(file, `\uFEFF${line('w-1')}\r\n${line('w-2')}\r\n`);
    const run = await cli('import', 'person', file);
    expect([run.code, run.stderr.match(/^line .*/gm)]).toEqual([0, null]);
    expect(run.stdout).toMatch(/^read 2, imported 2, updated 0, unchanged 0, superseded 0, rejected 0 /m);
    expect(await rows(`SELECT external_id, full_name FROM people WHERE source = 'windows' ORDER BY 1`)).toEqual([
      { external_id: 'w-1', full_name: 'Zoë w-1' },
      { external_id: 'w-2', full_name: 'Zoë w-2' },
    ]);
  });

  it('names the path of a bad location field and rejects an unknown one', async () => {
    const file = join(dir, 'locations.jsonl');
    const line = (loc: unknown) => JSON.stringify({ external_id: 'loc', full_name: 'L', locations: [{}, loc] });
    writeFileSync(
      file,
      [line({ town: 'Leeds' }), line({ city: ['Leeds'] }), line({ city: 'Le\u0000eds' }), line({ city: 'Leeds' })]
        .map((l) => `${l}\n`)
        .join(''),
    );
    const run = await cli('import', 'person', file);
    expect([run.code, run.stderr.match(/^line .*/gm)]).toEqual([
      1,
      [
        'line 1: locations[1].town is not a known field',
        'line 2: locations[1].city must be a string',
        'line 3: locations[1].city must not contain NUL characters or unpaired UTF-16 surrogates',
      ],
    ]);
    expect(run.stdout).toMatch(/^read 4, imported 1, updated 0, unchanged 0, superseded 0, rejected 3 /m);
  });

  it('rejects a CSV row with more values than the header has columns, and imports the rows around it', async () => {
    const file = join(dir, 'shifted.csv');
    writeFileSync(
      file,
      'external_id,full_name,emails,source\n' +
        'x1,Jane Doe,jane@example.com,csv-shift\n' +
        'x2,Doe, John,john@example.com,csv-shift\n' + // an unquoted comma: every later value one column right
        'x3,Ann Lee,ann@example.com,csv-shift,,\n' + // empty cells past the header lose nothing
        'x4,Bo Chan,bo@example.com,csv-shift,note\n',
    );
    const run = await cli('import', 'person', file);
    expect([run.code, run.stderr.match(/^line .*/gm)]).toEqual([
      1,
      [
        'line 3: 5 values, but the header has 4 columns (a value with a comma needs quotes)',
        'line 5: 5 values, but the header has 4 columns (a value with a comma needs quotes)',
      ],
    ]);
    expect(run.stdout).toMatch(/^read 4, imported 2, updated 0, unchanged 0, superseded 0, rejected 2 /m);
    expect(await rows(`SELECT external_id, emails FROM people WHERE source = 'csv-shift' ORDER BY 1`)).toEqual([
      { external_id: 'x1', emails: ['jane@example.com'] },
      { external_id: 'x3', emails: ['ann@example.com'] },
    ]);
  });

  it('names the right line after a quoted CSV value that holds a CRLF line break', async () => {
    const file = join(dir, 'multiline.csv');
    writeFileSync(
      file,
      'external_id,full_name,emails,source\r\n' +
        'm1,"Jane\r\nDoe",jane@example.com,csv-multi\r\n' + // lines 2 and 3
        'm2,Ann Lee,ann@example.com,csv-multi\r\n' +
        'm3,Bo Chan,not-an-address,csv-multi\r\n' + // line 5
        'm4,"Cy\r\nDee",cy@example.com,csv-multi,extra\r\n', // lines 6 and 7
    );
    const run = await cli('import', 'person', file);
    expect([run.code, run.stderr.match(/^line .*/gm)]).toEqual([
      1,
      [
        'line 5: emails: "not-an-address" is not an e-mail address',
        'line 7: 5 values, but the header has 4 columns (a value with a comma needs quotes)',
      ],
    ]);
    expect(run.stdout).toMatch(/^read 4, imported 2, updated 0, unchanged 0, superseded 0, rejected 2 /m);
  });

  it('imports the CSV rows before a broken quote, names its line and says the rest was not read', async () => {
    const csv = (name: string, bad: string, before: number) => {
      const good = (id: string) => `${id},"Person, ${id}",csv-quote\n`;
      const file = join(dir, name);
      writeFileSync(
        file,
        'external_id,full_name,source\n' +
          Array.from({ length: before }, (_, i) => good(`${name}-before-${i}`)).join('') +
          bad +
          Array.from({ length: 5 }, (_, i) => good(`${name}-after-${i}`)).join(''),
      );
      return file;
    };
    const closing = await cli('import', 'person', csv('closing.csv', 'qbad,"Bad "quote" here,csv-quote\n', 20));
    expect([closing.code, closing.stderr.match(/^line .*/gm), closing.stdout.match(/^(read|stopped) .*/gm)]).toEqual([
      1,
      [
        'line 22: invalid CSV: Invalid Closing Quote: got "q" at line 22 instead of delimiter, record delimiter, trimable character (if activated) or comment',
      ],
      [
        expect.stringMatching(/^read 21, imported 20, updated 0, unchanged 0, superseded 0, rejected 1 /),
        'stopped at line 22: the rest of the file was not read',
      ],
    ]);
    // The stream had read the whole (small) file, but progress never claims what was not imported.
    expect(closing.stderr).not.toMatch(/^progress: 100%/m);
    // A quote left open swallows the lines after it: the error names the line the broken record starts on.
    // 6,000 rows before it: several 64 KiB reads and a written batch.
    const open = await cli('import', 'person', csv('open.csv', 'qbad,"Bad here,csv-quote\n', 6_000));
    expect([open.code, open.stderr.match(/^line .*/gm), open.stdout.match(/^(read|stopped) .*/gm)]).toEqual([
      1,
      [expect.stringMatching(/^line 6002: invalid CSV: Invalid Closing Quote: got "P" at line 6003 /)],
      [
        expect.stringMatching(/^read 6001, imported 6000, updated 0, unchanged 0, superseded 0, rejected 1 /),
        'stopped at line 6002: the rest of the file was not read',
      ],
    ]);
    expect(open.stderr).not.toMatch(/^progress: 100%/m);
    expect(
      await rows(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE external_id LIKE '%-after-%')::int AS after
           FROM people WHERE source = 'csv-quote'`,
      ),
    ).toEqual([{ n: 6020, after: 0 }]);
  });

  it('refuses a zero-byte file by name (exit 2), and warns of a file with no records, exit 0', async () => {
    const empty = join(dir, 'truncated.jsonl');
    writeFileSync(empty, '');
    const none = await cli('import', 'person', empty);
    expect([none.code, none.stderr.trim(), none.stdout]).toEqual([
      2,
      `import: ${empty}: the file is empty (0 bytes): nothing to import (a download cut short?)`,
      '',
    ]);
    const header = join(dir, 'header-only.csv');
    writeFileSync(header, 'external_id,full_name\n');
    const headerOnly = await cli('import', 'person', header);
    expect(headerOnly.code).toBe(0);
    expect(headerOnly.stderr).toMatch(
      new RegExp(`^import: ${header}: warning: no records in the file: nothing was imported$`, 'm'),
    );
    expect(headerOnly.stdout).toMatch(/^read 0, imported 0, updated 0, unchanged 0, superseded 0, rejected 0 /m);
    const blank = join(dir, 'blank.jsonl');
    writeFileSync(blank, '\n\n');
    const blankRun = await cli('import', 'person', blank);
    expect([blankRun.code, blankRun.stderr.match(/^import: .*/gm)]).toEqual([
      0,
      [`import: ${blank}: warning: no records in the file: nothing was imported`],
    ]);
  });

  it('imports companies from CSV, the GLEIF golden copy and Companies House basic data as published', async () => {
    const csv = await cli('import', 'company', join(FIXTURES, 'companies.csv'));
    expect([csv.code, csv.stderr.match(/^line .*/gm)]).toEqual([
      1,
      ['line 4: incorporated_on must be a date as YYYY-MM-DD'],
    ]);
    const gleif = await cli('import', 'company', join(FIXTURES, 'gleif-golden-copy.csv'), '--format', 'gleif');
    expect([gleif.code, gleif.stderr.match(/^line .*/gm)]).toEqual([1, ['line 4: external_id is required']]);
    const house = await cli(
      'import',
      'company',
      join(FIXTURES, 'companies-house-basic.csv'),
      '--format',
      'companies-house',
    );
    expect([house.code, house.stderr.match(/^line .*/gm)]).toEqual([
      1,
      ['line 4: name is required', 'line 5: incorporated_on must be a date as YYYY-MM-DD'],
    ]);
    expect(
      await rows(
        `SELECT source, external_id, name, registration_number, registration_key, jurisdiction, country, domain_key, status,
                to_char(incorporated_on, 'YYYY-MM-DD') AS incorporated_on, address, industry, lei
           FROM companies ORDER BY source, external_id`,
      ),
    ).toEqual([
      expect.objectContaining({
        source: 'companies-house',
        external_id: '01234567',
        name: 'ACME WIDGETS LIMITED',
        registration_key: '1234567',
        jurisdiction: 'GB',
        status: 'Active',
        incorporated_on: '2001-02-03',
        address: '1 HIGH STREET, FLOOR 2, LONDON, ENGLAND, EC1A 1AA',
        industry: '25990 - Manufacture of other fabricated metal products n.e.c.',
      }),
      expect.objectContaining({
        source: 'companies-house',
        external_id: '11743365',
        status: 'Active - Proposal to Strike off',
        incorporated_on: '2018-12-28',
      }),
      expect.objectContaining({
        source: 'fixture-csv',
        external_id: 'acme-1',
        domain_key: 'acme-widgets.example',
        registration_key: '1234567',
      }),
      expect.objectContaining({ source: 'fixture-csv', external_id: 'acme-2', jurisdiction: 'US-DE', country: 'US' }),
      expect.objectContaining({
        source: 'gleif',
        external_id: '529900T8BM49AURSDO55',
        registration_number: 'HRB 12345',
        registration_key: 'HRB12345',
        country: 'DE',
        status: 'ACTIVE',
        incorporated_on: null,
        lei: '529900T8BM49AURSDO55',
      }),
      expect.objectContaining({
        source: 'gleif',
        external_id: '5493001KJTIIGC8Y1R12',
        name: 'ACME WIDGETS LIMITED',
        registration_number: '01234567',
        jurisdiction: 'GB',
        incorporated_on: '2001-02-03',
        address: '1 High Street, Floor 2, London, GB-LND, EC1A 1AA, GB',
        lei: '5493001KJTIIGC8Y1R12',
      }),
    ]);
  });

  it('stores a country written UK as GB and a jurisdiction code the ISO way, so a search in GB or US finds them', async () => {
    const file = join(dir, 'places.csv');
    writeFileSync(
      file,
      'external_id,name,jurisdiction,country,source\n' +
        'uk-1,Britannia Tools Ltd,uk,UK,places\n' +
        'uk-2,Caledonia Tools Ltd,UK-SCT,,places\n' +
        'ny-1,Hudson Tools LLC,us_ny,,places\n',
    );
    const run = await cli('import', 'company', file);
    expect([run.code, run.stdout]).toEqual([0, expect.stringMatching(/^read 3, imported 3, /m)]);
    expect(
      await rows(`SELECT external_id, jurisdiction, country FROM companies WHERE source = 'places' ORDER BY 1`),
    ).toEqual([
      { external_id: 'ny-1', jurisdiction: 'US-NY', country: null },
      { external_id: 'uk-1', jurisdiction: 'GB', country: 'GB' },
      { external_id: 'uk-2', jurisdiction: 'GB-SCT', country: null },
    ]);
    const ds = await openDataSource({ url: env.DATABASE_URL, poolSize: 1, applicationName: 'import-places' });
    try {
      const index = new LocalIndexRepository(ds);
      const find = async (name_key: string, country: string) =>
        (await index.findCompanies({ name_key, country, domain_key: null, registration_keys: null }, 10)).map(
          (r) => r.external_id,
        );
      expect(await find('britannia tools', 'GB')).toEqual(['uk-1']);
      expect(await find('caledonia tools', 'GB')).toEqual(['uk-2']);
      expect(await find('hudson tools', 'US')).toEqual(['ny-1']);
    } finally {
      await ds.destroy();
    }
  });

  it("keys a company name with an apostrophe inside a word as a search folds it (McDonald's, McDonalds, McDonald’s)", async () => {
    const file = join(dir, 'apostrophes.csv');
    writeFileSync(
      file,
      'external_id,name,source\n' +
        "mcd,McDonald's Corporation,apostrophes\n" +
        'macys,"Macy\u2019s, Inc.",apostrophes\n',
    );
    const run = await cli('import', 'company', file);
    expect([run.code, run.stdout]).toEqual([0, expect.stringMatching(/^read 2, imported 2, /m)]);
    expect(await rows(`SELECT external_id, name_key FROM companies WHERE source = 'apostrophes' ORDER BY 1`)).toEqual([
      { external_id: 'macys', name_key: 'macys' },
      { external_id: 'mcd', name_key: 'mcdonalds' },
    ]);
    const ds = await openDataSource({ url: env.DATABASE_URL, poolSize: 1, applicationName: 'import-apostrophes' });
    try {
      const index = new LocalIndexRepository(ds);
      for (const searched of ['McDonalds Corp', 'McDonald\u2019s', "Macy's", 'Macys']) {
        const name_key = normalizeCompanyName(searched);
        const found = await index.findCompanies(
          { name_key, country: null, domain_key: null, registration_keys: null },
          10,
        );
        expect([searched, found.filter((r) => r.source === 'apostrophes').map((r) => r.name_key)]).toEqual([
          searched,
          [name_key],
        ]);
      }
    } finally {
      await ds.destroy();
    }
  });

  it('stores a jurisdiction written out as its code and a UK number keyed as the register writes it', async () => {
    const file = join(dir, 'written-places.csv');
    writeFileSync(
      file,
      'external_id,name,registration_number,jurisdiction,source\n' +
        'ew-1,Albion Mills Ltd,01234567,England and Wales,written-places\n' +
        'sc-1,Highland Looms Ltd,SC12345,Scotland,written-places\n' +
        'de-1,Dover Quarries Inc,5550001,Delaware,written-places\n' +
        'ny-1,Empire Quarries Inc,5550001,State of New York,written-places\n',
    );
    const run = await cli('import', 'company', file);
    expect([run.code, run.stdout]).toEqual([0, expect.stringMatching(/^read 4, imported 4, /m)]);
    expect(
      await rows(
        `SELECT external_id, jurisdiction, registration_key FROM companies WHERE source = 'written-places' ORDER BY 1`,
      ),
    ).toEqual([
      { external_id: 'de-1', jurisdiction: 'US-DE', registration_key: '5550001' },
      { external_id: 'ew-1', jurisdiction: 'GB', registration_key: '1234567' },
      { external_id: 'ny-1', jurisdiction: 'US-NY', registration_key: '5550001' },
      { external_id: 'sc-1', jurisdiction: 'GB', registration_key: 'SC012345' },
    ]);
  });

  it('imports a person in country UK with a national phone, stored in GB and found by that phone', async () => {
    const file = join(dir, 'uk-people.csv');
    writeFileSync(
      file,
      'external_id,full_name,phones,locations,source\n' +
        'uk-p1,Ada Lovelace,020 7946 0321,London|England|UK,uk-people\n' +
        'uk-p2,Alan Turing,0113 496 0123,Leeds||uk;Princeton|NJ|US,uk-people\n',
    );
    const run = await cli('import', 'person', file);
    expect([run.code, run.stderr.match(/^line .*/gm), run.stdout]).toEqual([
      0,
      null,
      expect.stringMatching(/^read 2, imported 2, /m),
    ]);
    expect(
      await rows(
        `SELECT external_id, phones, phone_keys, locations, location_keys FROM people
          WHERE source = 'uk-people' ORDER BY 1`,
      ),
    ).toEqual([
      {
        external_id: 'uk-p1',
        phones: ['020 7946 0321'],
        phone_keys: ['+442079460321'],
        locations: [{ city: 'London', region: 'England', country: 'GB' }],
        location_keys: ['london', 'england', 'gb'],
      },
      {
        external_id: 'uk-p2',
        phones: ['0113 496 0123'],
        phone_keys: ['+441134960123'],
        locations: [
          { city: 'Leeds', region: null, country: 'GB' },
          { city: 'Princeton', region: 'NJ', country: 'US' },
        ],
        location_keys: ['leeds', 'gb', 'princeton', 'nj', 'us'],
      },
    ]);
    expect(await byPhone('+442079460321')).toEqual(['uk-p1']);
    expect(await byPhone('+441134960123')).toEqual(['uk-p2']);
  });

  it('stores a country written as a name or a common code as its ISO code, and reads a national phone there or in DEFAULT_REGION', async () => {
    const file = join(dir, 'named-countries.jsonl');
    const line = (id: string, phone: string, country?: string) =>
      JSON.stringify({
        external_id: id,
        full_name: `Named ${id}`,
        phones: [phone],
        ...(country === undefined ? {} : { locations: [{ city: null, region: null, country }] }),
        source: 'named-countries',
      });
    writeFileSync(
      file,
      [
        line('usa', '(512) 555-0199', 'USA'),
        line('us', '(512) 555-0198', 'U.S.'),
        line('united-states', '(512) 555-0197', 'United States'),
        line('united-kingdom', '020 7946 0321', 'United Kingdom'),
        line('uk', '020 7946 0322', 'UK'),
        line('nowhere', '020 7946 0323'),
        line('deutschland', '030 123456', 'Deutschland'),
        line('not-in-gb', '1 512 555 0196'),
        line('not-in-us', '020 7946 0324', 'USA'),
      ]
        .map((l) => `${l}\n`)
        .join(''),
    );
    // The operator's default region is GB: the record naming no country has its phone read there.
    const run = await runCli(['import', 'person', file], { ...env, DEFAULT_REGION: 'GB' });
    expect([run.code, run.stderr.match(/^line .*/gm)]).toEqual([
      1,
      [
        "line 7: locations[0].country must be an ISO 3166-1 alpha-2 code such as GB or a country's English name",
        'line 8: phones: "1 512 555 0196" is not a phone number',
        'line 9: phones: "020 7946 0324" is not a phone number',
      ],
    ]);
    const stored = await rows(
      `SELECT external_id, phones, phone_keys, locations FROM people WHERE source = 'named-countries' ORDER BY 1`,
    );
    const located = (country: string) => [{ city: null, region: null, country }];
    expect(stored.map((r) => [r.external_id, r.phones, r.phone_keys, r.locations])).toEqual([
      // Read in GB, the number is stored as E.164: it is read the same way wherever the record is read.
      ['nowhere', ['+442079460323'], ['+442079460323'], []],
      ['uk', ['020 7946 0322'], ['+442079460322'], located('GB')],
      ['united-kingdom', ['020 7946 0321'], ['+442079460321'], located('GB')],
      ['united-states', ['(512) 555-0197'], ['+15125550197'], located('US')],
      ['us', ['(512) 555-0198'], ['+15125550198'], located('US')],
      ['usa', ['(512) 555-0199'], ['+15125550199'], located('US')],
    ]);
    expect(await byPhone('+15125550199', 'US')).toEqual(['usa']);
    expect(await byPhone('+442079460323')).toEqual(['nowhere']);
  });

  it('rejects a value too long for its index by its field, and imports the rest of its batch', async () => {
    // Text that does not compress (Postgres compresses a long index entry before refusing it): code points
    // from a fixed generator, so the file is the same every run.
    let seed = 7;
    const text = (from: number, span: number, length: number) =>
      Array.from({ length }, () => String.fromCodePoint(from + ((seed = (seed * 48271) % 2147483647) % span))).join('');
    const hangul = (length: number) => text(0xac00, 11172, length); // folded: ~4.7 ASCII bytes a character
    const cjk = (length: number) => text(0x4e00, 20000, length); // 3 UTF-8 bytes a character
    const person = (id: string, extra: Record<string, unknown> = {}) =>
      JSON.stringify({ external_id: id, full_name: `Person ${id}`, source: 'too-long', ...extra });
    const people = join(dir, 'too-long.jsonl');
    writeFileSync(
      people,
      [
        person('ok-1'),
        person('name', { full_name: hangul(1000) }), // within 1,000 characters, but ~4,700 bytes once folded
        person('alias', { aliases: ['Fine', hangul(900)] }),
        person('username', { usernames: [cjk(1000)] }),
        person(cjk(1000), { full_name: 'Long Id' }),
        person('ok-2', { full_name: hangul(200), usernames: [cjk(400)] }), // long, but fits
      ]
        .map((l) => `${l}\n`)
        .join(''),
    );
    const run = await cli('import', 'person', people);
    expect([run.code, run.stderr.match(/^(line|failed).*/gm)]).toEqual([
      1,
      [
        'line 2: full_name is too long to index: at most 1300 bytes of UTF-8 once normalised',
        'line 3: aliases is too long to index: at most 1300 bytes of UTF-8 once normalised',
        'line 4: usernames is too long to index: at most 1300 bytes of UTF-8 once normalised',
        'line 5: external_id is too long to index: at most 1300 bytes of UTF-8 once normalised',
      ],
    ]);
    expect(run.stdout).toMatch(/^read 6, imported 2, updated 0, unchanged 0, superseded 0, rejected 4 /m);
    expect(await rows(`SELECT external_id FROM people WHERE source = 'too-long' ORDER BY 1`)).toEqual([
      { external_id: 'ok-1' },
      { external_id: 'ok-2' },
    ]);

    const companies = join(dir, 'too-long.csv');
    writeFileSync(
      companies,
      'external_id,name,domain,lei,source\n' +
        'ok,Fine Ltd,fine.example,,too-long\n' +
        // ~2,750 bytes as punycode: no host name (a label has at most 63 characters, a name 253), so no domain.
        `domain,Domain Ltd,${cjk(900)}.example,,too-long\n` +
        `lei,Lei Ltd,,${cjk(1000)},too-long\n`,
    );
    const company = await cli('import', 'company', companies);
    expect([company.code, company.stderr.match(/^(line|failed).*/gm)]).toEqual([
      1,
      [
        expect.stringMatching(/^line 3: domain: ".+\.example" is not a domain$/),
        'line 4: lei is too long to index: at most 1300 bytes of UTF-8 once normalised',
      ],
    ]);
    expect(await rows(`SELECT external_id FROM companies WHERE source = 'too-long'`)).toEqual([{ external_id: 'ok' }]);
  });

  it.each([
    [['import'], /expected <person\|company> <file>/],
    [['import', 'animal', 'x.jsonl'], /the kind is person or company/],
    [['import', 'person', 'x.txt'], /cannot tell the format/],
    [['import', 'person', 'x.csv', '--format', 'xml'], /--format is one of jsonl, csv, gleif, companies-house/],
    [['import', 'person', 'x.csv', '--format', 'gleif'], /holds companies/],
    [['import', 'person', '/nonexistent/people.jsonl'], /no such file: \/nonexistent\/people.jsonl/],
    [
      ['import', 'company', join(FIXTURES, 'people.csv'), '--format', 'gleif'],
      /the header has no LEI, Entity.LegalName column/,
    ],
    [['demo:seed', '--people', 'many'], /--people "many" must be a whole number/],
    [['demo:seed', '--colour'], /unknown option --colour/],
  ])('%j is a usage error: exit 2 and a message naming it', async (args, message) => {
    const run = await cli(...args);
    expect([run.code, run.stderr]).toEqual([2, expect.stringMatching(message)]);
  });

  it('seeds the same demo set every time: a re-run and --if-absent change nothing', async () => {
    const first = await cli('demo:seed', '--people', '300', '--companies', '50');
    expect(first.stdout).toContain('people 300 imported, 0 updated; companies 50 imported, 0 updated');
    const again = await cli('demo:seed', '--people', '300', '--companies', '50');
    expect(again.stdout).toContain('people 0 imported, 0 updated; companies 0 imported, 0 updated');
    expect((await cli('demo:seed', '--if-absent')).stdout).toContain('the demo set is there already');
    expect(await rows(`SELECT count(*)::int AS n FROM people WHERE source = 'demo'`)).toEqual([{ n: 300 }]);
    // Same generator, same records: in this process as in the CLI's.
    const [person] = await rows(`SELECT full_name, emails FROM people WHERE external_id = 'demo-person-0000001'`);
    const generated = demoPeople(1).next().value!;
    expect(person).toEqual({ full_name: generated.full_name, emails: generated.emails });
    expect([...demoCompanies(20)]).toEqual([...demoCompanies(20)]);
    // No two demo people share an e-mail or a phone, no two companies a domain: the merge would fuse them.
    const people = [...demoPeople(5_000)];
    for (const field of ['emails', 'phones'] as const) {
      const values = people.flatMap((p) => p[field] ?? []);
      expect([field, new Set(values).size]).toEqual([field, values.length]);
    }
    const domains = [...demoCompanies(2_000)].map((c) => c.domain);
    expect(new Set(domains).size).toBe(domains.length);
  });

  it('demo:seed --if-absent completes a demo set cut off before its companies, instead of calling it there', async () => {
    // What a seed stopped (Ctrl-C during `npm start`, a crash) after its people leaves: they are written first.
    await db.query(`DELETE FROM companies WHERE source = 'demo'`);
    const run = await cli('demo:seed', '--people', '300', '--companies', '50', '--if-absent');
    expect([run.code, run.stdout]).toEqual([
      0,
      'demo:seed: people 0 imported, 0 updated; companies 50 imported, 0 updated\n',
    ]);
    expect((await cli('demo:seed', '--if-absent')).stdout).toContain('the demo set is there already');
  });
  it('says, when Postgres goes away mid-import, through which line everything was written; importing again completes it', async () => {
    const file = join(dir, 'cut.jsonl');
    const people = Array.from({ length: 12_000 }, (_, k) =>
      JSON.stringify({ external_id: `cut-${k}`, full_name: `Person ${k} Cut`, source: 'cut' }),
    );
    writeFileSync(file, `${people.join('\n')}\n`);
    const proxy = await TcpProxy.forUrl(env.DATABASE_URL).start();
    const through = await openDataSource({ url: proxy.url(env.DATABASE_URL), poolSize: 2, applicationName: 'cut' });
    let stopped!: ImportInterrupted;
    try {
      // Postgres goes away once the first batch is written: the third, and the second unless it had
      // committed by then (two are written at once), fail.
      const out = { rejected: () => undefined, progress: () => proxy.cut(), done: () => undefined };
      const failure = await importFile(through, 'person', file, 'jsonl', 'US', out).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(ImportInterrupted);
      stopped = failure as ImportInterrupted;
    } finally {
      await through.destroy().catch(() => undefined);
      await proxy.close();
    }
    expect([BATCH, 2 * BATCH]).toContain(stopped.writtenThrough);
    expect(stopped.summary).toMatchObject({ imported: stopped.writtenThrough, updated: 0, unchanged: 0, rejected: 0 });
    // Every line up to writtenThrough is there. A batch whose COMMIT was under way at the cut may be there too,
    // uncounted: its answer never came back.
    const [there] = await rows(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE substr(external_id, 5)::int < $1)::int AS through
         FROM people WHERE source = 'cut'`,
      [stopped.writtenThrough],
    );
    expect(there!['through']).toBe(stopped.writtenThrough);
    expect([stopped.writtenThrough, stopped.writtenThrough + BATCH]).toContain(there!['n']);
    const again = await cli('import', 'person', file);
    expect(again.code).toBe(0);
    const n = there!['n'] as number;
    expect(again.stdout).toMatch(
      new RegExp(`^read 12000, imported ${12_000 - n}, updated 0, unchanged ${n}, superseded 0, rejected 0 `, 'm'),
    );
  });

  it('stops at Ctrl-C or SIGTERM once the batch being written is in, and says through which line everything is', async () => {
    const file = join(dir, 'stop.jsonl');
    // Long enough that the first batch is in (at the latest when a third needs room) well before the end.
    const people = Array.from({ length: 30_000 }, (_, k) =>
      JSON.stringify({ external_id: `stop-${k}`, full_name: `Person ${k} Stop`, source: 'stop' }),
    );
    writeFileSync(file, `${people.join('\n')}\n`);
    const ds = await openDataSource({ url: env.DATABASE_URL, poolSize: 2, applicationName: 'stop' });
    try {
      // The operator presses Ctrl-C once the first batch is written.
      const stop = new AbortController();
      const out = { rejected: () => undefined, progress: () => stop.abort('SIGINT'), done: () => undefined };
      const failure = await importFile(ds, 'person', file, 'jsonl', 'US', out, stop.signal).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(ImportInterrupted);
      const stopped = failure as ImportInterrupted;
      expect(stopped.message).toBe('interrupted (SIGINT)');
      expect(stopped.summary.read).toBeLessThan(30_000);
      expect(stopped.writtenThrough).toBeGreaterThanOrEqual(BATCH);
      const n = stopped.summary.imported;
      expect(n).toBe(stopped.writtenThrough);
      expect(await rows(`SELECT count(*)::int AS n FROM people WHERE source = 'stop'`)).toEqual([{ n }]);
    } finally {
      await ds.destroy();
    }
  });

  it('tells the operator who stops an import with SIGTERM what is written, exit 1', async () => {
    const file = join(dir, 'term.jsonl');
    const people = Array.from({ length: 200_000 }, (_, k) =>
      JSON.stringify({ external_id: `term-${k}`, full_name: `Person ${k} Term`, source: 'term' }),
    );
    writeFileSync(file, `${people.join('\n')}\n`);
    const child = spawn(process.execPath, [DIST.cli, 'import', 'person', file], {
      env: { PATH: process.env['PATH'] ?? '', DATABASE_URL: env.DATABASE_URL },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = once(child, 'close'); // after its output is all read, unlike 'exit'
    // The first progress line comes once the first batch is written: stop it then.
    await new Promise<void>((resolve) =>
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (stderr.includes('progress: ')) resolve();
      }),
    );
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(1);
    expect(stderr).toContain(`import: ${file}: stopped: interrupted (SIGTERM)\n`);
    const through = /every valid line up to line (\d+) is written\. Importing the file again is safe/.exec(stdout);
    expect(through).not.toBeNull();
    expect(await rows(`SELECT count(*)::int AS n FROM people WHERE source = 'term'`)).toEqual([
      { n: Number(through![1]) },
    ]);
  });
});
