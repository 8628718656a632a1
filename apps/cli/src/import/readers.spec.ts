import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileShapeError, MAX_RECORD_BYTES, entries, openFile, type Entry } from './readers';

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
    expect(size).toBeGreaterThan(3 * MAX_RECORD_BYTES);

    const stream = openFile(path);
    const read: Entry[] = [];
    for await (const entry of entries('person', 'csv', stream)) read.push(entry);

    expect(read).toEqual([
      { line: 2, fields: { external_id: 'p1', full_name: 'Ada' } },
      {
        line: 3,
        reason: `invalid CSV: a record runs past ${MAX_RECORD_BYTES} bytes (a quote left open?)`,
        stopped: true,
      },
    ]);
    // Read up to the limit, not to the end of the file.
    expect(stream.bytesRead).toBeLessThan(2 * MAX_RECORD_BYTES);
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

  it('stops at a JSONL line past the record limit (a JSON array given as JSONL) without reading the file into memory', async () => {
    const path = join(dir, 'array.jsonl');
    const items = Array.from({ length: 60_000 }, (_, i) => `{"external_id":"p${i}","full_name":"Person number ${i}"}`);
    writeFileSync(
      path,
      `{"external_id":"p0","full_name":"Ada"}\n[${items.join(',')}]\n{"external_id":"p9","full_name":"Bo"}\n`,
    );
    expect(statSync(path).size).toBeGreaterThan(3 * MAX_RECORD_BYTES);

    const stream = openFile(path);
    const read: Entry[] = [];
    for await (const entry of entries('person', 'jsonl', stream)) read.push(entry);

    expect(read).toEqual([
      { line: 1, fields: { external_id: 'p0', full_name: 'Ada' } },
      {
        line: 2,
        reason: `invalid JSON: a line runs past ${MAX_RECORD_BYTES} bytes (one JSON object per line?)`,
        stopped: true,
      },
    ]);
    expect(stream.bytesRead).toBeLessThan(2 * MAX_RECORD_BYTES);
  });

  it('reads JSONL lines split at CRLF, LF or CR, a byte-order mark and multi-byte text across reads', async () => {
    const path = join(dir, 'ends.jsonl');
    const long = 'é'.repeat(40_000); // 80,000 bytes: over one 64 KiB read, a character split between two
    writeFileSync(path, `\uFEFF{"external_id":"a"}\r\n\r\n{"external_id":"b"}\r{"external_id":"${long}"}\n`);
    const read: Entry[] = [];
    for await (const entry of entries('person', 'jsonl', openFile(path))) read.push(entry);
    expect(read).toEqual([
      { line: 1, fields: { external_id: 'a' } },
      { line: 3, fields: { external_id: 'b' } },
      { line: 4, fields: { external_id: long } },
    ]);
    // A CRLF split between two 64 KiB reads is one line end: the next line keeps its number.
    const split = join(dir, 'split-crlf.jsonl');
    const pad = 'x'.repeat((1 << 16) - '{"external_id":""}'.length - 1);
    writeFileSync(split, `{"external_id":"${pad}"}\r\n{"external_id":"z"}\n`);
    const lines: Entry[] = [];
    for await (const entry of entries('person', 'jsonl', openFile(split))) lines.push(entry);
    expect(lines.map((e) => e.line)).toEqual([1, 2]);
  });
});
