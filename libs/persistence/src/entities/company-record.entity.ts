import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, Unique, UpdateDateColumn } from 'typeorm';

/** An imported company (the local index). `*_key` columns hold the normalised values searches compare. */
@Entity({ name: 'companies' })
@Unique('companies_source_external_id_key', ['source', 'externalId'])
@Index('companies_name_trgm_idx', { synchronize: false })
@Index('companies_registration_key_idx', ['registrationKey'])
@Index('companies_domain_key_idx', ['domainKey'])
@Index('companies_lei_idx', ['lei'])
export class CompanyRecordEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  source!: string;

  @Column({ type: 'text', name: 'external_id' })
  externalId!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text', name: 'registration_number', nullable: true })
  registrationNumber!: string | null;

  @Column({ type: 'text', nullable: true })
  jurisdiction!: string | null;

  @Column({ type: 'text', nullable: true })
  country!: string | null;

  @Column({ type: 'text', nullable: true })
  domain!: string | null;

  @Column({ type: 'text', nullable: true })
  status!: string | null;

  @Column({ type: 'date', name: 'incorporated_on', nullable: true })
  incorporatedOn!: string | null;

  @Column({ type: 'text', nullable: true })
  address!: string | null;

  @Column({ type: 'text', nullable: true })
  industry!: string | null;

  @Column({ type: 'text', nullable: true })
  lei!: string | null;

  @Column({ type: 'text', name: 'name_key' })
  nameKey!: string;

  @Column({ type: 'text', name: 'registration_key', nullable: true })
  registrationKey!: string | null;

  @Column({ type: 'text', name: 'domain_key', nullable: true })
  domainKey!: string | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt!: Date;
}
