import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One name a person goes by (the full name, and each alias), folded, for fuzzy search with pg_trgm. Written
 * with its person, in the same transaction; deleted with it by a trigger (no foreign key: ADR 0074).
 */
@Entity({ name: 'person_names' })
@Index('person_names_trgm_idx', { synchronize: false })
@Index('person_names_words_idx', { synchronize: false })
export class PersonNameEntity {
  @PrimaryColumn({ type: 'text', name: 'person_id', primaryKeyConstraintName: 'person_names_pkey' })
  personId!: string;

  @PrimaryColumn({ type: 'text', name: 'name_key', primaryKeyConstraintName: 'person_names_pkey' })
  nameKey!: string;

  @Column({ type: 'boolean', name: 'is_alias' })
  isAlias!: boolean;
}
