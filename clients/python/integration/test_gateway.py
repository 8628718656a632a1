"""Integration tests against a real Dossier gateway and worker.

Run with DOSSIER_BASE_URL pointing at a gateway whose SIGNUP_CREDITS=3; the
suite fails (does not skip) when it is unset.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import time
import unittest
import uuid
from datetime import date, datetime, timedelta, timezone

import dossier

PHONE = "+14155552671"
PASSWORD = "correct horse battery"
BASE_URL = ""


def setUpModule() -> None:
    global BASE_URL
    BASE_URL = os.environ.get("DOSSIER_BASE_URL", "")
    if not BASE_URL:
        raise AssertionError("DOSSIER_BASE_URL is not set: point it at a running gateway (SIGNUP_CREDITS=3)")


def unique_email(tag: str) -> str:
    return f"py-{tag}-{uuid.uuid4().hex[:12]}@example.com"


def new_account(tag: str) -> "tuple[str, dossier.Registration, dossier.Client]":
    email = unique_email(tag)
    reg = dossier.Client.register(email=email, password=PASSWORD, base_url=BASE_URL)
    return email, reg, client_for(reg.api_key)


def client_for(api_key: str) -> dossier.Client:
    return dossier.Client(api_key=api_key, base_url=BASE_URL, timeout=15, poll_timeout=15)


class AccountsTest(unittest.TestCase):
    def test_register_login_and_keys(self) -> None:
        email, reg, client = new_account("keys")
        self.assertTrue(reg.api_key.startswith("dsk_"))
        self.assertEqual(reg.account.email, email)
        self.assertTrue(reg.account.id.startswith("acct_"))
        self.assertEqual(reg.credits_remaining, 3)
        self.assertEqual(reg.http_status, 201)

        account = client.account()
        self.assertEqual((account.id, account.email, account.credits_remaining), (reg.account.id, email, 3))

        login = dossier.Client.login(email=email, password=PASSWORD, base_url=BASE_URL)
        self.assertTrue(login.api_key.startswith("dsk_"))
        self.assertNotEqual(login.api_key, reg.api_key)
        self.assertTrue(login.key_id.startswith("key_"))
        self.assertEqual(client_for(login.api_key).account().id, reg.account.id)

        created = client.create_key("ci")
        self.assertTrue(created.api_key.startswith("dsk_"))
        keys = {k.id: k for k in client.list_keys()}
        self.assertIn(login.key_id, keys)
        self.assertIn(created.key_id, keys)
        self.assertEqual(keys[created.key_id].name, "ci")
        self.assertEqual(keys[created.key_id].prefix, created.api_key[: len(keys[created.key_id].prefix)])
        self.assertEqual(len(keys), 3)
        self.assertFalse(any(k.revoked for k in keys.values()))

    def test_revoked_key_is_refused(self) -> None:
        _, _, client = new_account("revoke")
        extra = client.create_key("short-lived")
        extra_client = client_for(extra.api_key)
        extra_client.account()  # works before the revocation
        revoked = client.revoke_key(extra.key_id)
        self.assertEqual(revoked.id, extra.key_id)
        self.assertTrue(revoked.revoked)
        with self.assertRaises(dossier.AuthenticationError) as ctx:
            extra_client.account()
        self.assertEqual(ctx.exception.status, 401)
        self.assertEqual(ctx.exception.code, "unauthorized")
        self.assertTrue(ctx.exception.request_id)
        with self.assertRaises(dossier.AuthenticationError):
            extra_client.verify_phone(PHONE)
        client.account()  # the other key still works
        self.assertTrue({k.id: k for k in client.list_keys()}[extra.key_id].revoked)

    def test_account_errors(self) -> None:
        email, _, client = new_account("errors")
        with self.assertRaises(dossier.ConflictError) as ctx:
            dossier.Client.register(email=email.upper(), password=PASSWORD, base_url=BASE_URL)
        self.assertEqual(ctx.exception.code, "email_taken")
        with self.assertRaises(dossier.AuthenticationError) as ctx2:
            dossier.Client.login(email=email, password="wrong password!", base_url=BASE_URL)
        self.assertEqual(ctx2.exception.code, "invalid_credentials")
        with self.assertRaises(dossier.NotFoundError):
            client.get_search("srch_doesnotexist")
        with self.assertRaises(dossier.NotFoundError):
            client.revoke_key("key_doesnotexist")


class RequestIdTest(unittest.TestCase):
    def test_the_gateway_echoes_the_callers_request_id(self) -> None:
        rid = f"py-it/{uuid.uuid4().hex}"
        reg = dossier.Client.register(email=unique_email("rid"), password=PASSWORD, base_url=BASE_URL, request_id=rid)
        self.assertEqual(reg.request_id, rid)
        client = client_for(reg.api_key)
        self.assertEqual(client.list_keys(request_id=rid).request_id, rid)
        with self.assertRaises(dossier.NotFoundError) as ctx:
            client.get_search("srch_doesnotexist", request_id=rid)
        self.assertEqual(ctx.exception.request_id, rid)
        self.assertNotEqual(client.account().request_id, rid, "without one, the gateway makes one up")


class LookupsTest(unittest.TestCase):
    def test_phone_lookups_spend_credits_until_402(self) -> None:
        _, reg, client = new_account("credits")
        self.assertEqual(reg.credits_remaining, 3)
        balances = []
        for _ in range(3):
            result = client.verify_phone(PHONE)
            self.assertEqual(result.status, "success")
            self.assertTrue(result.search_id.startswith("srch_"))
            self.assertEqual(len(result.results), 1)
            item = result.results[0]
            self.assertEqual(item["e164"], PHONE)
            self.assertIs(item["valid"], True)
            self.assertEqual(result.credits_spent, 1)
            self.assertTrue(any(s["provider"] == "libphonenumber" for s in result.sources))
            # The key's rate limit, as every answer reports it (the gateway's default burst: 100).
            limit = result.rate_limit
            self.assertEqual(limit["limit"], 100)
            self.assertIsInstance(limit["remaining"], int)
            self.assertIsInstance(limit["reset"], int)
            balances.append(result.credits_remaining)
        self.assertEqual(balances, [2, 1, 0])
        with self.assertRaises(dossier.InsufficientCreditsError) as ctx:
            client.verify_phone(PHONE)
        err = ctx.exception
        self.assertEqual((err.status, err.code), (402, "insufficient_credits"))
        self.assertEqual(err.credits_remaining, 0)
        self.assertTrue(err.request_id)
        account = client.account()
        self.assertEqual(account.credits_remaining, 0)
        self.assertEqual(account.rate_limit["limit"], 100)

    def test_validation_errors_carry_field_details(self) -> None:
        _, _, client = new_account("validation")
        with self.assertRaises(dossier.ValidationError) as ctx:
            client.verify_phone("abc")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (400, "validation_error"))
        self.assertIn("phone", [d["field"] for d in ctx.exception.details])
        with self.assertRaises(dossier.ValidationError) as ctx2:
            client.search_person(location="Berlin")
        self.assertIn("name", [d["field"] for d in ctx2.exception.details])
        with self.assertRaises(dossier.ValidationError) as ctx3:
            client.search(query="John Smith", type="planet")
        self.assertIn("type", [d["field"] for d in ctx3.exception.details])
        # top chooses the sites a username is checked on: without a username the gateway refuses it, naming it.
        with self.assertRaises(dossier.ValidationError) as ctx4:
            client.search_person("John Smith", top=5)
        self.assertIn("top", [d["field"] for d in ctx4.exception.details])
        self.assertEqual(client.account().credits_remaining, 3)

    def test_person_search_returns_no_results_and_spends_nothing(self) -> None:
        _, _, client = new_account("person")
        result = client.search(name="John Smith")
        self.assertEqual(result.status, "success")
        self.assertEqual(result.results, [])
        self.assertEqual(result.credits_remaining, 3)
        person = client.search_person("Jane Doe", location="Austin, TX", age_range="30-40")
        self.assertEqual(person.results, [])
        generic = client.search(query="John Smith", type="person", country="US")
        self.assertEqual(generic.results, [])
        company = client.search_company("Acme Widgets Ltd", country="GB")
        self.assertEqual((company.results, company.credits_spent), ([], 0))
        # No sanctions list is imported: a screen finds no one, and costs nothing.
        screened = client.screen("John Smith", birth_year=1970, country="US")
        self.assertEqual((screened.status, screened.results, screened.credits_spent), ("success", [], 0))
        self.assertEqual(client.account().credits_remaining, 3)

    def test_an_email_verification_answers_one_result_even_when_no_source_can_tell(self) -> None:
        # The gateway under test resolves no MX records and probes no mailbox: the address is still described.
        _, _, client = new_account("email")
        result = client.verify_email("grace.hopper@example.com")
        self.assertEqual(len(result.results), 1)
        item = result.results[0]
        self.assertEqual((item["email"], item["syntax_valid"]), ("grace.hopper@example.com", True))
        self.assertEqual(item["deliverability"], "unknown")
        self.assertEqual(result.credits_spent, 0)
        self.assertEqual(client.account().credits_remaining, 3)

    def test_async_pending_then_get_search(self) -> None:
        _, _, client = new_account("async")
        pending = client.verify_phone(PHONE, wait=False)
        self.assertEqual(pending.status, "pending")
        self.assertTrue(pending.pending)
        self.assertEqual(pending.http_status, 202)
        self.assertEqual(pending.results, [])
        done = client.get_search(pending.search_id, wait=True)
        self.assertEqual(done.status, "success")
        self.assertEqual(done.search_id, pending.search_id)
        self.assertEqual(done.results[0]["e164"], PHONE)
        self.assertEqual(done.credits_remaining, 2)
        again = client.get_search(pending.search_id)
        self.assertEqual(again.results, done.results)

        person = client.search(name="John Smith", wait=False)
        self.assertTrue(person.pending)
        finished = client.get_search(person.search_id, wait=True)
        self.assertEqual(finished.results, [])
        self.assertEqual(client.account().credits_remaining, 2)

    def test_idempotency_key_charges_once(self) -> None:
        _, _, client = new_account("idem")
        key = f"py-{uuid.uuid4()}"
        first = client.verify_phone(PHONE, idempotency_key=key)
        second = client.verify_phone(PHONE, idempotency_key=key)
        self.assertEqual(second.search_id, first.search_id)
        self.assertTrue(second.replayed)
        self.assertEqual(second.credits_spent, 0)
        self.assertEqual(client.account().credits_remaining, 2)
        with self.assertRaises(dossier.ConflictError) as ctx:
            client.verify_phone("+442071838750", idempotency_key=key)
        self.assertEqual(ctx.exception.code, "idempotency_conflict")



class SearchHistoryTest(unittest.TestCase):
    def test_pages_of_the_accounts_own_searches(self) -> None:
        _, _, client = new_account("history")
        done = [client.verify_phone(PHONE).search_id for _ in range(3)]
        first = client.list_searches(kind="phone", limit=2)
        self.assertEqual([s["search_id"] for s in first.searches], done[:0:-1])
        self.assertEqual(first.searches[0]["status"], "succeeded")
        self.assertIsNotNone(first.next_cursor)
        self.assertEqual([s["search_id"] for s in client.iter_searches(kind="phone", limit=2)], done[::-1])
        self.assertEqual(client.list_searches(kind="email").searches, [])
        # datetime and date filters reach the gateway as RFC 3339 date-times it accepts.
        day_ago = datetime.now(timezone.utc) - timedelta(days=1)
        self.assertEqual([s["search_id"] for s in client.list_searches(kind="phone", since=day_ago).searches], done[::-1])
        self.assertEqual(client.list_searches(kind="phone", until=day_ago).searches, [])
        today = date.today()
        window = client.list_searches(kind="phone", since=today - timedelta(days=1), until=today + timedelta(days=2))
        self.assertEqual(len(window.searches), 3)
        _, _, other = new_account("history-other")
        self.assertEqual(other.list_searches().searches, [])


class BatchTest(unittest.TestCase):
    def test_batch_with_a_valid_and_an_invalid_item(self) -> None:
        _, _, client = new_account("batch")
        batch = client.batch(
            [
                {"kind": "phone", "input": {"phone": PHONE}},
                {"kind": "phone", "input": {"phone": "abc"}},
            ]
        )
        self.assertEqual(batch.status, "success")
        self.assertTrue(batch.batch_id.startswith("bat_"))
        self.assertEqual(len(batch.items), 2)
        phone, invalid = batch.items
        self.assertTrue(phone.ok, phone)
        self.assertTrue(phone.search_id.startswith("srch_"))
        self.assertEqual(phone.results[0]["e164"], PHONE)
        self.assertTrue(invalid.failed, invalid)
        self.assertIsInstance(invalid.error, dossier.ValidationError)
        assert invalid.error is not None
        self.assertEqual(invalid.error.code, "validation_error")
        # Only the valid item is charged: 3 - 1.
        self.assertEqual(batch.credits_remaining, 2)
        self.assertEqual(client.account().credits_remaining, 2)

        again = client.get_batch(batch.batch_id)
        self.assertEqual(again.status, "success")
        self.assertEqual(again.batch_id, batch.batch_id)
        self.assertEqual([i.status for i in again.items], ["success", "error"])
        self.assertEqual(again.items[0].search_id, phone.search_id)
        self.assertEqual(client.get_search(phone.search_id).results, phone.results)

        with self.assertRaises(dossier.ValidationError) as ctx:
            client.batch([{"kind": "phone", "input": {"phone": PHONE}}] * 101)
        self.assertEqual(ctx.exception.status, 400)
        with self.assertRaises(dossier.NotFoundError):
            client.get_batch("bat_doesnotexist")
        self.assertEqual(client.account().credits_remaining, 2)


class WebhooksTest(unittest.TestCase):
    def test_create_list_and_delete(self) -> None:
        _, _, client = new_account("hooks")
        # An address literal from a documentation range: public-looking, resolves without DNS.
        url = "https://203.0.113.10/dossier"
        created = client.create_webhook(url, events=["search.completed", "batch.completed"])
        self.assertEqual(created.http_status, 201)
        self.assertTrue(created.secret.startswith("whsec_"))
        self.assertTrue(created.webhook.id.startswith("wh_"))
        self.assertEqual(created.webhook.url, url)
        self.assertEqual(sorted(created.webhook.events), ["batch.completed", "search.completed"])
        listed = client.list_webhooks()
        self.assertEqual([w.id for w in listed], [created.webhook.id])
        self.assertEqual(client.webhook_deliveries(created.webhook.id), [])
        self.assertEqual(client.delete_webhook(created.webhook.id).id, created.webhook.id)
        self.assertEqual(client.list_webhooks(), [])
        with self.assertRaises(dossier.NotFoundError):
            client.delete_webhook(created.webhook.id)
        with self.assertRaises(dossier.ValidationError) as ctx:
            client.create_webhook("ftp://example.com/hook")
        self.assertIn("url", [d["field"] for d in ctx.exception.details])
        self.assertEqual(client.account().credits_remaining, 3)

    def test_verify_a_signature_computed_as_the_server_does(self) -> None:
        _, _, client = new_account("sign")
        created = client.create_webhook("https://203.0.113.10/verify")
        client.delete_webhook(created.webhook.id)
        body = json.dumps({"id": "evt_x", "type": "search.completed", "created_at": "2026-11-23T09:00:00.000Z",
                           "data": {"status": "success", "search_id": "srch_x", "results": []}})
        t = int(time.time())
        mac = hmac.new(created.secret.encode(), f"{t}.{body}".encode(), hashlib.sha256).hexdigest()
        event = dossier.Webhook.verify(body.encode(), f"t={t},v1={mac}", created.secret)
        self.assertEqual((event.id, event.type), ("evt_x", "search.completed"))
        with self.assertRaises(dossier.SignatureVerificationError):
            dossier.Webhook.verify(body, f"t={t},v1={mac}", "whsec_" + "A" * 43)


class TestKeysTest(unittest.TestCase):
    def test_a_test_key_looks_up_for_free(self) -> None:
        _, _, client = new_account("sandbox")
        issued = client.create_key("sandbox", mode="test")
        self.assertTrue(issued.api_key.startswith("dsk_test_"))
        modes = {k.id: k.mode for k in client.list_keys()}
        self.assertEqual(modes[issued.key_id], "test")
        self.assertEqual(sorted(modes.values()), ["live", "test"])

        sandbox = client_for(issued.api_key)
        result = sandbox.verify_phone("+15555550100")
        self.assertEqual(result.status, "success")
        self.assertEqual(result.results[0]["line_type"], "mobile")
        self.assertIs(result.results[0]["valid"], True)
        self.assertEqual(result.credits_spent, 0)
        self.assertEqual(result.credits_remaining, 3)
        self.assertEqual(client.account().credits_remaining, 3)


if __name__ == "__main__":
    unittest.main()
