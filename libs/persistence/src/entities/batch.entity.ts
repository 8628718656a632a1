import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { BatchItemRef } from '@dossier/contracts';
import { AccountEntity } from './account.entity';

/** A `POST /v1/batch` (ADR 0019): its items in request order. The searches it started carry its id. */
@Entity({ name: 'batches' })
@Index('batches_idempotency_idx', ['accountId', 'idempotencyKey'], {
  unique: true,
  where: 'idempotency_key IS NOT NULL',
})
/** The batches the retention pass still has to erase a request hash or key from (migration 1820…). */
@Index('batches_retained_idx', ['createdAt'], { where: 'request_hash IS NOT NULL OR idempotency_key IS NOT NULL' })
/** The batches not yet completed, for the reconciler (migration 1820…). */
@Index('batches_open_idx', ['createdAt'], { where: 'completed_at IS NULL' })
export class BatchEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text', name: 'account_id' })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'batches_account_id_fkey' })
  account?: AccountEntity;

  @Column({ type: 'text', name: 'key_id' })
  keyId!: string;

  @Column({ type: 'jsonb' })
  items!: BatchItemRef[];

  @Column({ type: 'text', name: 'idempotency_key', nullable: true })
  idempotencyKey!: string | null;

  @Column({ type: 'text', name: 'request_hash', nullable: true })
  requestHash!: string | null;

  @Column({ type: 'text', name: 'request_id' })
  requestId!: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;

  /** When its last search settled (set by the worker that saw it, or at creation when it started none). */
  @Column({ type: 'timestamptz', name: 'completed_at', nullable: true })
  completedAt!: Date | null;
}
