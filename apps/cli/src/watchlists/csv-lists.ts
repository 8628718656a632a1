import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import { FileShapeError } from '../import/readers';
import { countriesOf, distinct, euType, itemOf, yearsOf, type ListFiles, type ListItem } from './entries';

/** The lists published as CSV: OFAC's sdn.csv (+ alt.csv), the EU's FSF CSV, the UK's lists. */

type CsvRow = { line: number; cells: string[] } | { line: number; reason: string; stopped: true };

/** A CSV file's records with the line each starts on; a record csv-parse cannot read ends the read. */
async function* csvRows(file: string, delimiter = ','): AsyncIterable<CsvRow> {
  const parser = createReadStream(file, { highWaterMark: 1 << 16 }).pipe(
    parse({ bom: true, info: true, delimiter, relax_column_count: true, relax_quotes: true, skip_empty_lines: true }),
  );
  let last = 0;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      const lines = record.reduce((n, v) => n + (v.match(/\n/g)?.length ?? 0), 0);
      last = info.lines;
      yield { line: info.lines - lines, cells: record };
    }
  } catch (error) {
    yield { line: last + 1, reason: `invalid CSV: ${(error as Error).message}`, stopped: true };
  }
}

/** A group of rows about one entry (the EU's and UK's CSV files give each name, address, … a row). */
interface Group {
  line: number;
  rows: Record<string, string>[];
}

/** Rows with a header (the first row holding `marker`; rows before it, a report date, skipped), grouped by `key`. */
async function* grouped(
  rows: AsyncIterable<CsvRow>,
  marker: string,
  keyOf: (header: string[]) => string,
): AsyncIterable<Group | { line: number; reason: string; stopped?: true }> {
  let header: string[] | null = null;
  let key = '';
  const groups = new Map<string, Group>();
  for await (const r of rows) {
    if ('reason' in r) {
      yield r;
      break;
    }
    if (header === null) {
      if (r.cells.map((c) => c.trim()).includes(marker)) {
        header = r.cells.map((c) => c.trim());
        key = keyOf(header);
      }
      continue;
    }
    const row = Object.fromEntries(header.map((h, i) => [h, (r.cells[i] ?? '').trim()]));
    const id = row[key] ?? '';
    if (id === '') {
      yield { line: r.line, reason: `no ${key}` };
      continue;
    }
    const group = groups.get(id);
    if (group) group.rows.push(row);
    else groups.set(id, { line: r.line, rows: [row] });
  }
  if (header === null) throw new FileShapeError(`no header row with a "${marker}" column: another list's file?`);
  yield* groups.values();
}

/** The EU's FSF CSV (`;`-separated, a row per name, birth date, citizenship, address of an entity). */
export async function* euCsv(file: string): AsyncIterable<ListItem> {
  for await (const g of grouped(csvRows(file, ';'), 'Entity_LogicalId', () => 'Entity_LogicalId')) {
    if ('reason' in g) {
      yield g;
      continue;
    }
    const col = (name: string) => g.rows.map((r) => r[name]);
    const [first] = g.rows;
    const type = euType(first!['Entity_SubjectType'] || first!['Entity_SubjectType_ClassificationCode']);
    if (type === null) {
      yield { line: g.line, other: `a ${first!['Entity_SubjectType'] || 'subject'} (${first!['Entity_LogicalId']})` };
      continue;
    }
    const names = distinct(col('NameAlias_WholeName'));
    yield itemOf('eu-fsf', g.line, {
      entry_id: first!['Entity_EU_ReferenceNumber'] || first!['Entity_LogicalId'] || '',
      entity_type: type,
      name: names[0] ?? '',
      aliases: names.slice(1),
      programmes: distinct(col('Entity_Regulation_Programme')),
      birth_years: yearsOf([...col('BirthDate_Year'), ...col('BirthDate_BirthDate')]),
      countries: countriesOf([...col('Citizenship_CountryIso2Code'), ...col('Address_CountryIso2Code')]),
    });
  }
}

/**
 * The UK Sanctions List CSV (FCDO: a report-date line, then a row per name and address of each `Unique ID`),
 * or OFSI's Consolidated List CSV (a "Last Updated" line, then rows by `Group ID`). Names 1–5 are given names,
 * Name 6 the family name (an organisation's whole name).
 */
