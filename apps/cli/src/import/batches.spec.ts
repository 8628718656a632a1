import type { WriteCounts } from '@dossier/persistence';
import { BATCH, BatchWriter, WRITERS } from './batches';

interface Row {
  id: string;
}

/** A write per batch that the test settles by hand, in any order. */
class Writes {
  readonly started: { ids: string[]; resolve: (c: WriteCounts) => void; reject: (e: Error) => void }[] = [];
  readonly write = (rows: Row[]): Promise<WriteCounts> =>
    new Promise((resolve, reject) => this.started.push({ ids: rows.map((r) => r.id), resolve, reject }));
  succeed(i: number): void {
    this.started[i]!.resolve({ imported: this.started[i]!.ids.length, updated: 0, superseded: 0 });
  }
}

const rowsOf = (prefix: string, n = BATCH): Row[] => Array.from({ length: n }, (_, k) => ({ id: `${prefix}-${k}` }));
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Pushes rows with consecutive line numbers from `from`; resolves once the last push returns. */
async function pushAll(writer: BatchWriter<Row>, rows: Row[], from: number): Promise<void> {
  for (const [k, row] of rows.entries()) await writer.push(row, from + k);
}

describe('BatchWriter', () => {
  it('writes WRITERS batches at once while the next fills, and no more', async () => {
    const writes = new Writes();
    const writer = new BatchWriter<Row>(writes.write);
    await pushAll(writer, [...rowsOf('a'), ...rowsOf('b')], 1);
    expect(writes.started).toHaveLength(WRITERS);
    const third = pushAll(writer, rowsOf('c'), 2 * BATCH + 1);
    await tick();
    expect(writes.started).toHaveLength(WRITERS); // the third waits for room
    writes.succeed(0);
    await third;
    expect(writes.started).toHaveLength(3);
    expect(writer.writtenThrough).toBe(BATCH);
    writes.succeed(1);
    writes.succeed(2);
    expect(await writer.finish()).toEqual({ imported: 3 * BATCH, updated: 0, unchanged: 0, superseded: 0 });
    expect(writer.writtenThrough).toBe(3 * BATCH);
  });

  it('holds back a batch that shares a record with one being written: the later line wins', async () => {
    const writes = new Writes();
    const writer = new BatchWriter<Row>(writes.write);
    await pushAll(writer, rowsOf('a'), 1);
    const again = pushAll(writer, [...rowsOf('b', BATCH - 1), { id: 'a-7' }], BATCH + 1);
    await tick();
    expect(writes.started).toHaveLength(1);
    writes.succeed(0);
    await again;
    expect(writes.started).toHaveLength(2);
    expect(writes.started[1]!.ids).toContain('a-7');
    writes.succeed(1);
    await writer.finish();
  });

  it('counts and reports batches in the file order when they commit out of it', async () => {
    const writes = new Writes();
    const reported: number[] = [];
    const writer = new BatchWriter<Row>(writes.write, () => reported.push(writer.writtenThrough));
    await pushAll(writer, [...rowsOf('a'), ...rowsOf('b')], 1);
    writes.succeed(1);
    await tick();
    await writer.push({ id: 'c-0' }, 2 * BATCH + 1);
    expect([reported, writer.writtenThrough]).toEqual([[], 0]);
    writes.succeed(0);
    const done = writer.finish();
    await tick();
    writes.succeed(2);
    await done;
    expect(reported).toEqual([BATCH, 2 * BATCH, 2 * BATCH + 1]);
  });

  it('after a failed write, counts every batch written but says written through only those before it', async () => {
    const writes = new Writes();
    const writer = new BatchWriter<Row>(writes.write);
    await pushAll(writer, [...rowsOf('a'), ...rowsOf('b')], 1);
    writes.started[0]!.reject(new Error('connection terminated'));
    writes.succeed(1);
    await expect(writer.finish()).rejects.toThrow('connection terminated');
    await writer.settle();
    expect(writer.counts.imported).toBe(BATCH); // the second batch is in the database
    expect(writer.writtenThrough).toBe(0); // but line 1 is not
  });

  it('after a failed write, writtenThrough ends at the last batch written before it', async () => {
    const writes = new Writes();
    const writer = new BatchWriter<Row>(writes.write);
    await pushAll(writer, [...rowsOf('a'), ...rowsOf('b')], 1);
    writes.succeed(0);
    writes.started[1]!.reject(new Error('connection terminated'));
    await expect(writer.finish()).rejects.toThrow('connection terminated');
    await writer.settle();
    expect([writer.counts.imported, writer.writtenThrough]).toEqual([BATCH, BATCH]);
  });
});
