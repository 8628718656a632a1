import { z } from 'zod';
import type { SearchPosition } from '@dossier/persistence';

const CURSOR_VERSION = 1;

const cursorShape = z
  .object({
    v: z.literal(CURSOR_VERSION),
    at: z
      .string()
      .regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
      // A real instant Postgres can hold (it refuses 2026-02-30, which Date would roll over to March, and the
      // year 0000, which has no place between 1 BC and AD 1).
      .refine((v) => !v.startsWith('0000'))
      .refine((v) => !Number.isNaN(Date.parse(v)) && new Date(v).toISOString().slice(0, 19) === v.slice(0, 19)),
    id: z.string().regex(/^srch_[0-9A-Za-z]{1,64}$/),
  })
  .strict();

/**
 * `next_cursor`: the last listed search's place in (created_at, id) order, as opaque base64url text. It is
 * a position, not an offset, so searches made meanwhile never shift a page (ADR 0018).
 */
export function encodeCursor(position: SearchPosition): string {
  return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, at: position.at, id: position.id })).toString('base64url');
}

/** The position a cursor holds, or null when it is not one this gateway issued. */
export function decodeCursor(cursor: string): SearchPosition | null {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) return null;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null; // not JSON: not a cursor of ours
  }
  const parsed = cursorShape.safeParse(json);
  return parsed.success ? { at: parsed.data.at, id: parsed.data.id } : null;
}
