import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { ApiKeyMode } from '@dossier/domain';
import { AccountEntity } from './account.entity';

@Entity({ name: 'api_keys' })
@Check('api_keys_mode_check', "mode IN ('live', 'test')")
/** An account's live keys, and its most recently revoked, are each one range (ADR 0042). */
@Index('api_keys_account_revoked_idx', ['accountId', 'revokedAt'])
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text', name: 'account_id' })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'api_keys_account_id_fkey' })
  account?: AccountEntity;

  /** The first characters of the key (`dsk_AbCd`), safe to show. */
  @Column({ type: 'text' })
  prefix!: string;

  /** SHA-256 of the full key, hex. The plain key is never stored. */
  @Column({ type: 'text', name: 'key_hash', unique: true })
  keyHash!: string;

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  /** `live`, or `test`: a sandbox key whose lookups are free and answered from synthetic data (ADR 0021). */
  @Column({ type: 'text', default: 'live' })
  mode!: ApiKeyMode;

  /** Issued by `POST /v1/auth/login`: only the account's 20 most recently used of these stay live (ADR 0036). */
  @Column({ type: 'boolean', name: 'issued_by_login', default: false })
  issuedByLogin!: boolean;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;

  @Column({ type: 'timestamptz', name: 'last_used_at', nullable: true })
  lastUsedAt!: Date | null;

  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;
}
