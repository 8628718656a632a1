import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Index()
  @Column({ type: 'text', name: 'account_id' })
  accountId!: string;

  /** The first characters of the key (`dsk_AbCd`), safe to show. */
  @Column({ type: 'text' })
  prefix!: string;

  /** SHA-256 of the full key, hex. The plain key is never stored. */
  @Column({ type: 'text', name: 'key_hash', unique: true })
  keyHash!: string;

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;

  @Column({ type: 'timestamptz', name: 'last_used_at', nullable: true })
  lastUsedAt!: Date | null;

  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;
}
