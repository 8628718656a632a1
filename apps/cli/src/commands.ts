export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `usage: npm run cli -- <command>

commands:
  db:migrate                     apply pending migrations to DATABASE_URL
  credits:grant <email> <n>      add n credits (a positive integer) to the account, recorded in the ledger
  help                           this text`;

export type Command =
  { name: 'help' } | { name: 'db:migrate' } | { name: 'credits:grant'; email: string; credits: number };

const MAX_GRANT = 1_000_000_000;

/** Parses argv into a command, or throws a UsageError that names the bad argument. */
export function parseCommand(argv: string[]): Command {
  const [name, ...args] = argv;
  switch (name) {
    case undefined:
    case 'help':
    case '--help':
      return { name: 'help' };
    case 'db:migrate':
      expectArgs(name, args, 0, '');
      return { name };
    case 'credits:grant': {
      expectArgs(name, args, 2, '<email> <n>');
      const [email, n] = args as [string, string];
      if (!/^[^@\s]+@[^@\s]+$/.test(email))
        throw new UsageError(`credits:grant: <email> "${email}" is not an e-mail address`);
      if (!/^\d+$/.test(n) || Number(n) < 1 || Number(n) > MAX_GRANT) {
        throw new UsageError(`credits:grant: <n> "${n}" must be a whole number from 1 to ${MAX_GRANT}`);
      }
      return { name, email, credits: Number(n) };
    }
    default:
      throw new UsageError(`unknown command "${name}"\n\n${USAGE}`);
  }
}

function expectArgs(name: string, args: string[], count: number, shape: string): void {
  if (args.length !== count) {
    throw new UsageError(
      `${name}: expected ${count} argument(s)${shape ? ` ${shape}` : ''}, got ${args.length}\n\n${USAGE}`,
    );
  }
}
