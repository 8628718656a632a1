import { createHash } from 'node:crypto';
import type { QueryRunner } from 'typeorm';

/**
 * The SQL functions the credits module relies on, each defined once, here (issue 42). A migration applies
 * them (`applySqlFunctions`): a change to a definition ships with a new migration that calls it again, and a
 * test (sql-functions.int-spec.ts) fails while the migrated database's definitions are not these.
 */
interface SqlFunction {
  name: string;
  /** The argument types, as `DROP FUNCTION` names the function. */
  args: string;
  /** Earlier argument lists of the same name, dropped first (a changed signature is another function). */
  replaces: string[];
  create: string;
}

/**
 * `dossier_reserve` (ADR 0023, ADR 0019): reserves many lookups in one call, in the order given, each on its
 * own — debit only if the balance covers it, the search row, the `reserve` ledger entry. Outcomes per item
 * (`o_ord` is its 1-based position): `reserved` with the balance after it, `insufficient`,
 * `idempotency_race` (another search holds its Idempotency-Key: that item alone is undone), or
 * `idempotency_conflict` (a batch of the account holds the key within `p_key_ttl_hours`; the account's row
 * lock, taken first, orders this against that batch). The common batch — no Idempotency-Key, every
 * account's balance covering all its items — takes a set-based path with the same outcome: lock the
 * accounts in id order (bytewise, as the gateway sorts them), debit each once by its items' sum, insert the
 * searches and ledger entries in one statement each, and derive each item's balance from the account's
 * final balance plus the costs of its later items.
 */
