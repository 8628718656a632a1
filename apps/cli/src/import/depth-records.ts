import { registrationKey, subjectId, type ControllerRow, type ParentRow } from '@dossier/domain';
import {
  RELATIONSHIP_TYPES,
  companyNumberOf,
  controllerOf,
  isPscKind,
  pscSchema,
  pscSnapshotLineSchema,
  relationshipKey,
  type ParentLevel,
} from '@dossier/providers';
import { RR_COLUMNS } from './readers';

/**
 * A line of a company-depth file (ADR 0066) as the row its table stores; `skip` for a line the file holds
 * that is no such fact (a PSC statement, the snapshot's totals line, an inactive relationship or one of
 * another type); or why it is rejected.
 */
export type DepthChecked<R> = { row: R } | { skip: string } | { reason: string };

const LEI = /^[A-Z0-9]{20}$/;

/** A line of Companies House's PSC snapshot: `{"company_number": "…", "data": {…the API's PSC fields…}}`. */
export function controllerRowOf(fields: Record<string, unknown>, source: string): DepthChecked<ControllerRow> {
  const line = pscSnapshotLineSchema.safeParse(fields);
  if (!line.success) return { reason: 'not a PSC snapshot line: expected {"company_number": …, "data": {…}}' };
  if (!isPscKind(line.data.data['kind'])) return { skip: 'not a person with significant control' };
  const psc = pscSchema.safeParse(line.data.data);
  if (!psc.success) {
    const issue = psc.error.issues[0]!;
    return { reason: `data.${issue.path.join('.')}: ${issue.message}` };
  }
  const number = companyNumberOf(line.data.company_number);
  if (!number) return { reason: `company_number: "${line.data.company_number}" is not a company number` };
  const fact = controllerOf(number, psc.data, 0);
  // The record's own link is its key; a line without one is keyed by its company and name.
  const externalId =
    psc.data.links?.self?.trim() || `/company/${number}/persons-with-significant-control#${fact.name ?? ''}`;
  return {
    row: {
      id: subjectId('company', source, externalId),
      source,
      external_id: externalId,
      company_number: number,
      registration_key: registrationKey(number, 'GB'),
      name: fact.name,
      kind: fact.kind,
      natures_of_control: fact.natures_of_control,
      notified_on: fact.notified_on,
      ceased_on: fact.ceased_on,
    },
  };
}

const LEVEL_OF: Record<string, ParentLevel> = {
  [RELATIONSHIP_TYPES.direct]: 'direct',
  [RELATIONSHIP_TYPES.ultimate]: 'ultimate',
};

/** A row of GLEIF's relationship record golden copy (RR-CDF CSV): an active accounting consolidation. */
export function parentRowOf(fields: Record<string, unknown>, source: string): DepthChecked<ParentRow> {
  const cell = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string).trim() : '');
  const level = LEVEL_OF[cell(RR_COLUMNS.type)];
  if (!level) return { skip: 'not an accounting consolidation' };
  const status = cell(RR_COLUMNS.status);
  if (status !== '' && status !== 'ACTIVE') return { skip: 'not an active relationship' };
  const [child, parent] = [cell(RR_COLUMNS.start), cell(RR_COLUMNS.end)];
  if (!LEI.test(child)) return { reason: `${RR_COLUMNS.start}: "${child}" is not an LEI` };
  if (!LEI.test(parent)) return { reason: `${RR_COLUMNS.end}: "${parent}" is not an LEI` };
  const externalId = relationshipKey(child, level, parent);
  return {
    row: {
      id: subjectId('company', source, externalId),
      source,
      external_id: externalId,
      child_lei: child,
      level,
      parent_lei: parent,
    },
  };
}
