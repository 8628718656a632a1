import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Characters JavaScript's `trim()` removes (its WhiteSpace and LineTerminator), as a bracket expression:
 * Postgres's `\s` and `btrim` know other sets.
 */
const JS_SPACE = '[\\u0009-\\u000d\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]';

/**
 * The local person index's username keys as imports now write them (normalizeUsername): the handle
 * was trimmed before its leading `@` was dropped, so a record's `@ ghopper` was keyed ` ghopper` and a
 * search for `ghopper` did not find it. Now the space after the `@` goes too. Only such keys change
 * (a key that starts with a space comes from nothing else: the handle had been trimmed), each as the
 * new rule keys it — the same key without its leading space, its case already folded — and a row that
 * then holds one key twice keeps it once, in the first place. Not undone by `down`: the old keys found
 * nothing the new ones do not.
 */
export class UsernameKeysAfterAt1850000000000 implements MigrationInterface {
  name = 'UsernameKeysAfterAt1850000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE people p
         SET username_keys = ARRAY(
               SELECT k.key
                 FROM (SELECT regexp_replace(u.key, '^${JS_SPACE}+', '') AS key, min(u.n) AS n
                         FROM unnest(p.username_keys) WITH ORDINALITY AS u(key, n)
                        GROUP BY 1) k
                ORDER BY k.n)
       WHERE EXISTS (SELECT 1 FROM unnest(p.username_keys) AS u(key) WHERE u.key ~ '^${JS_SPACE}')`);
  }

  async down(): Promise<void> {
    // The old keys are not kept; the new ones find every record the old ones did.
  }
}