const DOSSIER_RESERVE: SqlFunction = {
  name: 'dossier_reserve',
  args: 'text[], text[], text[], text[], jsonb[], integer[], text[], text[], text[], text[], text[], integer',
  replaces: ['text[], text[], text[], text[], jsonb[], integer[], text[], text[], text[], text[], text[]'],
  create: `CREATE FUNCTION dossier_reserve(
  p_ids text[], p_accounts text[], p_keys text[], p_kinds text[], p_inputs jsonb[], p_costs integer[],
  p_idempotency_keys text[], p_request_hashes text[], p_request_ids text[], p_purposes text[], p_batch_ids text[],
  p_key_ttl_hours integer
) RETURNS TABLE (o_ord integer, o_outcome text, o_balance bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  i integer;
  after bigint;
  short integer;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM unnest(p_idempotency_keys) AS k WHERE k IS NOT NULL) THEN
    PERFORM 1 FROM accounts WHERE id = ANY (p_accounts) ORDER BY id COLLATE "C" FOR UPDATE;
    SELECT count(*) INTO short
      FROM (SELECT a, sum(c) AS total FROM unnest(p_accounts, p_costs) AS t(a, c) GROUP BY a) AS need
      LEFT JOIN accounts x ON x.id = need.a
     WHERE x.id IS NULL OR x.balance < need.total;
    IF short = 0 THEN
      UPDATE accounts x SET balance = x.balance - need.total
        FROM (SELECT a, sum(c)::bigint AS total FROM unnest(p_accounts, p_costs) AS t(a, c) GROUP BY a) AS need
       WHERE x.id = need.a;
      INSERT INTO searches (id, account_id, key_id, kind, input, cost, idempotency_key, request_hash, request_id, permissible_purpose, batch_id)
      SELECT t.id, t.a, t.k, t.kind, t.input, t.c, NULL, t.h, t.r, t.p, t.b
        FROM unnest(p_ids, p_accounts, p_keys, p_kinds, p_inputs, p_costs, p_request_hashes, p_request_ids, p_purposes, p_batch_ids)
             AS t(id, a, k, kind, input, c, h, r, p, b);
      INSERT INTO credit_ledger (account_id, search_id, phase, amount)
      SELECT t.a, t.id, 'reserve', -t.c::bigint FROM unnest(p_ids, p_accounts, p_costs) AS t(id, a, c) WHERE t.c > 0;
      RETURN QUERY
        SELECT t.ord::integer, 'reserved'::text,
               x.balance + coalesce(sum(t.c) OVER (PARTITION BY t.a ORDER BY t.ord
                                    ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0)::bigint
          FROM unnest(p_accounts, p_costs) WITH ORDINALITY AS t(a, c, ord) JOIN accounts x ON x.id = t.a
         ORDER BY t.ord;
      RETURN;
    END IF;
  END IF;
  FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
    o_ord := i;
    IF p_idempotency_keys[i] IS NOT NULL THEN
      -- The account's row lock orders this against a batch of the account (it takes the same lock
      -- before looking for a search with its key), so one of the two sees the other's key.
      PERFORM 1 FROM accounts WHERE id = p_accounts[i] FOR UPDATE;
      IF EXISTS (SELECT 1 FROM batches
                  WHERE account_id = p_accounts[i] AND idempotency_key = p_idempotency_keys[i]
                    AND created_at >= now() - make_interval(hours => p_key_ttl_hours)) THEN
        o_outcome := 'idempotency_conflict';
        o_balance := NULL;
        RETURN NEXT;
        CONTINUE;
      END IF;
    END IF;
    UPDATE accounts SET balance = balance - p_costs[i]
     WHERE id = p_accounts[i] AND balance >= p_costs[i]
    RETURNING balance INTO after;
    IF NOT FOUND THEN
      o_outcome := 'insufficient';
      o_balance := NULL;
      RETURN NEXT;
      CONTINUE;
    END IF;
    IF p_idempotency_keys[i] IS NULL THEN
      INSERT INTO searches (id, account_id, key_id, kind, input, cost, idempotency_key, request_hash, request_id, permissible_purpose, batch_id)
      VALUES (p_ids[i], p_accounts[i], p_keys[i], p_kinds[i], p_inputs[i], p_costs[i], NULL, p_request_hashes[i], p_request_ids[i], p_purposes[i], p_batch_ids[i]);
    ELSE
      BEGIN
        INSERT INTO searches (id, account_id, key_id, kind, input, cost, idempotency_key, request_hash, request_id, permissible_purpose, batch_id)
        VALUES (p_ids[i], p_accounts[i], p_keys[i], p_kinds[i], p_inputs[i], p_costs[i], p_idempotency_keys[i], p_request_hashes[i], p_request_ids[i], p_purposes[i], p_batch_ids[i]);
      EXCEPTION WHEN unique_violation THEN
        -- the debit above is outside this block: give it back
        UPDATE accounts SET balance = balance + p_costs[i] WHERE id = p_accounts[i];
        o_outcome := 'idempotency_race';
        o_balance := NULL;
        RETURN NEXT;
        CONTINUE;
      END;
    END IF;
    IF p_costs[i] > 0 THEN
      INSERT INTO credit_ledger (account_id, search_id, phase, amount)
      VALUES (p_accounts[i], p_ids[i], 'reserve', -p_costs[i]::bigint);
    END IF;
    o_outcome := 'reserved';
    o_balance := after;
    RETURN NEXT;
  END LOOP;
END
$fn$`,
};

export const SQL_FUNCTIONS: readonly SqlFunction[] = [DOSSIER_RESERVE];

/** The version of a definition: the hash of its text, kept as the function's comment. */
export function sqlFunctionVersion(f: Pick<SqlFunction, 'create'>): string {
  return createHash('sha256').update(f.create).digest('hex').slice(0, 16);
}

/** (Re)creates every function of SQL_FUNCTIONS as defined here, marking each with its version. */
export async function applySqlFunctions(q: Pick<QueryRunner, 'query'>): Promise<void> {
  for (const f of SQL_FUNCTIONS) {
    for (const args of [...f.replaces, f.args]) await q.query(`DROP FUNCTION IF EXISTS ${f.name}(${args})`);
    await q.query(f.create);
    await q.query(`COMMENT ON FUNCTION ${f.name}(${f.args}) IS 'dossier ${sqlFunctionVersion(f)}'`);
  }
}
