import type { DataSource } from 'typeorm';
import { Coalescer, newId, suppressionKeyHash, type SuppressionKind, type SuppressionSubject } from '@dossier/domain';
import { queryRows } from './sql';

export interface SuppressionRow {
  id: string;
  kind: SuppressionKind;
  hint: string;
  created_at: Date;
}

/** Concurrent checks of one process share a statement: at most this many per statement… */
const CHECK_BATCH_MAX = 100;
/** …and this many statements at once; checks made meanwhile wait and go together when one returns. */
const CHECK_BATCHES_IN_FLIGHT = 2;

/**
 * The suppression list (ADR 0015). Subjects are stored and looked up by the hash of their normalised
 * key; `matching` answers a lookup's candidate keys with one indexed query, which the checks of other
 * lookups made at the same time share.
 */
export class SuppressionsRepository {
  /** The checks made while others run go together: the same Coalescer as reservations and settles. */
  private readonly checks = new Coalescer<readonly string[], Set<string>>(
    (keySets) => this.matchingAll(keySets),
    CHECK_BATCH_MAX,
    CHECK_BATCHES_IN_FLIGHT,
  );

  constructor(private readonly db: DataSource) {}

  /** Adds the subject; adding one that is listed already changes nothing and returns its entry. */
  async add(subject: SuppressionSubject): Promise<{ entry: SuppressionRow; created: boolean }> {
    // A concurrent add of the same subject commits between this statement's snapshot and its insert:
    // the insert does nothing and the select cannot see that row yet, so the second try finds it.
    for (;;) {
      const found = await this.insertOrFind(subject);
      if (found) return found;
    }
  }

  private async insertOrFind(subject: SuppressionSubject): Promise<{ entry: SuppressionRow; created: boolean } | null> {
    const rows = await queryRows<SuppressionRow & { created: boolean }>(
      this.db,
      `WITH ins AS (
         INSERT INTO suppressions (id, kind, key_hash, alias_hash, hint) VALUES ($1, $2, $3, $5, $4)
         ON CONFLICT (key_hash) DO NOTHING
         RETURNING id, kind, hint, created_at
       )
       SELECT id, kind, hint, created_at, true AS created FROM ins
       UNION ALL
       SELECT id, kind, hint, created_at, false AS created FROM suppressions
       WHERE key_hash = $3 AND NOT EXISTS (SELECT 1 FROM ins)`,
      [
        newId.suppression(),
        subject.kind,
        suppressionKeyHash(subject.key),
        subject.hint,
        subject.alias === undefined ? null : suppressionKeyHash(subject.alias),
      ],
    );
    if (!rows[0]) return null;
    const { created, ...entry } = rows[0];
    return { entry, created };
  }

  /** Removes the entry with this id; null when there is none. */
  async removeById(id: string): Promise<SuppressionRow | null> {
    const rows = await queryRows<SuppressionRow>(
      this.db,
      `DELETE FROM suppressions WHERE id = $1 RETURNING id, kind, hint, created_at`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Removes the subject's entry; null when it is not listed. */
  async remove(subject: SuppressionSubject): Promise<SuppressionRow | null> {
    const rows = await queryRows<SuppressionRow>(
      this.db,
      `DELETE FROM suppressions WHERE key_hash = $1 RETURNING id, kind, hint, created_at`,
      [suppressionKeyHash(subject.key)],
    );
    return rows[0] ?? null;
  }

  /** Every entry, oldest first. */
  list(): Promise<SuppressionRow[]> {
    return queryRows<SuppressionRow>(
      this.db,
      `SELECT id, kind, hint, created_at FROM suppressions ORDER BY created_at, id`,
    );
  }

  /**
   * Which of these keys are suppressed. The answer comes from a statement that started after this call
   * (a call never joins one already running), so every entry committed before it is seen. Idle, it runs
   * at once; while two checks run, the calls made meanwhile go together in the next statement.
   */
  async matching(keys: readonly string[]): Promise<Set<string>> {
    return keys.length === 0 ? new Set() : this.checks.submit(keys);
  }

  /**
   * Many checks' keys in one query on the key and alias indexes; each check gets back its own listed keys
   * (a key is listed when an entry's key or alias is it).
   */
  private async matchingAll(keySets: readonly (readonly string[])[]): Promise<Set<string>[]> {
    const byHash = new Map(keySets.flat().map((k) => [suppressionKeyHash(k), k]));
    const rows = await queryRows<{ key_hash: string; alias_hash: string | null }>(
      this.db,
      `SELECT key_hash, alias_hash FROM suppressions
       WHERE key_hash = ANY($1::text[]) OR alias_hash = ANY($1::text[])`,
      [[...byHash.keys()]],
    );
    const listed = new Set(
      rows.flatMap((r) => [byHash.get(r.key_hash), r.alias_hash === null ? undefined : byHash.get(r.alias_hash)]),
    );
    return keySets.map((keys) => new Set(keys.filter((k) => listed.has(k))));
  }
}
