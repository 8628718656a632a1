import { Check, Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'accounts' })
@Check('accounts_balance_check', 'balance >= 0')
export class AccountEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  email!: string;

  /** Lower-cased e-mail: uniqueness is case-insensitive. */
  @Column({ type: 'text', name: 'email_normalized', unique: true })
  emailNormalized!: string;

  @Column({ type: 'text', name: 'password_hash' })
  passwordHash!: string;

  /** Current balance in credits; a CHECK keeps it >= 0. Always equals the sum of the ledger. */
  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  balance!: number;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;
}
