import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Batched reservations (ADR 0023): one function call reserves many lookups, in the order given, each on
 * its own — debit only if the balance covers it, the search row, the `reserve` ledger entry — so a
 * gateway commits once per batch of concurrent requests instead of once per request. An item whose
 * Idempotency-Key another search holds is undone alone (its own subtransaction), not the batch.
 * Outcomes per item (`o_ord` is its 1-based position): `reserved` with the balance after it,
 * `insufficient`, or `idempotency_race`.
 */
export class BatchedReservations1790000000000 implements MigrationInterface {
  name = 'BatchedReservations1790000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION dossier_reserve(
        p_ids text[], p_accounts text[], p_keys text[], p_kinds text[], p_inputs jsonb[], p_costs integer[],
        p_idempotency_keys text[], p_request_hashes text[], p_request_ids text[], p_purposes text[], p_batch_ids text[]
      ) RETURNS TABLE (o_ord integer, o_outcome text, o_balance bigint)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        i integer;
        after bigint;
      BEGIN
        FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
          o_ord := i;
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
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP FUNCTION dossier_reserve(text[], text[], text[], text[], jsonb[], integer[], text[], text[], text[], text[], text[])`,
    );
  }
}
