import { existsSync, statSync } from 'node:fs';
import type { DataSource } from 'typeorm';
import { watchlistsImported } from '@dossier/persistence';
import type { Command } from '../commands';
import { FileShapeError } from '../import/readers';
import { WatchlistImportStopped, importWatchlist, watchlistSummaryLine } from './watchlists-import';

type WatchlistsCommand = Extract<Command, { name: 'watchlists:import' | 'watchlists:list' }>;

/** `watchlists:import` and `watchlists:list`: the exit status, what was done on stdout, problems on stderr. */
export async function runWatchlists(db: DataSource, command: WatchlistsCommand): Promise<number> {
  if (command.name === 'watchlists:list') {
    const lists = await watchlistsImported(db);
    if (lists.length === 0) console.log('no watchlist imported');
    for (const l of lists)
      console.log(`${l.list}\t${l.entries} entries\tsha256 ${l.file_sha256}\timported ${l.imported_at.toISOString()}`);
    return 0;
  }
  const name = `watchlists:import ${command.list}`;
  for (const file of [command.file, ...(command.aliases ? [command.aliases] : [])]) {
    if (!existsSync(file) || !statSync(file).isFile()) {
      console.error(`${name}: no such file: ${file}`);
      return 2;
    }
  }
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => stop.abort(signal);
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  let last = 0;
  try {
    const summary = await importWatchlist(
      db,
      command.list,
      command.format,
      { file: command.file, ...(command.aliases ? { aliases: command.aliases } : {}) },
      {
        rejected: (line) => console.error(`${name}: ${line}`),
        progress: (read) => {
          if (Date.now() - last < 2_000) return;
          last = Date.now();
          console.error(`progress: ${read} records read`);
        },
      },
      stop.signal,
    );
    console.log(watchlistSummaryLine(command.list, summary));
    if (summary.entries === 0) console.error(`${name}: warning: no entries in the file: the list is now empty`);
    return summary.rejected > 0 ? 1 : 0;
  } catch (error) {
    if (error instanceof FileShapeError) {
      console.error(`${name}: ${command.file}: ${error.message}`);
      return 2;
    }
    if (error instanceof WatchlistImportStopped || stop.signal.aborted) {
      console.error(`${name}: ${command.file}: stopped: ${(error as Error).message}; the list is as it was`);
      return 1;
    }
    throw error;
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}
