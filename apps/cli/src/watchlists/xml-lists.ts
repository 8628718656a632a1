import type { Watchlist } from '@dossier/domain';
import { FileShapeError } from '../import/readers';
import { countriesOf, distinct, euType, itemOf, yearsOf, type Built, type ListItem } from './entries';
import { all, child, textAt, textsAt, xmlRecords, type XmlNode, type XmlRecord } from './xml';

/** The lists published as XML: OFAC's sdn.xml, the UN's consolidated list, the EU's FSF XML. */

export async function* fromXml(
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
export function ofacXmlEntry(e: XmlNode): Built {
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
export function unEntry(e: XmlNode): Built {
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
export function euXmlEntry(e: XmlNode): Built {
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
