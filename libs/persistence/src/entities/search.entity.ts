import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import type { LookupKind, SearchStatus } from '@dossier/domain';
import type { SearchProgress, SourceReport } from '@dossier/contracts';

/** One lookup: its input, outcome and charge. Also the audit trail (account, key, request id, purpose, time). */
@Entity({ name: 'searches' })
@Index('searches_idempotency_idx', ['accountId', 'idempotencyKey'], {
  unique: true,
  where: 'idempotency_key IS NOT NULL',
})
@Index('searches_pending_idx', ['createdAt'], { where: "status = 'pending'" })
// Keyset pages in (created_at, id) order: one account's history, and everyone's for the audit export.
@Index('searches_account_created_idx', ['accountId', 'createdAt', 'id'])
@Index('searches_created_idx', ['createdAt', 'id'])
// The searches whose input is still kept, oldest first: what the retention purge reads (ADR 0016).
@Index('searches_retained_idx', ['createdAt'], { where: 'input IS NOT NULL' })
@Index('searches_batch_idx', ['batchId'], { where: 'batch_id IS NOT NULL' })
@Check('searches_kind_check', "kind IN ('person', 'company', 'email', 'phone')")
@Check('searches_status_check', "status IN ('pending', 'succeeded', 'failed')")
@Check('searches_cost_check', 'cost >= 0')
@Check('searches_result_total_check', 'result_total >= 0')
export class SearchEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text', name: 'account_id' })
  accountId!: string;

  @Column({ type: 'text', name: 'key_id' })
  keyId!: string;

  @Column({ type: 'text' })
  kind!: LookupKind;

  @Column({ type: 'jsonb', nullable: true })
  input!: Record<string, unknown> | null;

  @Column({ type: 'text', default: 'pending' })
  status!: SearchStatus;

  @Column({ type: 'integer' })
  cost!: number;

  /** null while pending; true when captured, false when released. */
  @Column({ type: 'boolean', nullable: true })
  charged!: boolean | null;

  /** `json`, not `jsonb`: keeps the key order providers produced. */
  @Column({ type: 'json', nullable: true })
  results!: unknown[] | null;

  /** How many results it settled with (null while pending or when failed); kept when `results` is purged. */
  @Column({ type: 'integer', name: 'result_count', nullable: true })
  resultCount!: number | null;

  /** Person searches: how many items passed `min_score` before `limit` cut them (ADR 0047); else null. */
  @Column({ type: 'integer', name: 'result_total', nullable: true })
  resultTotal!: number | null;

  @Column({ type: 'json', nullable: true })
  sources!: SourceReport[] | null;

  /** What it has found so far while pending (ADR 0049); null once settled. */
  @Column({ type: 'json', nullable: true })
  progress!: SearchProgress | null;

  @Column({ type: 'jsonb', nullable: true })
  error!: { code: string; message: string } | null;

  @Column({ type: 'text', name: 'idempotency_key', nullable: true })
  idempotencyKey!: string | null;

  @Column({ type: 'text', name: 'request_hash', nullable: true })
  requestHash!: string | null;

  @Column({ type: 'text', name: 'request_id' })
  requestId!: string;

  @Column({ type: 'text', name: 'permissible_purpose', nullable: true })
  permissiblePurpose!: string | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;

  @Column({ type: 'timestamptz', name: 'completed_at', nullable: true })
  completedAt!: Date | null;

  /** The batch that started this search (ADR 0019), if any. */
  @Column({ type: 'text', name: 'batch_id', nullable: true })
  batchId!: string | null;
}
