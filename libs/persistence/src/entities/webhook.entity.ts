import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  PrimaryGeneratedColumn,
} from 'typeorm';
import type { ApiKeyMode } from '@dossier/domain';
import { AccountEntity } from './account.entity';

/** An account's webhook endpoint (ADR 0020): its signing secret only encrypted (`secret_sealed`). */
@Entity({ name: 'webhooks' })
@Check('webhooks_mode_check', "mode IN ('live', 'test')")
@Index('webhooks_account_idx', ['accountId'])
export class WebhookEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text', name: 'account_id' })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'webhooks_account_id_fkey' })
  account?: AccountEntity;

  @Column({ type: 'text' })
  url!: string;

  @Column({ type: 'text', array: true })
  events!: string[];

  /** The mode of the key that registered it: it takes that mode's events only (ADR 0034). */
  @Column({ type: 'text', default: 'live' })
  mode!: ApiKeyMode;

  /** `v1.<iv>.<tag>.<ciphertext>`: AES-256-GCM under WEBHOOK_SECRET_KEY (sealSecret). */
  @Column({ type: 'text', name: 'secret_sealed' })
  secretSealed!: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;
}

/** One delivery attempt of one event to one webhook; deleted once older than RESULTS_TTL_DAYS (ADR 0020). */
@Entity({ name: 'webhook_deliveries' })
@Index('webhook_deliveries_webhook_idx', ['webhookId', 'id'])
@Index('webhook_deliveries_attempted_idx', ['attemptedAt'])
@Index('webhook_deliveries_attempt_key', ['webhookId', 'eventId', 'attempt'], { unique: true })
@Check('webhook_deliveries_outcome_check', "outcome IN ('delivered', 'retrying', 'failed')")
export class WebhookDeliveryEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'text', name: 'webhook_id' })
  webhookId!: string;

  @ManyToOne(() => WebhookEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'webhook_id', foreignKeyConstraintName: 'webhook_deliveries_webhook_id_fkey' })
  webhook?: WebhookEntity;

  @Column({ type: 'text', name: 'event_id' })
  eventId!: string;

  @Column({ type: 'text', name: 'event_type' })
  eventType!: string;

  @Column({ type: 'integer' })
  attempt!: number;

  @Column({ type: 'text' })
  outcome!: string;

  @Column({ type: 'integer', name: 'status_code', nullable: true })
  statusCode!: number | null;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Column({ type: 'integer', name: 'duration_ms' })
  durationMs!: number;

  @CreateDateColumn({ type: 'timestamptz', name: 'attempted_at' })
  attemptedAt!: Date;
}
