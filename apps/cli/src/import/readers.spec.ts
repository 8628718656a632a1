import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileShapeError, MAX_CSV_RECORD_BYTES, entries, openFile, type Entry } from './readers';

/** The import readers on files of their own, no database. */
describe('import readers', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'dossier-readers-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stops at a quote left open without reading the rest of a large file into memory', async () => {
    const path = join(dir, 'open-quote.csv');
    const rest = Array.from({ length: 100_000 }, (_, i) => `p${i},Person number ${i} of the rest of the file\n`);
    writeFileSync(path, `external_id,full_name\np1,Ada\np2,"Bob\n${rest.join('')}`);
    const size = statSync(path).size;
    expect(size).toBeGreaterThan(3 * MAX_CSV_RECORD_BYTES);

    const stream = openFile(path);
    const read: Entry[] = [];
    for await (const entry of entries('person', 'csv', stream)) read.push(entry);

    expect(read).toEqual([
      { line: 2, fields: { external_id: 'p1', full_name: 'Ada' } },
      {
        line: 3,
        reason: `invalid CSV: a record runs past ${MAX_CSV_RECORD_BYTES} bytes (a quote left open?)`,
        stopped: true,
      },
    ]);
    // Read up to the limit, not to the end of the file.
    expect(stream.bytesRead).toBeLessThan(2 * MAX_CSV_RECORD_BYTES);
  });

  const read = async (name: string, text: string, kind: 'person' | 'company' = 'person') => {
    const path = join(dir, name);
    writeFileSync(path, text);
    const out: Entry[] = [];
    for await (const entry of entries(kind, 'csv', openFile(path))) out.push(entry);
    return out;
  };

  it('refuses a CSV header that names a column twice, instead of keeping one of its values', async () => {
    const file = 'external_id,full_name,emails,phones,emails\np1,Ada,ada@one.example,+14155550100,ada@two.example\n';
    await expect(read('twice.csv', file)).rejects.toThrow(
      new FileShapeError('the header names the emails column twice: which value is meant is unclear'),
    );
    await expect(read('twice-company.csv', 'external_id,name,name\nc1,Acme,Acme Ltd\n', 'company')).rejects.toThrow(
      FileShapeError,
    );
  });

  it('reads a CSV header with empty names past its last column, as spreadsheets export it', async () => {
    expect(await read('trailing.csv', 'external_id,full_name,,\np1,Ada,,\n')).toEqual([
      { line: 2, fields: { external_id: 'p1', full_name: 'Ada' } },
    ]);
  });
});
