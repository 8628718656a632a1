import { AUDIT_EXPORT_USAGE, givenTwice, parseAuditExportArgs, type AuditExportCommand } from './audit-export';
import { DEMO_DEFAULTS } from './import/demo-defaults';
import { FORMATS, type ImportFormat, type ImportKind } from './import/readers';
import { SUPPRESS_OPTIONS, SUPPRESS_USAGE, suppressCommand, type SuppressCommand } from './suppress';
import { WATCHLISTS, isWatchlist, type Watchlist } from '@dossier/domain';
import { FORMATS_OF, LIST_FORMATS, type ListFormat } from './watchlists/formats';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `usage: npm run cli -- <command>

commands:
  db:migrate                     apply pending migrations to DATABASE_URL
  credits:grant <email> <n> [--reference R]
                                 add n credits (a positive integer) to the account, recorded in the ledger;
                                 with a reference (an invoice number, a ticket) at most once: a re-run
                                 grants nothing and says so. Without one, a re-run grants again
  import <person|company> <file> [--format jsonl|csv|gleif|companies-house|companies-house-psc|gleif-rr]
                                 load records into the local index (format from the file's extension
                                 when not given: .jsonl/.ndjson, .csv); exit 0 all imported, 1 some
                                 lines rejected, 2 usage error
  demo:seed [--people N] [--companies N] [--if-absent]
                                 the synthetic demo set (source "demo"; 10000 people, 2000 companies);
                                 re-running changes nothing; --if-absent: only when it is not there yet
  watchlists:import <list> <file> [--format csv|xml|jsonl] [--aliases alt.csv]
                                 replace a sanctions list (ofac-sdn, un-sc, eu-fsf, uk-sanctions,
                                 opensanctions) with the entries of its published file, in one
                                 transaction (format from the extension when not given; --aliases:
                                 OFAC's alt.csv beside sdn.csv); exit 0 all imported, 1 some lines
                                 rejected or the import stopped (the list unchanged), 2 usage error
  watchlists:list                the lists imported: entries, file checksum, when
  ${AUDIT_EXPORT_USAGE}
${SUPPRESS_USAGE}
  help [<command>]               this text, or one command's part of it`;

/** The command names USAGE describes, in its order. */
const BLOCK_START = /^ {2}([a-z]+(?::[a-z]+)?)\b/;
export const COMMAND_NAMES = USAGE.split('\n').flatMap((line) => BLOCK_START.exec(line)?.[1] ?? []);

/** One command's part of USAGE (its synopsis and description), as `usage: npm run cli -- …`. */
export function usageOf(name: string): string {
  const lines = USAGE.split('\n');
  const start = lines.findIndex((line) => BLOCK_START.exec(line)?.[1] === name);
  if (start < 0) return USAGE;
  let end = start + 1;
  while (end < lines.length && !BLOCK_START.test(lines[end]!) && lines[end]!.startsWith('   ')) end++;
  return `usage: npm run cli -- ${lines.slice(start, end).join('\n').trimStart()}`;
}

export type Command =
  | { name: 'help'; command?: string }
  | { name: 'db:migrate' }
  | { name: 'credits:grant'; email: string; credits: number; reference: string | null }
  | { name: 'import'; kind: ImportKind; file: string; format: ImportFormat }
  | { name: 'demo:seed'; people: number; companies: number; ifAbsent: boolean }
  | { name: 'watchlists:import'; list: Watchlist; file: string; format: ListFormat; aliases: string | null }
  | { name: 'watchlists:list' }
  | AuditExportCommand
  | SuppressCommand;

const MAX_GRANT = 1_000_000_000;
/**
 * A grant's reference: 1 to 200 characters, no control characters, no edge spaces (compared as written:
 * "INV-42 " would not find the grant of "INV-42" on a re-run).
 */
const REFERENCE = /^(?!\s)[^\p{C}]{1,200}(?<!\s)$/u;

