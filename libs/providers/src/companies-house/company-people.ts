import { z } from 'zod';
import {
  MAX_CONTROLLERS,
  MAX_OFFICERS,
  type Controller,
  type ControllerKind,
  type FactSource,
  type Officer,
} from '@dossier/contracts';
import { isoDate } from '../company-item';

/**
 * Companies House's officers (`GET /company/{number}/officers`) and persons with significant control
 * (`GET /company/{number}/persons-with-significant-control`, and each line's `data` of its PSC bulk snapshot)
 * as a company item's `officers` and `controllers` (ADR 0066): a birth month and year as the register shows
 * them, never a full date; the serving ones first, at most MAX_OFFICERS / MAX_CONTROLLERS; each with its
 * record's link as its source.
 */

const ID = 'companies-house';

const dateOfBirth = z.object({ month: z.number().int().nullish(), year: z.number().int().nullish() }).nullish();

const officerSchema = z.object({
  name: z.string(),
  officer_role: z.string().nullish(),
  appointed_on: z.string().nullish(),
  resigned_on: z.string().nullish(),
  nationality: z.string().nullish(),
  country_of_residence: z.string().nullish(),
  date_of_birth: dateOfBirth,
  links: z
    .object({ self: z.string().nullish(), officer: z.object({ appointments: z.string().nullish() }).nullish() })
    .nullish(),
});

/** The officer list's parts Dossier reads: `items` is absent when there are none. */
export const officerListSchema = z.object({ items: z.array(officerSchema).nullish() });

/** One person with significant control, as the API lists them and as each line of the bulk snapshot holds one. */
export const pscSchema = z.object({
  kind: z.string(),
  name: z.string().nullish(),
  name_elements: z
    .object({ title: z.string().nullish(), forename: z.string().nullish(), surname: z.string().nullish() })
    .nullish(),
  natures_of_control: z.array(z.string()).nullish(),
  notified_on: z.string().nullish(),
  ceased_on: z.string().nullish(),
  links: z.object({ self: z.string().nullish() }).nullish(),
});
export type PscRecord = z.output<typeof pscSchema>;

/** A person's or an entity's kind (not a statement's, nor a snapshot's totals line). */
const PSC_KIND = /-(person-with-significant-control|beneficial-owner)$/;

/** The PSC list's parts Dossier reads: `items` is absent when there are none; every item a person or entity. */
export const pscListSchema = z.object({
  items: z.array(pscSchema.extend({ kind: z.string().regex(PSC_KIND) })).nullish(),
});

/** A line of the PSC bulk snapshot: `{"company_number": …, "data": {…}}` (its `totals#persons-of-significant-control-snapshot` line has no `data.kind` a person has). */
export const pscSnapshotLineSchema = z.object({ company_number: z.string(), data: z.record(z.string(), z.unknown()) });

function source(recordId: string | null | undefined, fallback: string): FactSource {
  return { provider: ID, record_id: recordId?.trim() || fallback };
}

function month(value: number | null | undefined): number | null {
  return value !== null && value !== undefined && value >= 1 && value <= 12 ? value : null;
}

/** The serving ones (no end date) first, then the latest started; at most `max`. */
function servingFirst<T>(
  facts: T[],
  ended: (f: T) => string | null,
  started: (f: T) => string | null,
  max: number,
): T[] {
  return facts
    .map((fact, i) => ({ fact, i }))
    .sort(
      (a, b) =>
        Number(ended(a.fact) !== null) - Number(ended(b.fact) !== null) ||
        (started(b.fact) ?? '').localeCompare(started(a.fact) ?? '') ||
        a.i - b.i,
    )
    .slice(0, max)
    .map(({ fact }) => fact);
}

export function officersOf(number: string, list: z.output<typeof officerListSchema>): Officer[] {
  const officers = (list.items ?? []).map((o, i): Officer => ({
    name: o.name.trim(),
    role: o.officer_role?.trim() || null,
    appointed_on: isoDate(o.appointed_on),
    resigned_on: isoDate(o.resigned_on),
    nationality: o.nationality?.trim() || null,
    country_of_residence: o.country_of_residence?.trim() || null,
    birth_year: o.date_of_birth?.year ?? null,
    birth_month: month(o.date_of_birth?.month),
    source: source(o.links?.self ?? o.links?.officer?.appointments, `/company/${number}/officers#${i}`),
  }));
  return servingFirst(
    officers,
    (o) => o.resigned_on,
    (o) => o.appointed_on,
    MAX_OFFICERS,
  );
}

/** The register's `kind` (`individual-person-with-significant-control`, `corporate-entity-beneficial-owner`…). */
export function controllerKindOf(kind: string): ControllerKind {
  if (kind.startsWith('individual-')) return 'individual';
  if (kind.startsWith('corporate-entity-')) return 'corporate';
  if (kind.startsWith('legal-person-')) return 'legal_person';
  return 'other';
}

/** A PSC's name: as written, else from its name elements; null where the register withholds it. */
function pscName(psc: PscRecord): string | null {
  const written = psc.name?.trim();
  if (written) return written;
  const e = psc.name_elements;
  const joined = [e?.title, e?.forename, e?.surname]
    .map((p) => p?.trim())
    .filter(Boolean)
    .join(' ');
  return joined || null;
}

export function controllerOf(number: string, psc: PscRecord, index: number): Controller {
  return {
    name: pscName(psc),
    kind: controllerKindOf(psc.kind),
    natures_of_control: psc.natures_of_control ?? [],
    notified_on: isoDate(psc.notified_on),
    ceased_on: isoDate(psc.ceased_on),
    source: source(psc.links?.self, `/company/${number}/persons-with-significant-control#${index}`),
  };
}

/** The controllers of one company, current ones first, at most MAX_CONTROLLERS. */
export function controllersOf(controllers: Controller[]): Controller[] {
  return servingFirst(
    controllers,
    (c) => c.ceased_on,
    (c) => c.notified_on,
    MAX_CONTROLLERS,
  );
}

/** Whether a PSC record is a person or entity (not a statement or a snapshot's totals line). */
export function isPscKind(kind: unknown): boolean {
  return typeof kind === 'string' && PSC_KIND.test(kind);
}
