import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { PersonRecordEntity } from './person-record.entity';

/** One name a person goes by (the full name, and each alias), folded, for fuzzy search with pg_trgm. */
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

  @ManyToOne(() => PersonRecordEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'person_id', foreignKeyConstraintName: 'person_names_person_id_fkey' })
  person?: PersonRecordEntity;
}
