import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import { z } from 'zod';
import { creditsSpent, microsecondInstant } from '@dossier/domain';
import type { AccountsRepository, AuditEntry, SearchHistoryRepository, SearchPosition } from '@dossier/persistence';

export const AUDIT_FORMATS = ['jsonl', 'csv'] as const;
export type AuditFormat = (typeof AUDIT_FORMATS)[number];

export const AUDIT_EXPORT_USAGE = `audit:export [--from D] [--to D] [--account EMAIL] [--format jsonl|csv]
                                 one record per search, oldest first, to stdout (JSONL by default; CSV
                                 with a header): account, key id, kind, purpose, request id, time,
                                 outcome, credits. D is a date (2026-01-31: --to includes that day) or
                                 an RFC 3339 time (--to excludes it); without --to, searches made while
                                 it runs are left out. A progress bar on a terminal (stderr)`;

export interface AuditExportCommand {
  name: 'audit:export';
  /** created_at >= from and < to, as UTC text to the microsecond (microsecondInstant); null is unbounded. */
  from: string | null;
  to: string | null;
  account: string | null;
  format: AuditFormat;
}

const DAY_MS = 86_400_000;
const date = z.iso.date();
const time = z.iso.datetime({ offset: true });

/**
 * A bound from the command line, as UTC text to the microsecond (a Date would cut a time to the millisecond):
 * a date is that day's midnight UTC, or the next one's for an end (`to`). `{ refused }`: why it is none.
 */
function bound(flag: 'from' | 'to', value: string | undefined): string | null | { refused: string } {
  if (value === undefined) return null;
  if (date.safeParse(value).success) {
    const day = new Date(Date.parse(`${value}T00:00:00Z`) + (flag === 'to' ? DAY_MS : 0));
    return day.getUTCFullYear() > 9999 ? 'infinity' : microsecondInstant(day.toISOString())!;
  }
  if (time.safeParse(value).success) return microsecondInstant(value)!;
  return { refused: `--${flag} "${value}" must be a date (2026-01-31) or an RFC 3339 time (2026-01-31T12:00:00Z)` };
}

/** An option given twice, by every command (one of its values would be dropped without a word). */
export function givenTwice(option: string): string {
  return `--${option} is given twice: give each option once`;
}

/** The command's flags, or a message naming the bad one (commands.ts makes it a usage error). */
export function parseAuditExportArgs(args: string[]): AuditExportCommand | string {
  let values: Record<string, string | undefined>;
  let tokens: { kind: string; name?: string }[];
  try {
    ({ values, tokens } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      tokens: true,
      options: {
        from: { type: 'string' },
        to: { type: 'string' },
        account: { type: 'string' },
        format: { type: 'string' },
      },
    }));
  } catch (err) {
    // parseArgs names the option: "Unknown option '--form'", "Option '--to <value>' argument missing".
    return err instanceof Error ? err.message : String(err);
  }
  const named = tokens.flatMap((t) => (t.kind === 'option' && t.name !== undefined ? [t.name] : []));
  const twice = named.find((name, i) => named.indexOf(name) !== i);
  if (twice !== undefined) return givenTwice(twice);
  const from = bound('from', values['from']);
  if (typeof from === 'object' && from !== null) return from.refused;
  const to = bound('to', values['to']);
  if (typeof to === 'object' && to !== null) return to.refused;
  // microsecondInstant's texts order as their instants do.
  if (from && to && from >= to) return `--to must be later than --from`;
  const format = values['format'] ?? 'jsonl';
  if (!(AUDIT_FORMATS as readonly string[]).includes(format))
    return `--format is one of ${AUDIT_FORMATS.join(', ')}, not "${format}"`;
  const account = values['account'] ?? null;
  if (account !== null && !/^[^@\s]+@[^@\s]+$/.test(account)) return `--account "${account}" is not an e-mail address`;
  return { name: 'audit:export', from, to, account, format: format as AuditFormat };
}

/** One exported record: who, which key, what, why, which request, when, how it ended, what it cost. */
export interface AuditRecord {
  search_id: string;
  account: string;
  key_id: string;
  kind: string;
  permissible_purpose: string | null;
  request_id: string;
  created_at: string;
  completed_at: string | null;
  outcome: string;
  credits: number;
}

export const AUDIT_COLUMNS: readonly (keyof AuditRecord)[] = [
  'search_id',
  'account',
  'key_id',
  'kind',
  'permissible_purpose',
  'request_id',
  'created_at',
  'completed_at',
  'outcome',
  'credits',
];

