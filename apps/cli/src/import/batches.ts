import type { WriteCounts } from '@dossier/persistence';

/** Rows per COPY and upsert: large enough to amortise a round trip, small enough for constant memory. */
export const BATCH = 5_000;

/**
 * Rows written BATCH at a time, by `import` and `demo:seed` alike. One batch is written while the next is
 * filled: the CPU work that makes rows and Postgres overlap, and `push` waits for the write before a third
 * batch starts (memory stays at two batches).
 */
export class BatchWriter<Row> {
  readonly counts = { imported: 0, updated: 0, unchanged: 0, superseded: 0 };
  /** The line of the last row of the last batch written (0: none yet): every row pushed up to it is stored. */
  writtenThrough = 0;
  private batch: Row[] = [];
  private batchThrough = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: (rows: Row[]) => Promise<WriteCounts>,
    /** Called after each batch is written (progress). */
    private readonly onWritten: () => void = () => undefined,
  ) {}

  /** `line`: where the row comes from (for `writtenThrough`). */
  async push(row: Row, line = 0): Promise<void> {
    this.batch.push(row);
    this.batchThrough = line;
    if (this.batch.length >= BATCH) await this.flush();
  }

  /** Writes what is left and waits for every write; the totals. */
  async finish(): Promise<BatchWriter<Row>['counts']> {
    if (this.batch.length > 0) await this.flush();
    await this.writing;
    return this.counts;
  }

  /** Waits for the batch being written, if any, whether it succeeds or not (`writtenThrough` is then final). */
  async settle(): Promise<void> {
    await this.writing.catch(() => undefined);
  }

  private async flush(): Promise<void> {
    const rows = this.batch;
    const through = this.batchThrough;
    this.batch = [];
    await this.writing;
    this.writing = (async () => {
      const c = await this.write(rows);
      this.counts.imported += c.imported;
      this.counts.updated += c.updated;
      this.counts.superseded += c.superseded;
      this.counts.unchanged += rows.length - c.imported - c.updated - c.superseded;
      this.writtenThrough = through;
      this.onWritten();
    })();
    this.writing.catch(() => undefined); // awaited by the next flush or by finish()
  }
}
