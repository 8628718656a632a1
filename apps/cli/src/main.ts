import 'reflect-metadata';
import { ConfigError, loadCliConfig } from '@dossier/config';
import { AccountsRepository, openDataSource, runMigrations } from '@dossier/persistence';
import { parseCommand, UsageError, USAGE } from './commands';

async function main(argv: string[]): Promise<number> {
  const command = parseCommand(argv);
  if (command.name === 'help') {
    console.log(USAGE);
    return 0;
  }
  const config = loadCliConfig();
  const db = await openDataSource({ url: config.databaseUrl, poolSize: 2, applicationName: 'dossier-cli' });
  try {
    switch (command.name) {
      case 'db:migrate': {
        const applied = await runMigrations(db);
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
        return 0;
      }
      case 'credits:grant': {
        const result = await new AccountsRepository(db).grant(command.email, command.credits, 'cli credits:grant');
        if (!result) {
          console.error(`credits:grant: no account with e-mail ${command.email}`);
          return 1;
        }
        console.log(`granted ${command.credits} credit(s) to ${command.email}; balance is now ${result.balance}`);
        return 0;
      }
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
