import { z } from 'zod';
import type { CompanyParent, CompanyParents } from '@dossier/contracts';
import { expectJson, type UpstreamResponse } from '../http';

/**
 * GLEIF's Level 2 data (ADR 0066): who consolidates an LEI's entity — its direct and its ultimate
 * accounting parent, from `GET /lei-records/{lei}/direct-parent` and `/ultimate-parent` (the parent's LEI
 * record), or from the golden copy's relationship records (`IS_DIRECTLY_CONSOLIDATED_BY`,
 * `IS_ULTIMATELY_CONSOLIDATED_BY`). None reported (a reporting exception, or none at all: the API's 404) is
 * null. Each parent's source is the relationship's key: `<child LEI>>` + type + `><parent LEI>`.
 */

const ID = 'gleif';

export const RELATIONSHIP_TYPES = {
  direct: 'IS_DIRECTLY_CONSOLIDATED_BY',
  ultimate: 'IS_ULTIMATELY_CONSOLIDATED_BY',
} as const;
export type ParentLevel = keyof typeof RELATIONSHIP_TYPES;

/** The parent's LEI record, as `direct-parent` and `ultimate-parent` answer it. */
const parentRecordSchema = z.object({
  data: z.object({
    attributes: z.object({
      lei: z.string().regex(/^[A-Z0-9]{20}$/),
      entity: z.object({ legalName: z.object({ name: z.string() }).nullish() }),
    }),
  }),
});

/** GLEIF's 404 for an LEI with no such parent reported (JSON:API errors). */
const errorsSchema = z.object({ errors: z.array(z.unknown()).min(1) });

/** The relationship's key, as the API's parent and the golden copy's record both name it. */
export function relationshipKey(child: string, level: ParentLevel, parent: string): string {
  return `${child}>${RELATIONSHIP_TYPES[level]}>${parent}`;
}

export function parentOf(child: string, level: ParentLevel, lei: string, name: string | null): CompanyParent {
  return { lei, name, source: { provider: ID, record_id: relationshipKey(child, level, lei) } };
}

/**
 * The entity's parents from the API, each call through `guard` (the shared rate limit): null (not known) when either call fails — a parent that is not
 * shown because its call failed must not read as "none reported".
 */
export async function parentsFromApi(
  lei: string,
  get: (path: string, signal?: AbortSignal) => Promise<UpstreamResponse>,
  guard: <T>(call: (signal?: AbortSignal) => Promise<T>) => Promise<T> = (call) => call(),
): Promise<CompanyParents | null> {
  const one = (level: ParentLevel): Promise<CompanyParent | null> =>
    guard(async (signal) => {
      const res = await get(`/lei-records/${lei}/${level}-parent`, signal);
      const found = expectJson(ID, res, parentRecordSchema, { notFound: { status: [404], body: errorsSchema } });
      if (!found) return null;
      const { attributes } = found.data;
      return parentOf(lei, level, attributes.lei, attributes.entity.legalName?.name.trim() || null);
    });
  // Both settled before answering: no call outlives the lookup.
  const [direct, ultimate] = await Promise.allSettled([one('direct'), one('ultimate')]);
  return direct.status === 'fulfilled' && ultimate.status === 'fulfilled'
    ? { direct: direct.value, ultimate: ultimate.value }
    : null;
}
