import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parse } from 'csv-parse';
import {
  watchlistCountryOf,
  yearsIn,
  type Watchlist,
  type WatchlistEntityType,
  type WatchlistEntry,
} from '@dossier/domain';
import { FileShapeError } from '../import/readers';
import { all, child, textAt, textsAt, xmlRecords, type XmlNode, type XmlRecord } from './xml';

/**
 * Each list's published formats, read into entries (ADR 0064, docs/cli.md "watchlists:import"): an entry
 * with the line it starts on, a line that is not one (`reason`; `stopped` when the read could not go on), or
 * a record that is neither a person nor an organisation (a vessel, an aircraft: `other`).
 */
export type ListItem =
  | { line: number; entry: WatchlistEntry }
  | { line: number; reason: string; stopped?: true }
  | { line: number; other: string };

export const LIST_FORMATS = ['csv', 'xml', 'jsonl'] as const;
export type ListFormat = (typeof LIST_FORMATS)[number];

/** The formats each list is published in. */
export const FORMATS_OF: Record<Watchlist, readonly ListFormat[]> = {
  'ofac-sdn': ['csv', 'xml'],
  'un-sc': ['xml'],
  'eu-fsf': ['csv', 'xml'],
  'uk-sanctions': ['csv'],
  opensanctions: ['jsonl'],
};

export interface ListFiles {
  file: string;
  /** OFAC's alt.csv (aliases of sdn.csv's entries by ent_num), when given. */
  aliases?: string;
}

export function listItems(list: Watchlist, format: ListFormat, files: ListFiles): AsyncIterable<ListItem> {
  const stream = () => createReadStream(files.file, { highWaterMark: 1 << 16 });
  switch (`${list}:${format}`) {
    case 'ofac-sdn:csv':
      return ofacCsv(files);
    case 'ofac-sdn:xml':
      return fromXml(list, stream(), ['sdnEntry'], ['sdnList'], ofacXmlEntry);
    case 'un-sc:xml':
      return fromXml(list, stream(), ['INDIVIDUAL', 'ENTITY'], ['CONSOLIDATED_LIST'], unEntry);
    case 'eu-fsf:xml':
      return fromXml(list, stream(), ['sanctionEntity'], ['export'], euXmlEntry);
    case 'eu-fsf:csv':
      return euCsv(files.file);
    case 'uk-sanctions:csv':
      return ukCsv(files.file);
    case 'opensanctions:jsonl':
      return ftmLines(files.file);
    default:
      throw new FileShapeError(`${list} is published as ${FORMATS_OF[list].join(' or ')}, not ${format}`);
  }
}

const distinct = (values: (string | null | undefined)[]) => [
  ...new Set(values.map((v) => v?.replace(/\s+/g, ' ').trim()).filter((v): v is string => !!v)),
];
const countriesOf = (values: (string | null | undefined)[]) => distinct(values.map((v) => watchlistCountryOf(v)));
const yearsOf = (values: (string | null | undefined)[]) => [...new Set(values.flatMap((v) => yearsIn(v)))];

type Built = Omit<WatchlistEntry, 'list'> | { other: string } | { reason: string };

function itemOf(list: Watchlist, line: number, built: Built): ListItem {
  if ('other' in built || 'reason' in built) return { line, ...built };
  if (built.entry_id.trim() === '') return { line, reason: 'no entry id' };
  if (built.name.trim() === '') return { line, reason: `entry ${built.entry_id}: no name` };
  return { line, entry: { list, ...built, entry_id: built.entry_id.trim() } };
}

async function* fromXml(
  list: Watchlist,
  chunks: AsyncIterable<Buffer>,
  records: string[],
  roots: string[],
  build: (node: XmlNode) => Built,
): AsyncIterable<ListItem> {
  const onRoot = (name: string) => {
    if (!roots.includes(name))
      throw new FileShapeError(
        `the document element is <${name}>, not <${roots.join('> or <')}>: another list's file?`,
      );
  };
  for await (const r of xmlRecords(chunks, new Set(records), onRoot) as AsyncIterable<XmlRecord>) {
    yield 'reason' in r ? r : itemOf(list, r.line, build(r.node));
  }
}

/** OFAC's sdn.xml `sdnEntry` (sdn.xsd): uid, names, sdnType, programList, akaList, dates of birth, countries. */
function ofacXmlEntry(e: XmlNode): Built {
  const type = textAt(e, 'sdnType')?.toLowerCase();
  if (type !== 'individual' && type !== 'entity') return { other: `a ${type ?? 'record'} (uid ${textAt(e, 'uid')})` };
  const nameOf = (n: XmlNode) => distinct([textAt(n, 'lastName'), textAt(n, 'firstName')]).join(', ');
  return {
    entry_id: textAt(e, 'uid') ?? '',
    entity_type: type === 'individual' ? 'person' : 'organisation',
    name: nameOf(e),
    aliases: distinct(all(e, 'akaList', 'aka').map(nameOf)),
    programmes: textsAt(e, 'programList', 'program'),
    birth_years: yearsOf(textsAt(e, 'dateOfBirthList', 'dateOfBirthItem', 'dateOfBirth')),
    countries: countriesOf([
      ...textsAt(e, 'nationalityList', 'nationality', 'country'),
      ...textsAt(e, 'citizenshipList', 'citizenship', 'country'),
      ...textsAt(e, 'addressList', 'address', 'country'),
    ]),
  };
}

