import { createReadStream, type ReadStream } from 'node:fs';
import { parse, type Parser } from 'csv-parse';

/**
 * One line of an import file: its fields, or why it could not be read at all. `stopped`: the reader could
 * not go past this line (a broken CSV quote), so the rest of the file was not read.
 */
export type Entry = { line: number; fields: Record<string, unknown> } | Unreadable;
type Unreadable = { line: number; reason: string; stopped?: true };

export const FORMATS = ['jsonl', 'csv', 'gleif', 'companies-house', 'companies-house-psc', 'gleif-rr'] as const;
export type ImportFormat = (typeof FORMATS)[number];
export type ImportKind = 'person' | 'company';

/**
 * The most bytes one record may have: a CSV record, or a JSONL line. A CSV quote left open makes the parser
 * read every later line into one value, and a file with no line breaks (a JSON array given as JSONL) is one
 * line: without a limit, the rest of the file (gigabytes, in a registry's bulk file) in memory.
 */
export const MAX_RECORD_BYTES = 1 << 20;

/** A file that cannot be imported as asked (a missing column, one named twice): a usage error, exit status 2. */
export class FileShapeError extends Error {
  override readonly name = 'FileShapeError';
}

/** The source a bulk format's records are stored under; JSONL and CSV lines name theirs or get the default. */
export const FORMAT_SOURCE: Record<ImportFormat, string | null> = {
  jsonl: null,
  csv: null,
  gleif: 'gleif',
  'companies-house': 'companies-house',
  'companies-house-psc': 'companies-house',
  'gleif-rr': 'gleif',
};

/** The formats that hold a company's depth (ADR 0066), not companies: each writes its own table. */
export const DEPTH_FORMATS: readonly ImportFormat[] = ['companies-house-psc', 'gleif-rr'];

/** The columns of GLEIF's relationship record (RR-CDF) golden copy CSV that Dossier reads. */
export const RR_COLUMNS = {
  start: 'Relationship.StartNode.NodeID',
  end: 'Relationship.EndNode.NodeID',
  type: 'Relationship.RelationshipType',
  status: 'Relationship.RelationshipStatus',
} as const;

export function entries(kind: ImportKind, format: ImportFormat, stream: ReadStream): AsyncIterable<Entry> {
  switch (format) {
    case 'jsonl':
      return jsonl(stream);
    case 'csv':
      return mapped(
        csv(stream, kind === 'person' ? ['external_id', 'full_name'] : ['external_id', 'name'], (h) => h, true),
        (row) => (kind === 'person' ? personCsvFields(row) : cells(row)),
      );
    case 'gleif':
      return mapped(
        csv(stream, ['LEI', 'Entity.LegalName'], (h) => h),
        gleifFields,
      );
    case 'companies-house-psc':
      // One `{"company_number", "data": {…}}` a line, as the snapshot is published.
      return jsonl(stream);
    case 'gleif-rr':
      return mapped(
        csv(stream, [RR_COLUMNS.start, RR_COLUMNS.end, RR_COLUMNS.type], (h) => h),
        cells,
      );
    case 'companies-house':
      // The published header has stray spaces (" CompanyNumber", " RegAddress.AddressLine2").
      return mapped(
        csv(stream, ['CompanyName', 'CompanyNumber'], (h) => h.trim()),
        companiesHouseFields,
      );
  }
}

