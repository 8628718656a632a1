import 'reflect-metadata';
import { ConfigError, loadCliConfig, type CliConfig } from '@dossier/config';
import {
  AccountsRepository,
  SearchHistoryRepository,
  openDataSource,
  runMigrations,
  unreachableDatabase,
} from '@dossier/persistence';
import { existsSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseCommand, UsageError, USAGE, usageOf, type Command } from './commands';
import { WRITERS } from './import/batches';
import { ImportInterrupted, consoleOutput, importFile, summaryLine } from './import/import';
import { demoPresent, seedDemo } from './import/demo';
import { FileShapeError } from './import/readers';
import { exportAudit } from './audit-export';
import { runSuppress } from './suppress';
import { runWatchlists } from './watchlists/watchlists-command';

async function main(argv: string[]): Promise<number> {
  // The environment is read once a command needs it: `help` answers whatever it holds.
  let loaded: CliConfig | undefined;
  const configOf = (): CliConfig => (loaded ??= loadCliConfig());
  const command = parseCommand(argv, () => configOf().defaultRegion);
  if (command.name === 'help') {
    console.log(command.command === undefined ? USAGE : usageOf(command.command));
    return 0;
  }
  const config = configOf();
  try {
    return await run(command, config);
  } catch (err) {
    // One line naming the server and DATABASE_URL (never its password), as the gateway and worker say it.
    const unreachable = unreachableDatabase(err, config.databaseUrl);
    if (unreachable === null) throw err;
    console.error(unreachable);
    return 1;
  }
}

async function run(
  command: Exclude<Command, { name: 'help' }>,
  { databaseUrl, defaultRegion, queuePrefix }: CliConfig,
): Promise<number> {
  // Migrations build indexes over every imported record, and an import's upserts are as large as its
  // batches: the CLI's statements have no 10 s cap. A connection for each batch an import writes at once.
  const db = await openDataSource({
    url: databaseUrl,
    poolSize: WRITERS,
    applicationName: 'dossier-cli',
    queryTimeoutMs: null,
    // The deployment's outbox relay (ADR 0067): rows waiting when db:migrate adds the column become its.
    relay: queuePrefix,
  });
  try {
    switch (command.name) {
      case 'db:migrate': {
        const applied = await runMigrations(db);
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
        return 0;
      }
      case 'credits:grant': {
        const { email, credits, reference } = command;
        const result = await new AccountsRepository(db).grant(email, credits, 'cli credits:grant', reference);
        if (!result) {
          console.error(`credits:grant: no account with e-mail ${email}`);
          return 1;
        }
        if (result.granted) {
          console.log(`granted ${credits} credit(s) to ${email}; balance is now ${result.balance}`);
          return 0;
        }
        const { earlier } = result;
        const was =
          `credits:grant: nothing granted: reference "${reference}" granted ${earlier.credits} credit(s) to ` +
          `${earlier.email} already, at ${earlier.at.toISOString()}`;
        // The same grant run again: done. The reference on another grant: a mistake the operator must see.
        if (earlier.accountId === result.id && earlier.credits === credits) {
          console.log(`${was}; balance is now ${result.balance}`);
          return 0;
        }
        console.error(`${was}; give another reference for another grant`);
        return 1;
      }
      case 'import': {
        if (!existsSync(command.file) || !statSync(command.file).isFile()) {
          console.error(`import: no such file: ${command.file}`);
          return 2;
        }
        const started = performance.now();
        // Ctrl-C or SIGTERM: stop reading, let the batch being written in, say how far it got. A second
        // signal ends the process at once (the handlers are gone by then).
        const stop = new AbortController();
        const onSignal = (signal: NodeJS.Signals) => stop.abort(signal);
        process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
        try {
          const summary = await importFile(
            db,
            command.kind,
            command.file,
            command.format,
            defaultRegion,
            consoleOutput(),
            stop.signal,
          );
          const seconds = (performance.now() - started) / 1000;
          console.log(`${summaryLine(summary)} (${Math.round(summary.read / Math.max(seconds, 0.001))} records/s)`);
          // A header with no rows (or only blank lines) reads as a success: said, so a cut-short file is noticed.
          if (summary.read === 0)
            console.error(`import: ${command.file}: warning: no records in the file: nothing was imported`);
          if (summary.stoppedAt !== null)
            console.log(`stopped at line ${summary.stoppedAt}: the rest of the file was not read`);
          return summary.rejected > 0 ? 1 : 0;
        } catch (error) {
          if (error instanceof FileShapeError) {
            console.error(`import: ${command.file}: ${error.message}`);
            return 2;
          }
          if (error instanceof ImportInterrupted) {
            console.error(`import: ${command.file}: stopped: ${error.message}`);
            const written =
              error.writtenThrough === 0
                ? 'nothing was written'
                : `every valid line up to line ${error.writtenThrough} is written`;
            console.log(
              `${summaryLine(error.summary)}; ${written}. Importing the file again is safe: what is written comes back unchanged`,
            );
            return 1;
          }
          throw error;
        } finally {
          process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
        }
      }
      case 'watchlists:import':
      case 'watchlists:list':
        return await runWatchlists(db, command);
      case 'demo:seed': {
        if (command.ifAbsent && (await demoPresent(db))) {
          console.log('demo:seed: the demo set is there already; nothing to do');
          return 0;
        }
        const { people, companies } = await seedDemo(db, command, defaultRegion);
        console.log(
          `demo:seed: people ${people.imported} imported, ${people.updated} updated; ` +
            `companies ${companies.imported} imported, ${companies.updated} updated`,
        );
        return 0;
      }
      case 'audit:export':
        return await exportAudit(
          { history: new SearchHistoryRepository(db), accounts: new AccountsRepository(db) },
          command,
          { out: process.stdout, err: process.stderr },
        );
      case 'suppress:add':
      case 'suppress:remove':
      case 'suppress:list':
        return await runSuppress(db, command);
    }
  } finally {
    await db.destroy();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    console.error(`failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
