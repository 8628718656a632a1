import { statSync } from 'node:fs';
import { SingleBar } from 'cli-progress';
import type { DataSource } from 'typeorm';
import {
  companyRowOf,
  personRowOf,
  type CompanyRow,
  type ControllerRow,
  type ParentRow,
  type PersonRow,
} from '@dossier/domain';
import {
  MAX_INDEXED_BYTES,
  companyFieldTooLong,
  personFieldTooLong,
  writeCompanies,
  writeControllers,
  writeParents,
  writePeople,
  type WriteCounts,
} from '@dossier/persistence';
import { controllerRowOf, parentRowOf } from './depth-records';
import { BatchWriter } from './batches';
import { FORMAT_SOURCE, FileShapeError, entries, openFile, type ImportFormat, type ImportKind } from './readers';
import { companyRecordOf, personRecordOf } from './records';

export interface ImportSummary {
  read: number;
  imported: number;
  updated: number;
  unchanged: number;
  /**
   * Lines that a later line of the file for the same record (source, external id) replaced before either was
   * written (within one batch of BATCH rows): only the last is stored and counted as imported, updated or
   * unchanged. A duplicate in a later batch is written again: counted as updated (or unchanged).
   */
  superseded: number;
  rejected: number;
  /** Lines a company-depth file holds that are no such fact (a PSC statement, an inactive relationship). */
  skipped: number;
  /** The line the reader could not go past (a broken CSV quote): the rest of the file was not read. */
  stoppedAt: number | null;
}

/**
 * A write failed (Postgres went away, say) or the operator stopped the import (Ctrl-C, SIGTERM) part-way:
 * what was written by then, and through which line. Importing the file again is safe: what is written
 * comes back unchanged.
 */
