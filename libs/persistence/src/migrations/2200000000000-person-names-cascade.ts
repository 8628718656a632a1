import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * person_names without a foreign key to people (ADR 0074). The key's check ran for every name an import
 * wrote: a lookup and a row lock on its person, 22% of Postgres's work in an import. Names are written only
 * by the importer, for the people the same transaction wrote (local-index.writer), so what the check caught
 * cannot happen. What the key did besides — a person deleted takes its names with it — a statement-level
 * trigger does, once per DELETE and at no cost to an insert.
 */
export class PersonNamesCascade2200000000000 implements MigrationInterface {
  name = 'PersonNamesCascade2200000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE person_names DROP CONSTRAINT person_names_person_id_fkey`);
    await q.query(`
      CREATE FUNCTION person_names_cascade() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM person_names n USING gone g WHERE n.person_id = g.id;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER person_names_cascade AFTER DELETE ON people
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION person_names_cascade()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER person_names_cascade ON people`);
    await q.query(`DROP FUNCTION person_names_cascade()`);
    await q.query(`DELETE FROM person_names n WHERE NOT EXISTS (SELECT 1 FROM people p WHERE p.id = n.person_id)`);
    await q.query(`
      ALTER TABLE person_names ADD CONSTRAINT person_names_person_id_fkey
        FOREIGN KEY (person_id) REFERENCES people(id) ON DELETE CASCADE`);
  }
}
