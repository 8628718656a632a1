import { Client } from 'pg';
import { testEnv, withDatabase } from './test-env';
import { runCli } from './processes';
import { waitFor } from './wait-for';

/** Direct SQL against the run's database, for asserting rows and balances. */
export async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: testEnv.databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * `second` run beside a statement that holds its rows: `statement` runs in a transaction left open (as one
 * statement of an overlapping retention pass holds the rows it wrote until it commits), then `second`
 * starts. `finished`: `second` returned with that transaction still open; `waited`: it waited for it (seen
 * in pg_stat_activity, not timed). The transaction then commits, and `second`'s result is returned.
 */
export async function besideHeldRows<T>(
  statement: string,
  params: unknown[],
  second: () => Promise<T>,
): Promise<{ outcome: 'finished' | 'waited'; result: T }> {
  const holder = new Client({ connectionString: testEnv.databaseUrl });
  await holder.connect();
  const waiting = new AbortController();
  try {
    await holder.query('BEGIN');
    const pid = ((await holder.query('SELECT pg_backend_pid() AS pid')).rows[0] as { pid: number }).pid;
    await holder.query(statement, params);
    const running = second();
    const blocked = waitFor(
      () =>
        sql<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [
          pid,
        ]),
      (rows) => rows[0]!.n > 0,
      { timeoutMs: 10_000, what: 'a statement to wait for the held rows', signal: waiting.signal },
    );
    const outcome = await Promise.race([
      running.then(() => 'finished' as const),
      blocked.then(() => 'waited' as const),
    ]);
    waiting.abort();
    await blocked.catch(() => undefined);
    await holder.query('COMMIT');
    return { outcome, result: await running };
  } finally {
    waiting.abort();
    await holder.end();
  }
}

export interface LedgerState {
  balance: number;
  ledger_sum: number;
  reserves: number;
  captures: number;
  releases: number;
  pending: number;
}

/** Balance, ledger sum and phase counts of one account: the money invariants in one row. */
export async function ledgerState(accountId: string): Promise<LedgerState> {
  const [row] = await sql<LedgerState>(
    `SELECT a.balance::int AS balance,
            (SELECT COALESCE(SUM(amount), 0)::int FROM credit_ledger WHERE account_id = a.id) AS ledger_sum,
            (SELECT count(*)::int FROM credit_ledger WHERE account_id = a.id AND phase = 'reserve') AS reserves,
            (SELECT count(*)::int FROM credit_ledger WHERE account_id = a.id AND phase = 'capture') AS captures,
            (SELECT count(*)::int FROM credit_ledger WHERE account_id = a.id AND phase = 'release') AS releases,
            (SELECT count(*)::int FROM searches WHERE account_id = a.id AND status = 'pending') AS pending
       FROM accounts a WHERE a.id = $1`,
    [accountId],
  );
  if (!row) throw new Error(`no account ${accountId}`);
  return row;
}

/**
 * The ledger state of an account with nothing pending whose ledger sums to its balance: what every
 * money test expects once lookups have settled.
 */
export function settled(
  balance: number,
  phases: { reserves: number; captures: number; releases: number },
): LedgerState {
  return { balance, ledger_sum: balance, ...phases, pending: 0 };
}

/** SQL on the server's `postgres` maintenance database (CREATE/DROP DATABASE for tests that need their own). */
export async function adminSql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: withDatabase(testEnv.baseDatabaseUrl, 'postgres') });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * A database of the test file's own beside the run's, migrated by the compiled CLI: for tests whose
 * processes act on every row (the worker's reconciler and retention) or that count every row (the CLI's
 * import, export and suppression list), so that no other file's rows meet them. A leftover of a run that
 * was killed is dropped first; `drop` removes it (connections closed by force).
 */
export async function ownDatabase(suffix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const database = `${new URL(testEnv.databaseUrl).pathname.slice(1)}_${suffix}`.slice(0, 63);
  const url = withDatabase(testEnv.baseDatabaseUrl, database);
  await adminSql(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await adminSql(`CREATE DATABASE "${database}"`);
  const migrated = await runCli(['db:migrate'], { DATABASE_URL: url });
  if (migrated.code !== 0) throw new Error(`db:migrate failed: ${migrated.stderr}`);
  const drop = async () => {
    await adminSql(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  };
  return { url, drop };
}

/**
 * Makes `url` the database `testEnv.databaseUrl` names — and so `sql`, `ledgerState` and every Stack
 * started meanwhile — for the calling test file, until the returned function restores the run's.
 * Jest runs one file at a time in a process, so no other file sees the switch.
 */
export function switchDatabase(url: string): () => void {
  const previous = process.env['DOSSIER_TEST_DATABASE_URL'];
  process.env['DOSSIER_TEST_DATABASE_URL'] = url;
  return () => {
    process.env['DOSSIER_TEST_DATABASE_URL'] = previous;
  };
}
