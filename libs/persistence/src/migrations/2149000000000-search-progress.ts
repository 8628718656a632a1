import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a pending search has found so far (ADR 0049): written by the worker while a username search's sites
 * answer, cleared when the search settles (its answer replaces it). `json`, as `results`: the key order kept.
 */
export class SearchProgress2149000000000 implements MigrationInterface {
  name = 'SearchProgress2149000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE searches ADD COLUMN progress json`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE searches DROP COLUMN progress`);
  }
}