/**
 * Parses argv into a command, or throws a UsageError that names the bad argument. `defaultRegion` gives
 * DEFAULT_REGION, asked for only by a command that reads a phone number (suppress:add and suppress:remove):
 * `help` answers whatever the environment holds.
 */
export function parseCommand(argv: string[], defaultRegion: () => string): Command {
  const [name, ...args] = argv;
  try {
    return commandOf(name, args, defaultRegion);
  } catch (err) {
    // A usage error shows the one command's usage, not the whole list.
    if (err instanceof UsageError && name !== undefined && COMMAND_NAMES.includes(name) && name !== 'help')
      throw new UsageError(`${err.message}\n\n${usageOf(name)}`);
    throw err;
  }
}

function commandOf(name: string | undefined, args: string[], defaultRegion: () => string): Command {
  switch (name) {
    case undefined:
    case '--help':
      return { name: 'help' };
    case 'help': {
      const [about, ...rest] = args;
      if (rest.length > 0 || (about !== undefined && !COMMAND_NAMES.includes(about)))
        throw new UsageError(`help: expected nothing or one of ${COMMAND_NAMES.join(', ')}`);
      return about === undefined ? { name } : { name, command: about };
    }
    case 'db:migrate':
      expectArgs(name, args, 0, '');
      return { name };
    case 'credits:grant':
      return creditsGrantCommand(args);
    case 'import':
      return importCommand(args);
    case 'demo:seed':
      return demoSeedCommand(args);
    case 'watchlists:import':
      return watchlistsImportCommand(args);
    case 'watchlists:list':
      expectArgs(name, args, 0, '');
      return { name };
    case 'audit:export': {
      const parsed = parseAuditExportArgs(args);
      if (typeof parsed === 'string') throw new UsageError(`audit:export: ${parsed}`);
      return parsed;
    }
    case 'suppress:add':
    case 'suppress:remove': {
      const { positional, values } = options(name, args, { values: SUPPRESS_OPTIONS, flags: [] });
      const command = suppressCommand(name, positional, values, defaultRegion());
      if ('problem' in command) throw new UsageError(`${command.problem}`);
      return command;
    }
    case 'suppress:list':
      expectArgs(name, args, 0, '');
      return { name };
    default:
      throw new UsageError(
        `unknown command "${name}": the commands are ${COMMAND_NAMES.join(', ')} (npm run cli -- help describes them)`,
      );
  }
}

/**
 * `--name value` options (and bare `--flag`s) apart from positional arguments; an unknown option, or one
 * given twice (one of its values would be dropped), is a usage error.
 */
function options(
  command: string,
  args: string[],
  known: { values: string[]; flags: string[] },
): { positional: string[]; values: Map<string, string>; flags: Set<string> } {
  const positional: string[] = [];
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const [key, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (values.has(key) || flags.has(key)) throw new UsageError(`${command}: ${givenTwice(key)}`);
    if (known.flags.includes(key)) flags.add(key);
    else if (known.values.includes(key)) {
      const value = inline ?? args[++i];
      if (value === undefined) throw new UsageError(`${command}: --${key} needs a value`);
      values.set(key, value);
    } else throw new UsageError(`${command}: unknown option --${key}`);
  }
  return { positional, values, flags };
}

function creditsGrantCommand(args: string[]): Command {
  const name = 'credits:grant';
  const { positional, values } = options(name, args, { values: ['reference'], flags: [] });
  expectArgs(name, positional, 2, '<email> <n>');
  const [email, n] = positional as [string, string];
  if (!/^[^@\s]+@[^@\s]+$/.test(email))
    throw new UsageError(`credits:grant: <email> "${email}" is not an e-mail address`);
  if (!/^\d+$/.test(n) || Number(n) < 1 || Number(n) > MAX_GRANT) {
    throw new UsageError(`credits:grant: <n> "${n}" must be a whole number from 1 to ${MAX_GRANT}`);
  }
  const reference = values.get('reference') ?? null;
  if (reference !== null && !REFERENCE.test(reference)) {
    throw new UsageError(
      `credits:grant: --reference "${reference}" must be 1 to 200 characters, without control characters or ` +
        `leading or trailing spaces`,
    );
  }
  return { name, email, credits: Number(n), reference };
}