async function* jsonl(stream: ReadStream): AsyncIterable<Entry> {
  let line = 0;
  for await (const read of lines(stream)) {
    line++;
    if (read === null) {
      yield {
        line,
        reason: `invalid JSON: a line runs past ${MAX_RECORD_BYTES} bytes (one JSON object per line?)`,
        stopped: true,
      };
      return;
    }
    // A UTF-8 byte-order mark (as Windows tools write one) is not part of the first line's JSON.
    const text = line === 1 ? read.replace(/^\uFEFF/, '') : read;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      yield { line, reason: 'invalid JSON' };
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      yield { line, reason: 'must be a JSON object' };
    else yield { line, fields: value as Record<string, unknown> };
  }
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * The file's lines as UTF-8 text, ended by LF, CRLF or CR (as readline ends them), each at most
 * MAX_RECORD_BYTES: a longer one is `null` and ends the read, having held no more than the limit and
 * one read's chunk.
 */
async function* lines(stream: ReadStream): AsyncIterable<string | null> {
  let parts: Buffer[] = [];
  let size = 0;
  let afterCr = false; // the last line ended with CR: an LF first in the next chunk belongs to it
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let start = afterCr && chunk[0] === LF ? 1 : 0;
    afterCr = false;
    // Each break's next position, looked for again only once passed: a file without CRs is not searched
    // to the chunk's end for one at every line.
    let lf = -2;
    let cr = -2;
    for (;;) {
      if (lf !== -1 && lf < start) lf = chunk.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = chunk.indexOf(CR, start);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) break;
      if (size + end - start > MAX_RECORD_BYTES) {
        yield null;
        return;
      }
      yield parts.length === 0
        ? chunk.toString('utf8', start, end)
        : Buffer.concat([...parts, chunk.subarray(start, end)]).toString('utf8');
      parts = [];
      size = 0;
      start = end + 1;
      if (chunk[end] === CR) {
        if (start === chunk.length) afterCr = true;
        else if (chunk[start] === LF) start++;
      }
    }
    size += chunk.length - start;
    if (size > MAX_RECORD_BYTES) {
      yield null;
      return;
    }
    parts.push(chunk.subarray(start));
  }
  if (size > 0) yield Buffer.concat(parts).toString('utf8');
}

type Row = Record<string, string>;

/**
 * The rows of a CSV file, up to its first malformed record (a broken quote). csv-parse cannot resynchronise
 * after one: left inside a quoted field it reads the following lines into it, or takes a later quote for
 * the field's end and goes on with shifted columns. So that record ends the read, reported as `stopped` at
 * the line it starts on, as is a record past MAX_RECORD_BYTES. It is skipped rather than thrown: a
 * parser that errors drops the rows it has parsed but not yet handed over, which would be lost too (in a
 * small file, every row before it).
 * A row with values past the header's last column (an unquoted comma shifts every later value one
 * column on) is rejected; empty cells there lose nothing and are let through.
 */
async function* csv(
  stream: ReadStream,
  required: string[],
  header: (name: string) => string,
  /** Every column is a field (JSONL's CSV twin): a name given twice is a shape error, not "the later wins". */
  distinct = false,
): AsyncIterable<{ line: number; row: Row } | Unreadable> {
  let broken: string | null = null;
  let lastLine = 0; // the header's, then the last row's: the broken record starts on the line after it
  let columns: string[] | null = null;
  // csv-parse counts a CRLF inside a quoted value as two lines: each one seen so far is taken off.
  let overCounted = 0;
  const parser: Parser = parse({
    bom: true,
    info: true,
    max_record_size: MAX_RECORD_BYTES,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    // Called in file order as records are parsed: nothing after the broken one reaches the loop below.
    on_record: (entry) => (broken === null ? entry : null),
    on_skip: (error) => {
      if (broken !== null) return; // the same broken record, or the parser's attempts to go on after it
      broken =
        error?.code === 'CSV_MAX_RECORD_SIZE'
          ? `invalid CSV: a record runs past ${MAX_RECORD_BYTES} bytes (a quote left open?)`
          : `invalid CSV: ${error?.message ?? 'unreadable record'}`;
      // Read no further; the rows parsed before it are still handed over, then the parser ends.
      stream.unpipe(parser);
      parser.end();
    },
  });
  stream.pipe(parser);
  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
    for (const value of record) overCounted += value.split('\r\n').length - 1;
    const line = info.lines - overCounted;
    lastLine = line;
    if (columns === null) {
      columns = record.map(header);
      const missing = required.filter((r) => !columns!.includes(r));
      if (missing.length > 0) throw new FileShapeError(`the header has no ${missing.join(', ')} column`);
      const twice = distinct ? columns.find((c, i) => c !== '' && columns!.indexOf(c) !== i) : undefined;
      if (twice !== undefined)
        throw new FileShapeError(`the header names the ${twice} column twice: which value is meant is unclear`);
    } else if (record.slice(columns.length).some((v) => v !== '')) {
      yield {
        line,
        reason: `${record.length} values, but the header has ${columns.length} columns (a value with a comma needs quotes)`,
      };
    } else {
      // A short row lacks its last cells; of two columns with one name (in a registry's file), the later wins.
      const row: Row = Object.fromEntries(columns.slice(0, record.length).map((name, i) => [name, record[i]!]));
      yield { line, row };
    }
  }
  if (broken !== null) yield { line: lastLine + 1, reason: broken, stopped: true };
}