/** The UN Security Council consolidated list's INDIVIDUAL and ENTITY (its XSD's element names). */
function unEntry(e: XmlNode): Built {
  const person = e.name === 'INDIVIDUAL';
  const prefix = person ? 'INDIVIDUAL' : 'ENTITY';
  const dates = all(e, 'INDIVIDUAL_DATE_OF_BIRTH').flatMap((d) => [
    textAt(d, 'DATE'),
    textAt(d, 'YEAR'),
    textAt(d, 'FROM_YEAR') && textAt(d, 'TO_YEAR') ? `${textAt(d, 'FROM_YEAR')} to ${textAt(d, 'TO_YEAR')}` : null,
  ]);
  return {
    entry_id: textAt(e, 'REFERENCE_NUMBER') ?? textAt(e, 'DATAID') ?? '',
    entity_type: person ? 'person' : 'organisation',
    name: distinct(['FIRST_NAME', 'SECOND_NAME', 'THIRD_NAME', 'FOURTH_NAME'].map((n) => textAt(e, n))).join(' '),
    aliases: distinct([...textsAt(e, `${prefix}_ALIAS`, 'ALIAS_NAME'), textAt(e, 'NAME_ORIGINAL_SCRIPT')]),
    programmes: distinct([textAt(e, 'UN_LIST_TYPE')]),
    birth_years: yearsOf(dates),
    countries: countriesOf([...textsAt(e, 'NATIONALITY', 'VALUE'), ...textsAt(e, `${prefix}_ADDRESS`, 'COUNTRY')]),
  };
}

/** The EU's FSF XML `sanctionEntity` (its export XSD): attributes, nameAlias, regulation, birthdate, citizenship. */
function euXmlEntry(e: XmlNode): Built {
  const code = child(e, 'subjectType')?.attrs['code'];
  const type = euType(code);
  if (type === null) return { other: `a ${code ?? 'subject'} (logical id ${e.attrs['logicalId']})` };
  const names = distinct(all(e, 'nameAlias').map((n) => n.attrs['wholeName']));
  return {
    entry_id: e.attrs['euReferenceNumber'] || e.attrs['logicalId'] || '',
    entity_type: type,
    name: names[0] ?? '',
    aliases: names.slice(1),
    programmes: distinct(all(e, 'regulation').map((r) => r.attrs['programme'])),
    birth_years: yearsOf(all(e, 'birthdate').flatMap((b) => [b.attrs['year'], b.attrs['birthdate']])),
    countries: countriesOf([
      ...all(e, 'citizenship').map((c) => c.attrs['countryIso2Code']),
      ...all(e, 'address').map((a) => a.attrs['countryIso2Code']),
    ]),
  };
}

function euType(code: string | undefined): WatchlistEntityType | null {
  const c = code?.trim().toLowerCase();
  return c === 'person' || c === 'p' ? 'person' : c === 'enterprise' || c === 'e' ? 'organisation' : null;
}

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
async function* euCsv(file: string): AsyncIterable<ListItem> {
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
async function* ukCsv(file: string): AsyncIterable<ListItem> {
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
async function* ofacCsv(files: ListFiles): AsyncIterable<ListItem> {
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

const FTM_PEOPLE = new Set(['Person']);
const FTM_ORGANISATIONS = new Set(['Organization', 'Company', 'LegalEntity', 'PublicBody']);

/**
 * OpenSanctions' FollowTheMoney export: a JSON entity per line (`entities.ftm.json`, or `targets.nested.json`
 * whose sanctions are nested). Persons and organisations; other schemata (vessels, addresses, …) are not
 * subjects here.
 */
async function* ftmLines(file: string): AsyncIterable<ListItem> {
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line === 1 ? text.replace(/^\uFEFF/, '') : text);
    } catch {
      yield { line, reason: 'invalid JSON' };
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      yield { line, reason: 'must be a JSON object (an entity)' };
      continue;
    }
    const e = value as { id?: unknown; schema?: unknown; properties?: Record<string, unknown> };
    if (typeof e.id !== 'string' || typeof e.schema !== 'string' || typeof e.properties !== 'object') {
      yield { line, reason: 'an entity has an "id", a "schema" and "properties"' };
      continue;
    }
    const person = FTM_PEOPLE.has(e.schema);
    if (!person && !FTM_ORGANISATIONS.has(e.schema)) {
      yield { line, other: `a ${e.schema} (${e.id})` };
      continue;
    }
    const p = (name: string, from: Record<string, unknown> | undefined = e.properties ?? undefined) =>
      Array.isArray(from?.[name]) ? (from[name] as unknown[]).filter((v): v is string => typeof v === 'string') : [];
    const sanctions = (Array.isArray(e.properties?.['sanctions']) ? e.properties['sanctions'] : []) as {
      properties?: Record<string, unknown>;
    }[];
    const names = distinct(p('name'));
    yield itemOf('opensanctions', line, {
      entry_id: e.id,
      entity_type: person ? 'person' : 'organisation',
      name: names[0] ?? '',
      aliases: distinct([...names.slice(1), ...p('alias'), ...p('previousName')]),
      programmes: distinct([
        ...p('programId'),
        ...p('program'),
        ...sanctions.flatMap((s) => [...p('programId', s.properties), ...p('program', s.properties)]),
      ]),
      birth_years: yearsOf(p('birthDate')),
      countries: countriesOf([...p('nationality'), ...p('citizenship'), ...p('country'), ...p('jurisdiction')]),
    });
  }
}
