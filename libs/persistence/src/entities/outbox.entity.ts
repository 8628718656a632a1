import { Check, Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * The transactional outbox (ADR 0062): one row per settled search whose settling may send events — its
 * `search.completed` or `search.failed` (unless `announce` is false: the gateway answered it itself) and its
 * batch's `batch.completed` once none of the batch's searches runs. Written in the statement that settles the
 * search (settleAll); the worker's relay queues the events, then deletes the row.
 */
@Entity({ name: 'outbox' })
@Check('outbox_event_check', "event IN ('search.completed', 'search.failed')")
export class OutboxEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'text', name: 'search_id' })
  searchId!: string;

  @Column({ type: 'text' })
  event!: 'search.completed' | 'search.failed';

  @Column({ type: 'boolean' })
  announce!: boolean;

  /** The relay that claims it (ADR 0067): the settling connection's `dossier.relay`, its QUEUE_PREFIX. */
  @Column({ type: 'text', nullable: true, default: () => "current_setting('dossier.relay', true)" })
  relay!: string | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;
}