async function* mapped(
  rows: AsyncIterable<{ line: number; row: Row } | Unreadable>,
  fieldsOf: (row: Row) => Record<string, unknown>,
): AsyncIterable<Entry> {
  for await (const r of rows) yield 'reason' in r ? r : { line: r.line, fields: fieldsOf(r.row) };
}

/** The non-empty cells: an empty CSV cell is an absent field. */
function cells(row: Row): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([, v]) => v !== ''));
}

const split = (v: string | undefined, sep: string) =>
  v === undefined || v === '' ? [] : v.split(sep).map((s) => s.trim());

/** CSV of people: lists `;`-separated, a location `city|region|country`. */
function personCsvFields(row: Row): Record<string, unknown> {
  const fields = cells(row);
  for (const name of ['aliases', 'emails', 'phones', 'usernames'] as const)
    if (name in fields) fields[name] = split(row[name], ';');
  if ('locations' in fields)
    fields['locations'] = split(row['locations'], ';').map((l) => {
      const [city = '', region = '', country = ''] = l.split('|').map((s) => s.trim());
      return { city: city || null, region: region || null, country: country || null };
    });
  return fields;
}

const joined = (...parts: (string | undefined)[]) => parts.filter((p) => p && p.trim() !== '').join(', ') || undefined;
const defined = (o: Record<string, string | undefined>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')) as Record<string, string>;

/** A row of the GLEIF LEI-CDF golden copy CSV (columns by name; the file has ~200 more). */
function gleifFields(r: Row): Record<string, unknown> {
  const a = (k: string) => r[`Entity.LegalAddress.${k}`];
  return defined({
    external_id: r['LEI'],
    lei: r['LEI'],
    name: r['Entity.LegalName'],
    registration_number: r['Entity.RegistrationAuthority.RegistrationAuthorityEntityID'],
    jurisdiction: r['Entity.LegalJurisdiction'],
    country: a('Country'),
    status: r['Entity.EntityStatus'],
    incorporated_on: r['Entity.EntityCreationDate']?.slice(0, 10),
    address: joined(
      a('FirstAddressLine'),
      a('AdditionalAddressLine.1'),
      a('AdditionalAddressLine.2'),
      a('AdditionalAddressLine.3'),
      a('City'),
      a('Region'),
      a('PostalCode'),
      a('Country'),
    ),
  });
}

/** `dd/mm/yyyy` (as Companies House writes dates) → `yyyy-mm-dd`; anything else is passed on to be rejected. */
function ukDate(v: string | undefined): string | undefined {
  const m = v ? /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(v.trim()) : null;
  return m ? `${m[3]}-${m[2]}-${m[1]}` : v;
}

/** A row of the Companies House "Basic Company Data" CSV. */
function companiesHouseFields(r: Row): Record<string, unknown> {
  const a = (k: string) => r[`RegAddress.${k}`];
  return defined({
    external_id: r['CompanyNumber'],
    registration_number: r['CompanyNumber'],
    name: r['CompanyName'],
    jurisdiction: 'GB',
    country: 'GB',
    status: r['CompanyStatus'],
    incorporated_on: ukDate(r['IncorporationDate']),
    address: joined(
      a('CareOf'),
      a('POBox'),
      a('AddressLine1'),
      a('AddressLine2'),
      a('PostTown'),
      a('County'),
      a('Country'),
      a('PostCode'),
    ),
    industry: r['SICCode.SicText_1'],
  });
}

export function openFile(path: string): ReadStream {
  return createReadStream(path, { highWaterMark: 1 << 16 });
}