function recordOf(e: AuditEntry): AuditRecord {
  return {
    search_id: e.id,
    account: e.account_email,
    key_id: e.key_id,
    kind: e.kind,
    permissible_purpose: e.permissible_purpose,
    request_id: e.request_id,
    created_at: e.created_at.toISOString(),
    completed_at: e.completed_at?.toISOString() ?? null,
    outcome: e.status,
    credits: creditsSpent(e),
  };
}

/**
 * Text a spreadsheet would take for a formula: starting with a tab or a carriage return, or with `=`, `+`,
 * `-` or `@` after any leading white space (spreadsheets trim it before they look: ` =HYPERLINK(…)` runs).
 */
const FORMULA = /^[\t\r]|^\s*[=+\-@]/;

/**
 * RFC 4180: a field with a comma, a quote or a line break (or edge spaces) is quoted, quotes doubled; null is
 * empty. Text a spreadsheet would take for a formula (FORMULA: a client chooses its request id, an e-mail may
 * start with `+`) gets a leading `'`, as OWASP advises for CSV exports, so opening the file runs nothing.
 * The JSON-lines export is verbatim.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = typeof value === 'string' && FORMULA.test(value) ? `'${value}` : String(value);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const lineOf = (format: AuditFormat, r: AuditRecord): string =>
  format === 'jsonl' ? `${JSON.stringify(r)}\n` : `${AUDIT_COLUMNS.map((c) => csvField(r[c])).join(',')}\r\n`;

export interface AuditExportIo {
  out: Writable;
  /** Progress and messages; a bar when it is a terminal. */
  err: NodeJS.WritableStream & { isTTY?: boolean };
  /** Searches read per query (default 1,000). */
  batchSize?: number;
  /** The upper bound when no --to is given (default: now, when the export starts). */
  now?: Date;
}

/**
 * Streams the audit trail: one keyset batch of searches at a time, each written (waiting for the
 * stream to drain) before the next is read, so memory holds one batch whatever the table's size.
 * Returns the exit code.
 */
export async function exportAudit(
  repos: { history: SearchHistoryRepository; accounts: AccountsRepository },
  cmd: AuditExportCommand,
  io: AuditExportIo,
): Promise<number> {
  let accountId: string | null = null;
  if (cmd.account !== null) {
    const account = await repos.accounts.findCredentials(cmd.account);
    if (!account) {
      io.err.write(`audit:export: no account with e-mail ${cmd.account}\n`);
      return 1;
    }
    accountId = account.id;
  }
  // Without --to, a snapshot: searches made while the export runs are not half in it.
  const filter = { accountId, since: cmd.from, until: cmd.to ?? io.now ?? new Date() };
  const batchSize = io.batchSize ?? 1_000;
  const bar = io.err.isTTY
    ? new SingleBar({
        stream: io.err as NodeJS.WriteStream,
        format: 'audit:export [{bar}] {percentage}% | {value}/{total} searches | {eta_formatted} left',
        hideCursor: true,
      })
    : null;
  bar?.start(await repos.history.auditCount(filter), 0);
  // A failed write is answered through its callback (write below); the stream then also emits the error,
  // which without a listener Node would throw as an unhandled 'error' event, with a stack trace.
  io.out.on('error', () => undefined);
  let written = 0;
  let failed: OutputFailed | null = null;
  try {
    if (cmd.format === 'csv') await write(io.out, `${AUDIT_COLUMNS.join(',')}\r\n`);
    let after: SearchPosition | null = null;
    for (;;) {
      const batch = await repos.history.auditPage(filter, after, batchSize);
      if (batch.length > 0) await write(io.out, batch.map((e) => lineOf(cmd.format, recordOf(e))).join(''));
      written += batch.length;
      bar?.update(written);
      if (batch.length < batchSize) break;
      after = batch[batch.length - 1]!.position;
    }
  } catch (error) {
    if (!(error instanceof OutputFailed)) throw error;
    failed = error;
  } finally {
    bar?.stop();
  }
  if (failed !== null) {
    io.err.write(`audit:export: cannot write the output (${failed.message}) after ${written} search(es): incomplete\n`);
    return 1;
  }
  io.err.write(`audit:export: ${written} search(es)\n`);
  return 0;
}

/**
 * The output refused a write: its reader went away (`| head`: EPIPE) or its disk is full. Not a Postgres
 * failure, which a socket error such as EPIPE would otherwise be reported as.
 */
class OutputFailed extends Error {
  override readonly name = 'OutputFailed';
}

/**
 * Writes and waits until the stream has taken the chunk (so a slow pipe slows the reads: backpressure), or
 * rejects with OutputFailed when it could not.
 */
function write(out: Writable, chunk: string): Promise<void> {
  return new Promise((resolve, reject) => {
    out.write(chunk, (error) => (error ? reject(new OutputFailed(error.message, { cause: error })) : resolve()));
  });
}
