import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, Unique, UpdateDateColumn } from 'typeorm';

/** A person with significant control imported from Companies House's PSC snapshot (ADR 0066). */
@Entity({ name: 'company_controllers' })
@Unique('company_controllers_source_external_id_key', ['source', 'externalId'])
@Index('company_controllers_registration_key_idx', ['registrationKey'])
export class CompanyControllerEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  source!: string;

  @Column({ type: 'text', name: 'external_id' })
  externalId!: string;

  @Column({ type: 'text', name: 'company_number' })
  companyNumber!: string;

  @Column({ type: 'text', name: 'registration_key' })
  registrationKey!: string;

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  @Column({ type: 'text' })
  kind!: string;

  @Column({ type: 'text', array: true, name: 'natures_of_control' })
  naturesOfControl!: string[];

  @Column({ type: 'date', name: 'notified_on', nullable: true })
  notifiedOn!: string | null;

  @Column({ type: 'date', name: 'ceased_on', nullable: true })
  ceasedOn!: string | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt!: Date;
}

/** An accounting parent imported from GLEIF's relationship records (ADR 0066). */
@Entity({ name: 'company_parents' })
@Unique('company_parents_source_external_id_key', ['source', 'externalId'])
@Index('company_parents_child_lei_idx', ['childLei'])
export class CompanyParentEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  source!: string;

  @Column({ type: 'text', name: 'external_id' })
  externalId!: string;

  @Column({ type: 'text', name: 'child_lei' })
  childLei!: string;

  @Column({ type: 'text' })
  level!: string;

  @Column({ type: 'text', name: 'parent_lei' })
  parentLei!: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt!: Date;
}
