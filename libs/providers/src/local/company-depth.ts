import { registerOf, registrationKey, type LocalIndex, type ParentFound } from '@dossier/domain';
import type { CompanyParent, CompanyResultItem, Controller, ControllerKind } from '@dossier/contracts';
import { CONTROLLER_KINDS } from '@dossier/contracts';
import { controllersOf } from '../companies-house/company-people';

const ID = 'local';

/** The UK registration key of an item the index holds (a GB company's number), else null. */
function ukKeyOf(item: CompanyResultItem): string | null {
  if (!item.registration_number || registerOf(item.jurisdiction ?? item.country ?? '') !== 'GB') return null;
  return registrationKey(item.registration_number, 'GB') || null;
}

function parentFrom(row: ParentFound | undefined): CompanyParent | null {
  return row
    ? { lei: row.parent_lei, name: row.parent_name, source: { provider: ID, record_id: row.external_id } }
    : null;
}

/**
 * The index's company items with the controllers (Companies House's PSC snapshot) and parents (GLEIF's
 * relationship records) the operator imported for them (ADR 0066): set only where some were imported for
 * the company — with none, the index does not know, and says null; each fact's record id the upstream's.
 */
export async function withImportedDepth(
  index: LocalIndex,
  items: CompanyResultItem[],
  leis: ReadonlyMap<string, string>,
): Promise<CompanyResultItem[]> {
  if (!index.companyDepthOf || items.length === 0) return items;
  const keys = [...new Set(items.map(ukKeyOf).filter((k): k is string => k !== null))];
  const { controllers, parents } = await index.companyDepthOf(keys, [...new Set(leis.values())]);
  return items.map((item) => {
    const key = ukKeyOf(item);
    const mine = key === null ? [] : controllers.filter((c) => c.registration_key === key);
    const lei = leis.get(item.id);
    const up = lei === undefined ? [] : parents.filter((p) => p.child_lei === lei);
    return {
      ...item,
      controllers:
        mine.length === 0
          ? item.controllers
          : controllersOf(
              mine.map((c): Controller => ({
                name: c.name,
                kind: (CONTROLLER_KINDS as readonly string[]).includes(c.kind) ? (c.kind as ControllerKind) : 'other',
                natures_of_control: c.natures_of_control,
                notified_on: c.notified_on,
                ceased_on: c.ceased_on,
                source: { provider: ID, record_id: c.external_id },
              })),
            ),
      parents:
        up.length === 0
          ? item.parents
          : {
              direct: parentFrom(up.find((p) => p.level === 'direct')),
              ultimate: parentFrom(up.find((p) => p.level === 'ultimate')),
            },
    };
  });
}
