import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Watchlist } from '@dossier/domain';
import { FileShapeError } from '../import/readers';
import { euCsv, ofacCsv, ukCsv } from './csv-lists';
import { countriesOf, distinct, itemOf, yearsOf, type ListFiles, type ListItem } from './entries';
import { euXmlEntry, fromXml, ofacXmlEntry, unEntry } from './xml-lists';

export type { ListFiles, ListItem } from './entries';

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