function importCommand(args: string[]): Command {
  const { positional, values } = options('import', args, { values: ['format'], flags: [] });
  if (positional.length !== 2) throw new UsageError(`import: expected <person|company> <file>`);
  const [kind, file] = positional as [string, string];
  if (kind !== 'person' && kind !== 'company')
    throw new UsageError(`import: the kind is person or company, not "${kind}"`);
  const format = values.get('format') ?? formatFromExtension(file);
  if (!(FORMATS as readonly string[]).includes(format))
    throw new UsageError(`import: --format is one of ${FORMATS.join(', ')}, not "${format}"`);
  if (format !== 'jsonl' && format !== 'csv' && kind !== 'company')
    throw new UsageError(`import: --format ${format} holds companies: import company ${file} --format ${format}`);
  return { name: 'import', kind, file, format: format as ImportFormat };
}

function watchlistsImportCommand(args: string[]): Command {
  const name = 'watchlists:import';
  const { positional, values } = options(name, args, { values: ['format', 'aliases'], flags: [] });
  if (positional.length !== 2) throw new UsageError(`${name}: expected <list> <file>`);
  const [list, file] = positional as [string, string];
  if (!isWatchlist(list)) throw new UsageError(`${name}: the list is one of ${WATCHLISTS.join(', ')}, not "${list}"`);
  const format = values.get('format') ?? /\.(csv|xml|jsonl|json|ndjson)$/i.exec(file)?.[1]?.toLowerCase();
  const read = format === 'json' || format === 'ndjson' ? 'jsonl' : format;
  if (read === undefined)
    throw new UsageError(`${name}: cannot tell the format of "${file}" from its name: give --format`);
  if (!(LIST_FORMATS as readonly string[]).includes(read) || !FORMATS_OF[list].includes(read as ListFormat))
    throw new UsageError(`${name}: ${list} is read as ${FORMATS_OF[list].join(' or ')}, not "${read}"`);
  const aliases = values.get('aliases') ?? null;
  if (aliases !== null && !(list === 'ofac-sdn' && read === 'csv'))
    throw new UsageError(`${name}: --aliases is OFAC's alt.csv, beside ofac-sdn's sdn.csv`);
  return { name, list, file, format: read as ListFormat, aliases };
}

function formatFromExtension(file: string): string {
  if (/\.(jsonl|ndjson)$/i.test(file)) return 'jsonl';
  if (/\.csv$/i.test(file)) return 'csv';
  throw new UsageError(`import: cannot tell the format of "${file}" from its name: give --format`);
}

function demoSeedCommand(args: string[]): Command {
  const { positional, values, flags } = options('demo:seed', args, {
    values: ['people', 'companies'],
    flags: ['if-absent'],
  });
  if (positional.length > 0) throw new UsageError(`demo:seed: unexpected argument "${positional[0]}"`);
  const count = (key: 'people' | 'companies') => {
    const raw = values.get(key);
    if (raw === undefined) return DEMO_DEFAULTS[key];
    if (!/^\d+$/.test(raw) || Number(raw) > 10_000_000)
      throw new UsageError(`demo:seed: --${key} "${raw}" must be a whole number from 0 to 10000000`);
    return Number(raw);
  };
  return {
    name: 'demo:seed',
    people: count('people'),
    companies: count('companies'),
    ifAbsent: flags.has('if-absent'),
  };
}

function expectArgs(name: string, args: string[], count: number, shape: string): void {
  if (args.length !== count) {
    throw new UsageError(`${name}: expected ${count} argument(s)${shape ? ` ${shape}` : ''}, got ${args.length}`);
  }
}
