import type { WriteCounts } from '@dossier/persistence';

/** Rows per COPY and upsert: large enough to amortise a round trip, small enough for constant memory. */
export const BATCH = 5_000;

/**
 * Batches written at once, each in a transaction on a connection of its own. One Postgres backend takes an
 * import's batches at about 15,600 records/s; two at once, 23,000 (ADR 0074). The CLI's pool has this many
 * connections.
 */
export const WRITERS = 2;

/** A batch being written: the records it holds, its last line, and its write (settled: `outcome` is set). */
interface Write {
  ids: ReadonlySet<string>;
  rows: number;
  through: number;
  done: Promise<void>;
  outcome?: { counts: WriteCounts } | { error: unknown };
}

/**
 * Rows written BATCH at a time, by `import` and `demo:seed` alike, up to WRITERS batches at once while the
 * next is filled: the CPU work that makes rows and Postgres's overlap, and Postgres uses more than one core.
 * Memory stays at WRITERS + 1 batches.
 *
 * A batch holding a record (its id, made of its source and external id) that a batch being written holds
 * waits for that write: the later line must win, so its write comes after. Batches written at once thus
 * hold different records and never wait on each other's rows; their words (person_words) are inserted in
 * one order, so they never deadlock either.
 *
 * Batches may commit out of order. Counts, `writtenThrough` and `onWritten` follow the file's order: a
 * batch is retired (counted, reported) once it and every batch before it are written.
 */
export class BatchWriter<Row extends { id: string }> {
  readonly counts = { imported: 0, updated: 0, unchanged: 0, superseded: 0 };
  /** The line of the last row of the last batch retired (0: none yet): every row pushed up to it is stored. */
  writtenThrough = 0;
  private batch: Row[] = [];
  private batchThrough = 0;
  /** Batches started and not yet retired, in the file's order. */
  private writes: Write[] = [];

  constructor(
    private readonly write: (rows: Row[]) => Promise<WriteCounts>,
    /** Called after each batch is retired (progress). */
    private readonly onWritten: () => void = () => undefined,
  ) {}

  /** `line`: where the row comes from (for `writtenThrough`). Throws a failed write's error. */
  async push(row: Row, line = 0): Promise<void> {
    this.batch.push(row);
    this.batchThrough = line;
    this.retireSettled();
    if (this.batch.length >= BATCH) await this.flush();
  }

  /** Writes what is left and waits for every write; the totals. Throws a failed write's error. */
  async finish(): Promise<BatchWriter<Row>['counts']> {
    if (this.batch.length > 0) await this.flush();
    while (this.writes.length > 0) await this.retireOldest();
    return this.counts;
  }

  /**
   * Waits for every batch being written, whether it succeeds or not. Then the counts hold every batch that
   * was written, and `writtenThrough` is final: the end of the batches written with none before them lost.
   */
  async settle(): Promise<void> {
    await Promise.all(this.writes.map((w) => w.done));
    let unbroken = true;
    for (const w of this.writes) {
      if (w.outcome !== undefined && 'counts' in w.outcome) this.count(w, w.outcome.counts, unbroken);
      else unbroken = false;
    }
    this.writes = [];
  }

  private async flush(): Promise<void> {
    const rows = this.batch;
    const through = this.batchThrough;
    this.batch = [];
    const ids = new Set(rows.map((r) => r.id));
    // Room for it: fewer than WRITERS batches being written, none of them holding one of its records.
    while (this.writes.length >= WRITERS || this.writes.some((w) => shares(w.ids, ids))) await this.retireOldest();
    const started: Write = { ids, rows: rows.length, through, done: Promise.resolve() };
    started.done = this.write(rows).then(
      (counts) => void (started.outcome = { counts }),
      (error: unknown) => void (started.outcome = { error }),
    );
    this.writes.push(started);
  }

  /** Waits for the oldest batch being written and retires it; throws its error if it failed. */
  private async retireOldest(): Promise<void> {
    await this.writes[0]!.done;
    this.retireSettled();
  }

  /** Retires the written batches at the head of the line; throws the first one's error if it failed. */
  private retireSettled(): void {
    while (this.writes[0]?.outcome !== undefined) {
      const outcome = this.writes[0].outcome;
      if ('error' in outcome) throw outcome.error; // left in place: settle() counts what else was written
      this.count(this.writes.shift()!, outcome.counts, true);
      this.onWritten();
    }
  }

  private count(w: Write, c: WriteCounts, unbroken: boolean): void {
    this.counts.imported += c.imported;
    this.counts.updated += c.updated;
    this.counts.superseded += c.superseded;
    this.counts.unchanged += w.rows - c.imported - c.updated - c.superseded;
    if (unbroken) this.writtenThrough = w.through;
  }
}

function shares(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const id of b) if (a.has(id)) return true;
  return false;
}
