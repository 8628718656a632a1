import { Check, Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

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

  @Column({ type: 'text' })
  hint!: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;
}
