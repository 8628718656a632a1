import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** One opted-out subject (ADR 0015): its key only as a hash, and a masked hint. */
@Entity({ name: 'suppressions' })
@Check('suppressions_kind_check', "kind IN ('email', 'phone', 'name')")
export class SuppressionEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  kind!: string;

  /** SHA-256 of the normalised key, hex (suppressionKeyHash). */
  @Column({ type: 'text', name: 'key_hash', unique: true })
  keyHash!: string;

  /** A name's SHA-256 in the local index's fold, where it differs from the key's (2040000000000). */
  @Index('suppressions_alias_hash', { where: 'alias_hash IS NOT NULL' })
  @Column({ type: 'text', name: 'alias_hash', nullable: true })
  aliasHash!: string | null;

  @Column({ type: 'text' })
  hint!: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;
}
