import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';

/** The part of a pooled `pg` client this module uses. */
interface PgClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

const names = new Map<string, string>();

/** A stable prepared-statement name per SQL text: Postgres parses and plans each statement once per connection. */
function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `dossier_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * `work` on a pooled connection, given back when it ends. The connection comes through TypeORM's public API:
 * a QueryRunner lends it (`connect()` returns the driver's client) and takes it back on `release()`. See ADR 0010.
 */
async function onPooled<C, R>(db: DataSource, work: (client: C) => Promise<R>): Promise<R> {
  const runner = db.createQueryRunner();
  try {
    return await work((await runner.connect()) as C);
  } finally {
    await runner.release();
  }
}

/** Runs one hand-written SQL statement as a named prepared statement and returns its rows. */
export function queryRows<T>(db: DataSource, text: string, params: unknown[] = []): Promise<T[]> {
  return onPooled(db, (client: PgClient) => onClient(client)<T>(text, params));
}

/** A pooled `pg` client as queryGeneric uses it: the simple query protocol, and its literal escaping. */
interface SimpleClient {
  query(text: string): Promise<{ rows: unknown[] } | { rows: unknown[] }[]>;
  escapeLiteral(value: string): string;
}

/** The statements each connection has PREPAREd for queryGeneric (a new connection starts with none). */
const preparedOn = new WeakMap<object, Set<string>>();

/**
 * queryRows for a statement whose generic plan is the better one for every value: PREPAREd once per
 * connection and run under `plan_cache_mode = force_generic_plan` (SET LOCAL, in the same round trip: one
 * simple query, one implicit transaction). The person search's statement (ADR 0072), planned for each call's
 * values, spent 1–6 ms planning for 1–3 ms of execution at a million people: 4.3 ms a call against 2.7 ms
 * under its generic plan, which runs as fast. Values go in as literals escaped by `pg` itself:
 * strings, finite numbers, null (and undefined, as `pg` takes it), and arrays of strings.
 */
export function queryGeneric<T>(db: DataSource, text: string, params: readonly Literal[]): Promise<T[]> {
  return onPooled(db, async (client: SimpleClient) => {
    const args = params.map((v) => literal(client, v)).join(', ');
    const name = `${statementName(text)}_g`;
    let prepared = preparedOn.get(client);
    if (!prepared) preparedOn.set(client, (prepared = new Set()));
    if (!prepared.has(name)) {
      await client.query(`PREPARE ${name} AS ${text}`);
      prepared.add(name);
    }
    const results = await client.query(
      `SET LOCAL plan_cache_mode = force_generic_plan; EXECUTE ${name}${args === '' ? '' : `(${args})`}`,
    );
    return (Array.isArray(results) ? results[results.length - 1]! : results).rows as T[];
  });
}

/** A value queryGeneric writes into its EXECUTE. */
export type Literal = string | number | null | undefined | readonly string[];

function literal(client: SimpleClient, value: Literal): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`not a finite number: ${String(value)}`);
    return String(value);
  }
  if (typeof value === 'string') return client.escapeLiteral(value);
  return value.length === 0 ? `'{}'` : `ARRAY[${value.map((v) => client.escapeLiteral(v)).join(', ')}]`;
}

/** Runs statements on one connection: queryRows, bound to a client (or to a transaction's client). */
export type Sql = <T>(text: string, params?: unknown[]) => Promise<T[]>;

function onClient(client: PgClient): Sql {
  return async <T>(text: string, params: unknown[] = []) =>
    (await client.query({ name: statementName(text), text, values: params })).rows as T[];
}

/**
 * Runs `work` in one transaction on one pooled connection: committed when it returns, rolled back
 * when it throws (the error is rethrown). Statements are prepared as in queryRows.
 */
export async function inTransaction<R>(db: DataSource, work: (sql: Sql) => Promise<R>): Promise<R> {
  const runner = db.createQueryRunner();
  try {
    const client = (await runner.connect()) as PgClient;
    await runner.startTransaction();
    try {
      const result = await work(onClient(client));
      await runner.commitTransaction();
      return result;
    } catch (err) {
      await runner.rollbackTransaction().catch(() => {});
      throw err;
    }
  } finally {
    await runner.release();
  }
}

/**
 * A credit amount read from a `bigint` column (pg returns int8 as text). Balances are kept in the safe
 * integer range of a JavaScript number; anything beyond it is a corrupt row, not a rounding to hide.
 */
/**
 * `true` for a row (of searches or batches, aliased `alias`) made with a key of the mode in parameter
 * `param`: a test key reads only what test keys made, a live key only what live keys made (ADR 0021).
 * A null mode matches every row (the worker's own reads, for the account's webhooks).
 */
export function madeInMode(alias: string, param: string): string {
  return `(${param}::text IS NULL OR EXISTS (SELECT 1 FROM api_keys k WHERE k.id = ${alias}.key_id AND k.mode = ${param}))`;
}

export function creditsOf(value: string | number): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`credit amount ${String(value)} is not a safe integer`);
  return n;
}

/** How long an Idempotency-Key holds (API.md: within 24 hours, the same key replays). */
export const IDEMPOTENCY_TTL_HOURS = 24;

/**
 * Frees an account's Idempotency-Key held by a row of `table` older than `IDEMPOTENCY_TTL_HOURS`, so the
 * lookup of the key that follows sees only a live holder.
 */
export async function expireIdempotencyKey(
  db: DataSource,
  table: 'searches' | 'batches',
  accountId: string,
  key: string,
): Promise<void> {
  await queryRows(
    db,
    `UPDATE ${table} SET idempotency_key = NULL
      WHERE account_id = $1 AND idempotency_key = $2 AND created_at < now() - make_interval(hours => $3)`,
    [accountId, key, IDEMPOTENCY_TTL_HOURS],
  );
}

/**
 * Whether a row of `table` holds the account's Idempotency-Key within `IDEMPOTENCY_TTL_HOURS`: one
 * read, for a request of the other kind (a lookup's key is a batch's conflict, and the reverse). An
 * older holder does not count, as it would be freed before its own kind looked it up
 * (expireIdempotencyKey).
 */
export async function holdsIdempotencyKey(
  sql: Sql,
  table: 'searches' | 'batches',
  accountId: string,
  key: string,
): Promise<boolean> {
  const rows = await sql<{ held: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM ${table}
       WHERE account_id = $1 AND idempotency_key = $2 AND created_at >= now() - make_interval(hours => $3)) AS held`,
    [accountId, key, IDEMPOTENCY_TTL_HOURS],
  );
  return rows[0]?.held === true;
}

/**
 * Runs `update` — an UPDATE (or DELETE) of at most `$2` rows older than `$1` days, `RETURNING id` — again
 * until a run touches fewer than `batch` rows (the retention passes: short statements, no long lock); the total.
 */
export async function updateInBatches(
  db: DataSource,
  update: string,
  olderThanDays: number,
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await queryRows<{ id: string }>(db, update, [olderThanDays, batch]);
    total += rows.length;
    if (rows.length < batch) return total;
  }
}
