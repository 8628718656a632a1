import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import type { DataSource } from 'typeorm';
import { watchlistRowOf, type Watchlist, type WatchlistRow } from '@dossier/domain';
import { replaceWatchlist } from '@dossier/persistence';
import { FileShapeError } from '../import/readers';
import { listItems, type ListFiles, type ListFormat } from './formats';

/** Entries written to Postgres at once. */
const BATCH = 500;

export interface WatchlistImportSummary {
  read: number;
  /** Entries the list holds now. */
  entries: number;
  /** Entries it held before this import replaced it. */
  previous: number;
  /** Records that are neither a person nor an organisation (vessels, aircraft): not screened, not imported. */
  other: number;
  rejected: number;
}

export interface WatchlistImportOutput {
  rejected(line: string): void;
  progress(read: number): void;
}

/** A rejected line, or a line the reader could not go past: the import changed nothing. */
export class WatchlistImportStopped extends Error {
  override readonly name = 'WatchlistImportStopped';
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Replaces `list` with the entries of FILE (ADR 0064), in one transaction: readers see the old list until
 * the new one is complete. A line that is not an entry is reported with its number and skipped; a file the
 * reader cannot go past (broken XML or CSV) stops the import and leaves the list as it was, as does an error
 * or a stop signal. Importing the same file again gives the same list.
 */
export async function importWatchlist(
  db: DataSource,
  list: Watchlist,
  format: ListFormat,
  files: ListFiles,
  out: WatchlistImportOutput,
  stop?: AbortSignal,
): Promise<WatchlistImportSummary> {
  if (statSync(files.file).size === 0) throw new FileShapeError('the file is empty (0 bytes): nothing to import');
  const counts = { read: 0, other: 0, rejected: 0 };
  const seen = new Set<string>();
  const replaced = await replaceWatchlist(db, list, await sha256Of(files.file), async (write) => {
    let batch: WatchlistRow[] = [];
    for await (const item of listItems(list, format, files)) {
      if (stop?.aborted) throw new Error(`interrupted (${String(stop.reason)})`);
      counts.read++;
      if ('stopped' in item) throw new WatchlistImportStopped(item.line, item.reason);
      if ('reason' in item) {
        counts.rejected++;
        out.rejected(`line ${item.line}: ${item.reason}`);
      } else if ('other' in item) counts.other++;
      else if (seen.has(item.entry.entry_id)) {
        counts.rejected++;
        out.rejected(`line ${item.line}: entry ${item.entry.entry_id} is given twice: the first is kept`);
      } else {
        seen.add(item.entry.entry_id);
        batch.push(watchlistRowOf(item.entry));
        if (batch.length >= BATCH) {
          await write(batch);
          batch = [];
        }
      }
      if (counts.read % BATCH === 0) out.progress(counts.read);
    }
    await write(batch);
    out.progress(counts.read);
  });
  return { ...counts, entries: replaced.entries, previous: replaced.previous };
}

export function watchlistSummaryLine(list: string, s: WatchlistImportSummary): string {
  return (
    `${list}: read ${s.read}, ${s.entries} entries (was ${s.previous}), ${s.other} neither a person nor an ` +
    `organisation, rejected ${s.rejected}`
  );
}
