import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn, Unique, UpdateDateColumn } from 'typeorm';

import type { RecordLocation } from '@dossier/domain';

/** An imported person (the local index). `*_keys` hold the normalised values searches compare. */
@Entity({ name: 'people' })
@Unique('people_source_external_id_key', ['source', 'externalId'])
@Check('people_birth_year_check', 'birth_year BETWEEN 1800 AND 2200')
// GIN indexes, which TypeORM cannot describe: created by the migration, left alone by the schema builder.
@Index('people_email_keys_idx', { synchronize: false })
@Index('people_phone_keys_idx', { synchronize: false })
@Index('people_username_keys_idx', { synchronize: false })
export class PersonRecordEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  source!: string;

  @Column({ type: 'text', name: 'external_id' })
  externalId!: string;

  @Column({ type: 'text', name: 'full_name' })
  fullName!: string;

  @Column({ type: 'text', name: 'first_name', nullable: true })
  firstName!: string | null;

  @Column({ type: 'text', name: 'last_name', nullable: true })
  lastName!: string | null;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  aliases!: string[];

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  emails!: string[];

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  phones!: string[];

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  usernames!: string[];

  @Column({ type: 'jsonb', default: () => "'[]'" })
  locations!: RecordLocation[];

  @Column({ type: 'integer', name: 'birth_year', nullable: true })
  birthYear!: number | null;

  @Column({ type: 'text', name: 'email_keys', array: true, default: () => "'{}'" })
  emailKeys!: string[];

  @Column({ type: 'text', name: 'phone_keys', array: true, default: () => "'{}'" })
  phoneKeys!: string[];

  @Column({ type: 'text', name: 'username_keys', array: true, default: () => "'{}'" })
  usernameKeys!: string[];

  @Column({ type: 'text', name: 'location_keys', array: true, default: () => "'{}'" })
  locationKeys!: string[];

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt!: Date;
}
