import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

/** A sanctions list imported (ADR 0064): how many entries it has, from which file, when. */
@Entity({ name: 'watchlists' })
export class WatchlistEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'watchlists_pkey' })
  list!: string;

  @Column({ type: 'integer' })
  entries!: number;

  @Column({ type: 'text', name: 'file_sha256' })
  fileSha256!: string;

  @Column({ type: 'timestamptz', name: 'imported_at', default: () => 'now()' })
  importedAt!: Date;
}

/** One entry of an imported list: a listed person or organisation. */
@Entity({ name: 'watchlist_entries' })
@Check('watchlist_entries_entity_type_check', "entity_type IN ('person', 'organisation')")
export class WatchlistEntryEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'watchlist_entries_pkey' })
  list!: string;

  @PrimaryColumn({ type: 'text', name: 'entry_id', primaryKeyConstraintName: 'watchlist_entries_pkey' })
  entryId!: string;

  @Column({ type: 'text', name: 'entity_type' })
  entityType!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  aliases!: string[];

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  programmes!: string[];

  @Column({ type: 'integer', array: true, name: 'birth_years', default: () => "'{}'" })
  birthYears!: number[];

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  countries!: string[];

  @ManyToOne(() => WatchlistEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'list', foreignKeyConstraintName: 'watchlist_entries_list_fkey' })
  watchlist?: WatchlistEntity;
}

/** One name of an entry, folded for the name matcher (watchlistNameKey), found by its words or trigrams. */
@Entity({ name: 'watchlist_names' })
@Index('watchlist_names_words_idx', { synchronize: false })
export class WatchlistNameEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'watchlist_names_pkey' })
  list!: string;

  @PrimaryColumn({ type: 'text', name: 'entry_id', primaryKeyConstraintName: 'watchlist_names_pkey' })
  entryId!: string;

  @PrimaryColumn({ type: 'text', name: 'name_key', primaryKeyConstraintName: 'watchlist_names_pkey' })
  nameKey!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text', name: 'entity_type' })
  entityType!: string;

  @ManyToOne(() => WatchlistEntryEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn([
    { name: 'list', referencedColumnName: 'list', foreignKeyConstraintName: 'watchlist_names_entry_fkey' },
    { name: 'entry_id', referencedColumnName: 'entryId', foreignKeyConstraintName: 'watchlist_names_entry_fkey' },
  ])
  entry?: WatchlistEntryEntity;
}

/** Every word of the listed names (three letters or more), once: a searched word finds the words like it. */
@Entity({ name: 'watchlist_words' })
@Index('watchlist_words_trgm_idx', { synchronize: false })
export class WatchlistWordEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'watchlist_words_pkey' })
  word!: string;
}
