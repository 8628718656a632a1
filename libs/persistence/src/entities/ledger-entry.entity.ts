import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export const LEDGER_PHASES = ['grant', 'reserve', 'capture', 'release'] as const;
export type LedgerPhase = (typeof LEDGER_PHASES)[number];

/**
 * Append-only credit ledger. `amount` is the change to the balance: grant +n, reserve -cost,
 * capture 0 (the reservation becomes final), release +cost. The sum per account equals its balance.
 * Unique partial indexes allow one reserve and one settlement (capture or release) per search, and one
 * grant per operator's reference (`credits:grant --reference`): a re-run grants nothing.
 */
@Entity({ name: 'credit_ledger' })
@Index('credit_ledger_account_idx', ['accountId'])
@Index('credit_ledger_reserve_once', ['searchId'], { unique: true, where: "phase = 'reserve'" })
@Index('credit_ledger_settle_once', ['searchId'], { unique: true, where: "phase IN ('capture', 'release')" })
@Check('credit_ledger_phase_check', "phase IN ('grant', 'reserve', 'capture', 'release')")
@Check('credit_ledger_check', "search_id IS NOT NULL OR phase = 'grant'")
@Index('credit_ledger_grant_reference', ['reference'], { unique: true, where: 'reference IS NOT NULL' })
@Check('credit_ledger_reference_check', "reference IS NULL OR phase = 'grant'")
export class LedgerEntryEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'text', name: 'account_id' })
  accountId!: string;

  @Column({ type: 'text', name: 'search_id', nullable: true })
  searchId!: string | null;

  @Column({ type: 'text' })
  phase!: LedgerPhase;

  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  amount!: number;

  @Column({ type: 'text', nullable: true })
  note!: string | null;

  /** The operator's reference of a grant, unique among grants; null for every other entry. */
  @Column({ type: 'text', nullable: true })
  reference!: string | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;
}