export async function* ukCsv(file: string): AsyncIterable<ListItem> {
  const fcdo = (h: string[]) => h.includes('Unique ID');
  let isFcdo = false;
  const keyOf = (h: string[]) => ((isFcdo = fcdo(h)) ? 'Unique ID' : 'Group ID');
  for await (const g of grouped(csvRows(file), 'Name 6', keyOf)) {
    if ('reason' in g) {
      yield g;
      continue;
    }
    const [first] = g.rows;
    const col = (name: string) => g.rows.map((r) => r[name]);
    const id = first![isFcdo ? 'Unique ID' : 'Group ID']!;
    const kind = (first![isFcdo ? 'Designation Type' : 'Group Type'] ?? '').toLowerCase();
    if (kind !== 'individual' && kind !== 'entity') {
      yield { line: g.line, other: `a ${kind || 'record'} (${id})` };
      continue;
    }
    const nameType = isFcdo ? 'Name type' : 'Alias Type';
    const nameOf = (r: Record<string, string>) =>
      distinct(['Name 1', 'Name 2', 'Name 3', 'Name 4', 'Name 5', 'Name 6'].map((n) => r[n])).join(' ');
    const primary = g.rows.find((r) => /^primary name$/i.test(r[nameType] ?? '')) ?? first!;
    const names = distinct([nameOf(primary), ...g.rows.map(nameOf)]);
    const script = isFcdo ? 'Name non-latin script' : 'Name Non-Latin Script';
    yield itemOf('uk-sanctions', g.line, {
      entry_id: id,
      entity_type: kind === 'individual' ? 'person' : 'organisation',
      name: names[0] ?? '',
      aliases: distinct([...names.slice(1), ...col(script)]),
      programmes: distinct(col(isFcdo ? 'Regime Name' : 'Regime')),
      birth_years: yearsOf(col(isFcdo ? 'D.O.B' : 'DOB')),
      countries: countriesOf([
        ...col(isFcdo ? 'Nationality(/ies)' : 'Nationality'),
        ...col(isFcdo ? 'Address Country' : 'Country'),
      ]),
    });
  }
}

const OFAC_NULL = /^-0-\s*$/;
const ofacValue = (v: string | undefined) => (v === undefined || OFAC_NULL.test(v) ? '' : v.trim());

/**
 * OFAC's sdn.csv (no header: ent_num, SDN_Name, SDN_Type, Program, Title, Call_Sign, Vess_type, Tonnage, GRT,
 * Vess_flag, Vess_owner, Remarks; `-0-` for none), with alt.csv's aliases (ent_num, alt_num, alt_type,
 * alt_name, alt_remarks) when given. Dates of birth and nationalities are in the remarks (`DOB 12 Jan 1960;
 * nationality Iran`).
 */
export async function* ofacCsv(files: ListFiles): AsyncIterable<ListItem> {
  const aliases = new Map<string, string[]>();
  if (files.aliases) {
    for await (const r of csvRows(files.aliases)) {
      if ('reason' in r) throw new FileShapeError(`${files.aliases}: line ${r.line}: ${r.reason}`);
      const [num, , , name] = r.cells.map(ofacValue);
      if (num && name) aliases.set(num, [...(aliases.get(num) ?? []), name]);
    }
  }
  for await (const r of csvRows(files.file)) {
    if ('reason' in r) {
      yield r;
      break;
    }
    const [num = '', name = '', type = '', program = '', , , , , , , , remarks = ''] = r.cells.map(ofacValue);
    if (r.cells.length === 1 && /^\x1a?$/.test(r.cells[0]!.trim())) continue; // the DOS end-of-file mark
    if (r.line === 1 && !/^\d+$/.test(num))
      throw new FileShapeError('the first row is not an SDN record (sdn.csv has no header): another file?');
    if (r.cells.length < 4) {
      yield { line: r.line, reason: `${r.cells.length} values, but an SDN record has 12` };
      continue;
    }
    const t = type.toLowerCase();
    if (t !== '' && t !== 'individual') {
      yield { line: r.line, other: `a ${t} (ent_num ${num})` };
      continue;
    }
    const parts = remarks.split(';').map((p) => p.trim());
    yield itemOf('ofac-sdn', r.line, {
      entry_id: num,
      entity_type: t === 'individual' ? 'person' : 'organisation',
      name,
      aliases: aliases.get(num) ?? [],
      programmes: program === '' ? [] : program.split(/\]\s*\[/).map((p) => p.replace(/[[\]]/g, '').trim()),
      birth_years: yearsOf(parts.filter((p) => /^DOB\b/i.test(p))),
      countries: countriesOf(
        parts.flatMap((p) => /^(?:nationality|citizen)\s+(.+)$/i.exec(p)?.[1] ?? []).map((c) => c.replace(/\.$/, '')),
      ),
    });
  }
}
