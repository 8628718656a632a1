import {
  COMPANY_SOURCED_FIELDS,
  type CompanyResultItem,
  type CompanySourcedField,
  type FactSource,
  type FieldSources,
} from '@dossier/contracts';
import { unionBy, type Ranked } from './merge-fields';

type SourcedValues = Pick<CompanyResultItem, CompanySourcedField>;

/** A value a record gives (null and '' give none: the record does not know the field). */
const hasValue = (v: string | null): v is string => v !== null && v !== '';

const keyOf = (s: FactSource): string => `${s.provider}\u0000${s.record_id}`;

/**
 * `field_sources` of one upstream record's item (ADR 0068): each field it gives a value, credited to `source`
 * (the provider and the record's id or link).
 */
export function sourcedBy(item: SourcedValues, source: FactSource): FieldSources {
  const sources: FieldSources = {};
  for (const field of COMPANY_SOURCED_FIELDS) if (hasValue(item[field])) sources[field] = [source];
  return sources;
}

/**
 * `field_sources` of an item merged from `ranked` (precedence order) that shows `merged`'s values (ADR 0068): for
 * each field with a value, every record whose item gave exactly that value — the one it was taken from first
 * (firstKnown takes the highest precedence that knows the field, so the first that gave the value shown), then
 * the others in precedence order, each record once; none that gave another value.
 */
export function mergedFieldSources(ranked: Ranked<CompanyResultItem>, merged: SourcedValues): FieldSources {
  const sources: FieldSources = {};
  for (const field of COMPANY_SOURCED_FIELDS) {
    const shown = merged[field];
    if (!hasValue(shown)) continue;
    const agreeing = ranked.filter(({ item }) => item[field] === shown);
    const list = unionBy(
      agreeing.map(({ item }) => item.field_sources[field] ?? []),
      keyOf,
    );
    if (list.length > 0) sources[field] = list;
  }
  return sources;
}

/** `field_sources` with every record credited to `provider` instead (the sandbox answers the local search's items). */
export function creditedTo(sources: FieldSources, provider: string): FieldSources {
  return Object.fromEntries(
    Object.entries(sources).map(([field, list]) => [field, list.map((s) => ({ ...s, provider }))]),
  ) as FieldSources;
}