export class ImportInterrupted extends Error {
  override readonly name = 'ImportInterrupted';
  constructor(
    /** The summary when it stopped: the counts of what was written, the lines read. */
    readonly summary: ImportSummary,
    /** Every valid line up to this one is written (0: none). */
    readonly writtenThrough: number,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

export interface ImportOutput {
  /** A rejected line (`line 6: invalid JSON`). */
  rejected(line: string): void;
  /** Progress: bytes of the file read so far, its size, and the summary so far. */
  progress(bytes: number, size: number, summary: ImportSummary): void;
  done(): void;
}

/**
 * Streams FILE into the local index: each line checked (a bad one reported and skipped), the good ones
 * written BATCH at a time through COPY and one upsert (writePeople/writeCompanies) by a BatchWriter. The
 * file is read no faster than Postgres takes the batches, so memory stays constant. A zero-byte file is a
 * FileShapeError. A person's national phone is read in the record's own country, else in `defaultRegion`
 * (DEFAULT_REGION). When `stop` is aborted
 * (its reason names the signal), no further line is read: the batch being written is let in, and the
 * import ends with ImportInterrupted.
 */
export async function importFile(
  db: DataSource,
  kind: ImportKind,
  path: string,
  format: ImportFormat,
  defaultRegion: string,
  out: ImportOutput,
  stop?: AbortSignal,
): Promise<ImportSummary> {
  const size = statSync(path).size;
  // Nothing to read is not a success: a download cut short (or a file being written) would look like one.
  if (size === 0) throw new FileShapeError('the file is empty (0 bytes): nothing to import (a download cut short?)');
  const stream = openFile(path);
  const lines = { read: 0, rejected: 0, skipped: 0, stoppedAt: null as number | null };
  const summary = (): ImportSummary => ({ ...lines, ...writer.counts });
  const source = FORMAT_SOURCE[format];
  let atEnd = false;
  const write = writerOf(kind, format);
  const writer = new BatchWriter<Row>(
    (rows) => write(db, rows),
    // The stream reads ahead of the lines taken: 100% only once every line was, and none once a broken
    // record stopped the read (the rest of the file was not imported, whatever the stream had buffered).
    () => {
      if (lines.stoppedAt === null) out.progress(atEnd ? size : Math.min(stream.bytesRead, size - 1), size, summary());
    },
  );
  try {
    for await (const entry of entries(kind, format, stream)) {
      if (stop?.aborted) throw new Error(`interrupted (${String(stop.reason)})`);
      lines.read++;
      const checked = 'reason' in entry ? entry : lineOf(kind, format, entry.fields, source, defaultRegion);
      if ('skip' in checked) {
        lines.skipped++;
        continue;
      }
      if ('reason' in checked) {
        lines.rejected++;
        out.rejected(`line ${entry.line}: ${checked.reason}`);
        if ('stopped' in checked) lines.stoppedAt = entry.line;
        continue;
      }
      await writer.push(checked.row, entry.line);
    }
    atEnd = true;
    await writer.finish();
  } catch (error) {
    if (error instanceof FileShapeError) throw error;
    await writer.settle();
    throw new ImportInterrupted(summary(), writer.writtenThrough, error);
  } finally {
    stream.destroy();
    out.done();
  }
  return summary();
}

type Row = PersonRow | CompanyRow | ControllerRow | ParentRow;

/** Where a format's rows are written: people, companies, or a company-depth table (ADR 0066). */
function writerOf(kind: ImportKind, format: ImportFormat): (db: DataSource, rows: Row[]) => Promise<WriteCounts> {
  if (format === 'companies-house-psc') return (db, rows) => writeControllers(db, rows as ControllerRow[]);
  if (format === 'gleif-rr') return (db, rows) => writeParents(db, rows as ParentRow[]);
  return kind === 'person'
    ? (db, rows) => writePeople(db, rows as PersonRow[])
    : (db, rows) => writeCompanies(db, rows as CompanyRow[]);
}

function lineOf(
  kind: ImportKind,
  format: ImportFormat,
  fields: Record<string, unknown>,
  source: string | null,
  defaultRegion: string,
): { row: Row } | { reason: string } | { skip: string } {
  if (format === 'companies-house-psc') return controllerRowOf(fields, source!);
  if (format === 'gleif-rr') return parentRowOf(fields, source!);
  return rowOf(kind, fields, source, defaultRegion);
}

function rowOf(
  kind: ImportKind,
  fields: Record<string, unknown>,
  source: string | null,
  defaultRegion: string,
): { row: PersonRow | CompanyRow } | { reason: string } {
  if (kind === 'person') {
    const c = personRecordOf(fields, source);
    if ('reason' in c) return c;
    let invalid: string | null = null;
    const row = personRowOf(c.record, {
      defaultRegion,
      onInvalid: (field, value) => {
        invalid ??= `${field}: "${value}" is not ${field === 'emails' ? 'an e-mail address' : 'a phone number'}`;
      },
    });
    return invalid !== null ? { reason: invalid } : indexable(row, personFieldTooLong(row));
  }
  const c = companyRecordOf(fields, source);
  if ('reason' in c) return c;
  const row = companyRowOf(c.record);
  return indexable(row, companyFieldTooLong(row));
}

/**
 * A row with a value too long for its index is rejected with its line: left to the batch's upsert it
 * would fail the whole import at that batch, naming no line.
 */
function indexable<R>(row: R, tooLong: string | null): { row: R } | { reason: string } {
  return tooLong === null
    ? { row }
    : { reason: `${tooLong} is too long to index: at most ${MAX_INDEXED_BYTES} bytes of UTF-8 once normalised` };
}

export function summaryLine(s: ImportSummary): string {
  const skipped = s.skipped > 0 ? `, skipped ${s.skipped}` : '';
  return `read ${s.read}, imported ${s.imported}, updated ${s.updated}, unchanged ${s.unchanged}, superseded ${s.superseded}, rejected ${s.rejected}${skipped}`;
}

/** A progress bar on a terminal; a plain line at most every 2 s otherwise. Rejected lines go to stderr. */
export function consoleOutput(stderr: NodeJS.WriteStream = process.stderr): ImportOutput {
  if (stderr.isTTY) {
    const bar = new SingleBar({
      stream: stderr,
      format: 'importing [{bar}] {percentage}% | {read} read, {rejected} rejected | {eta_formatted} left',
      hideCursor: true,
    });
    let started = false;
    return {
      rejected: (line) => {
        if (started) bar.stop();
        stderr.write(`${line}\n`);
        started = false;
      },
      progress: (bytes, size, s) => {
        if (!started) bar.start(size, bytes, { read: s.read, rejected: s.rejected });
        started = true;
        bar.update(bytes, { read: s.read, rejected: s.rejected });
      },
      done: () => started && bar.stop(),
    };
  }
  let last = 0;
  return {
    rejected: (line) => stderr.write(`${line}\n`),
    progress: (bytes, size, s) => {
      if (Date.now() - last < 2_000) return;
      last = Date.now();
      stderr.write(`progress: ${Math.floor((100 * bytes) / Math.max(size, 1))}% of the file, ${summaryLine(s)}\n`);
    },
    done: () => undefined,
  };
}
