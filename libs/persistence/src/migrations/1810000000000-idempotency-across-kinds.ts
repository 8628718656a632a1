import type { MigrationInterface, QueryRunner } from 'typeorm';
import { BatchedReservations1790000000000 } from './1790000000000-batched-reservations';

/**
 * One Idempotency-Key per account across lookups and batches, also under a race (ADR 0019). Before, a
 * lookup and a batch sent at the same moment with the same key each looked for the other's row before
 * either was written, so both ran and both were charged. Now `dossier_reserve` takes the account's row
 * lock before it reserves a lookup with a key and answers `idempotency_conflict` when one of the
 * account's batches holds that key within `p_key_ttl_hours`; a batch with a key takes the same lock
 * before it looks for a lookup holding its key (BatchesRepository.create). Whichever commits second
 * sees the first. Otherwise the function is migration 1790's.
 */
export class IdempotencyAcrossKinds1810000000000 implements MigrationInterface {
  name = 'IdempotencyAcrossKinds1810000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP FUNCTION dossier_reserve(text[], text[], text[], text[], jsonb[], integer[], text[], text[], text[], text[], text[])`,
    );
    await q.query(`
      CREATE FUNCTION dossier_reserve(
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
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP FUNCTION dossier_reserve(text[], text[], text[], text[], jsonb[], integer[], text[], text[], text[], text[], text[], integer)`,
    );
    await new BatchedReservations1790000000000().up(q);
  }
}
