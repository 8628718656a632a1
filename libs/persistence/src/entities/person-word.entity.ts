import { Entity, Index, PrimaryColumn } from 'typeorm';

/** A word of some searchable person name (ADR 0070): what a searched word that no name holds is widened to. */
@Entity({ name: 'person_words' })
@Index('person_words_trgm_idx', { synchronize: false })
export class PersonWordEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'person_words_pkey' })
  word!: string;
}
