import { hasSocketErrorCode } from '@dossier/domain';

interface PgErrorShape {
  code?: unknown;
  message?: unknown;
  driverError?: unknown;
  cause?: unknown;
}

/** The error itself, TypeORM's wrapped driver error, and their causes (a few levels deep). */
function* chain(err: unknown, depth = 0): Generator<PgErrorShape> {
  if (typeof err !== 'object' || err === null || depth > 4) return;
  const e = err as PgErrorShape;
  yield e;
  yield* chain(e.driverError, depth + 1);
  yield* chain(e.cause, depth + 1);
}

function sqlState(err: unknown): string | undefined {
  for (const e of chain(err)) if (typeof e.code === 'string') return e.code;
  return undefined;
}

export function isUniqueViolation(err: unknown): boolean {
  return sqlState(err) === '23505';
}

/** Postgres aborted the statement to break a deadlock (it wrote nothing): running it again is safe. */
export function isDeadlock(err: unknown): boolean {
  return sqlState(err) === '40P01';
}

/**
 * Runs `statement` (one statement, or a transaction) and runs it again when Postgres aborted it to break
 * a deadlock — it rolled back whole — at most `retries` more times.
 */
export async function retryingDeadlocks<T>(statement: () => Promise<T>, retries = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (err) {
      if (!isDeadlock(err) || attempt > retries) throw err;
    }
  }
}

const POOL_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error/i;

/**
 * Whether an error means Postgres is unreachable or cannot take the query now (so the answer is a
 * retryable `503`, not a `500`): a socket error, SQLSTATE class 08 (connection exception), 57P0x
 * (shutting down / cannot connect now), 57014 (the statement was cancelled: its `statement_timeout` ran
 * out, so it was rolled back), 53300 (too many connections), or pg's own pool messages.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (hasSocketErrorCode(err)) return true;
  for (const e of chain(err)) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (/^08/.test(code) || /^57P0/.test(code) || code === '57014' || code === '53300') return true;
    if (typeof e.message === 'string' && POOL_MESSAGES.test(e.message)) return true;
  }
  return false;
}

/**
 * What to tell an operator when a process cannot start because Postgres is unreachable: the server and
 * database `DATABASE_URL` names (never its password) and why; null for any other failure.
 */
export function unreachableDatabase(err: unknown, databaseUrl: string): string | null {
  if (!isDatabaseUnavailable(err)) return null;
  let where = 'the server';
  try {
    const url = new URL(databaseUrl);
    where = `${url.hostname}:${url.port || '5432'}${url.pathname}`;
  } catch {
    // an unparseable URL was refused at boot already; say nothing of it here
  }
  const why = err instanceof Error ? err.message : String(err);
  return `cannot reach Postgres at ${where} (DATABASE_URL): ${why}`;
}

/**
 * Creates an app (the gateway's, a worker's): when that fails because Postgres is unreachable, `fatal`
 * says so in one line (unreachableDatabase) and the process exits 1; any other failure is thrown.
 */
export async function createOrExit<T>(
  create: () => Promise<T>,
  databaseUrl: string,
  fatal: (message: string) => void,
): Promise<T> {
  try {
    return await create();
  } catch (err) {
    const db = unreachableDatabase(err, databaseUrl);
    if (db === null) throw err;
    fatal(db);
    process.exit(1);
  }
}
