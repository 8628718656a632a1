"""Request shape: paths, headers, bodies without absent fields, routing of search()."""

from __future__ import annotations

import os
import unittest
import uuid
from unittest import mock

import dossier

from .base import KEY, FakeServerTest
from .fakeserver import ACCOUNT, answer, success


class ConstructionTest(unittest.TestCase):
    def test_key_from_environment(self) -> None:
        with mock.patch.dict(os.environ, {"DOSSIER_API_KEY": "dsk_fromenv"}):
            self.assertEqual(dossier.Client().api_key, "dsk_fromenv")

    def test_explicit_key_wins_over_environment(self) -> None:
        with mock.patch.dict(os.environ, {"DOSSIER_API_KEY": "dsk_fromenv"}):
            self.assertEqual(dossier.Client(api_key="dsk_explicit").api_key, "dsk_explicit")

    def test_the_key_is_trimmed_and_one_with_a_control_character_is_refused_as_in_the_other_clients(self) -> None:
        # A key read from a file keeps its line break: it is trimmed, as the other three clients do.
        with mock.patch.dict(os.environ, {"DOSSIER_API_KEY": " dsk_fromenv\n"}):
            self.assertEqual(dossier.Client(api_key=" dsk_file\r\n").api_key, "dsk_file")
            self.assertEqual(dossier.Client(api_key="  ").api_key, "dsk_fromenv", "a blank key is no key")
            self.assertEqual(dossier.Client(api_key="").api_key, "dsk_fromenv")
        for key in ("dsk_SECRET\nX-Injected: 1", "dsk_SECRET\x00x", "dsk_\tSECRET"):
            with self.subTest(key=key):
                with self.assertRaises(ValueError) as ctx:
                    dossier.Client(api_key=key)
                self.assertNotIn("SECRET", str(ctx.exception))
        with mock.patch.dict(os.environ, {"DOSSIER_API_KEY": " \n"}):
            with self.assertRaises(ValueError):
                dossier.Client()

    def test_no_key_is_a_value_error(self) -> None:
        with mock.patch.dict(os.environ, {}, clear=True):
            with self.assertRaises(ValueError):
                dossier.Client()

    def test_defaults(self) -> None:
        with mock.patch.dict(os.environ, {}, clear=True):
            c = dossier.Client("dsk_x")
        self.assertEqual(c.base_url, "http://127.0.0.1:3000")
        self.assertEqual(c.max_retries, 2)
        self.assertEqual(c.timeout, 30.0)
        self.assertEqual(c.poll_timeout, 60.0)
        self.assertNotIn("dsk_x", repr(c)[20:])  # the key is not printed whole

    def test_bad_base_url(self) -> None:
        with self.assertRaises(ValueError):
            dossier.Client("dsk_x", base_url="localhost:3000")

    def test_base_url_from_environment_as_in_the_other_clients(self) -> None:
        # The argument, else DOSSIER_BASE_URL, else http://127.0.0.1:3000; a blank one counts as none.
        with mock.patch.dict(os.environ, {"DOSSIER_BASE_URL": " https://dossier.example.com/api/ \n"}):
            self.assertEqual(dossier.Client("dsk_x").base_url, "https://dossier.example.com/api")
            self.assertEqual(dossier.Client("dsk_x", base_url="http://10.0.0.1:8080").base_url, "http://10.0.0.1:8080")
            self.assertEqual(dossier.Client("dsk_x", base_url=" ").base_url, "https://dossier.example.com/api")
        with mock.patch.dict(os.environ, {"DOSSIER_BASE_URL": "  "}):
            self.assertEqual(dossier.Client("dsk_x").base_url, "http://127.0.0.1:3000")

    def test_a_bad_base_url_from_the_environment_names_the_variable(self) -> None:
        with mock.patch.dict(os.environ, {"DOSSIER_BASE_URL": "localhost:3000"}):
            with self.assertRaises(ValueError) as ctx:
                dossier.Client("dsk_x")
        self.assertIn("DOSSIER_BASE_URL", str(ctx.exception))

    def test_no_key_names_the_variable(self) -> None:
        with mock.patch.dict(os.environ, {}, clear=True):
            with self.assertRaises(ValueError) as ctx:
                dossier.Client()
        self.assertIn("DOSSIER_API_KEY", str(ctx.exception))


class RequestShapeTest(FakeServerTest):
    def test_an_empty_id_is_refused_before_anything_is_sent_as_in_the_other_clients(self) -> None:
        # Sent, GET /v1/searches/ is a 404 "no such route", which reads like an unknown search.
        c = self.client()
        for call in (lambda: c.get_search(""), lambda: c.get_batch(""), lambda: c.revoke_key(""),
                     lambda: c.delete_webhook(""), lambda: c.webhook_deliveries(""),
                     lambda: c.get_search(None)):  # type: ignore[arg-type]
            with self.assertRaises(ValueError):
                call()
        self.assertEqual(self.server.requests, [])

    def test_the_environment_names_the_server_and_the_key(self) -> None:
        self.server.route("GET", "/v1/account", answer(200, {"status": "success", "account": ACCOUNT, "credits_remaining": 1}))
        self.server.route(
            "POST",
            "/v1/auth/login",
            answer(200, {"status": "success", "api_key": "dsk_new", "key_id": "key_1"}),
        )
        with mock.patch.dict(os.environ, {"DOSSIER_BASE_URL": self.server.url, "DOSSIER_API_KEY": "dsk_env123"}):
            dossier.Client().account()
            dossier.Client.login(email="a@example.com", password="a long password")
        self.assertEqual([r.path for r in self.server.requests], ["/v1/account", "/v1/auth/login"])
        self.assertEqual(self.server.requests[0].headers["authorization"], "Bearer dsk_env123")

    def test_key_from_environment_is_sent(self) -> None:
        self.server.route("GET", "/v1/account", answer(200, {"status": "success", "account": ACCOUNT, "credits_remaining": 1}))
        with mock.patch.dict(os.environ, {"DOSSIER_API_KEY": "dsk_env123"}):
            dossier.Client(base_url=self.server.url).account()
        self.assertEqual(self.server.requests[0].headers["authorization"], "Bearer dsk_env123")

    def test_headers_of_a_lookup(self) -> None:
        self.server.route("POST", "/v1/verify/phone", success())
        self.client(timeout=30).verify_phone("+14155552671")
        req = self.server.requests[0]
        self.assertEqual(req.headers["authorization"], f"Bearer {KEY}")
        self.assertEqual(req.headers["content-type"], "application/json")
        self.assertEqual(req.headers["accept"], "application/json")
        self.assertEqual(req.headers["user-agent"], f"dossier-python/{dossier.__version__}")
        self.assertEqual(req.headers["prefer"], "wait=10")
        self.assertEqual(req.json, {"phone": "+14155552671"})

    def test_server_wait_shrinks_with_a_short_timeout_or_deadline(self) -> None:
        self.server.route("POST", "/v1/verify/phone", success())
        self.client(timeout=5).verify_phone("+14155552671")
        self.client(timeout=30, poll_timeout=4).verify_phone("+14155552671")
        self.assertEqual([r.headers["prefer"] for r in self.server.requests], ["wait=3", "wait=4"])

    def test_generated_idempotency_key_is_a_fresh_uuid4(self) -> None:
        self.server.route("POST", "/v1/verify/email", success())
        c = self.client()
        r1 = c.verify_email("a@example.com")
        c.verify_email("a@example.com")
        keys = [r.headers["idempotency-key"] for r in self.server.requests]
        self.assertNotEqual(keys[0], keys[1])
        for k in keys:
            self.assertEqual(uuid.UUID(k).version, 4)
        self.assertEqual(r1.idempotency_key, keys[0])

    def test_given_idempotency_key_is_sent(self) -> None:
        self.server.route("POST", "/v1/verify/email", success())
        self.client().verify_email("a@example.com", idempotency_key="order-42")
        self.assertEqual(self.server.requests[0].headers["idempotency-key"], "order-42")

    def test_an_idempotency_key_the_gateway_would_refuse_is_a_value_error_before_sending(self) -> None:
        # 1–255 printable ASCII characters; a CR/LF must never reach the request's headers.
        self.server.route("POST", "/v1/verify/email", success())
        self.server.route("POST", "/v1/batch", answer(200, {"status": "success", "batch_id": "bat_1", "items": [], "credits_remaining": 1}))
        c = self.client()
        for key in ("k\r\nX-Injected: 1", "k\n", "", "has space", "x" * 256, "clé", "k\x00"):
            with self.subTest(key=key):
                with self.assertRaises(ValueError):
                    c.verify_email("a@example.com", idempotency_key=key)
                with self.assertRaises(ValueError):
                    c.batch([{"kind": "email", "input": {"email": "a@example.com"}}], idempotency_key=key)
        self.assertEqual(self.server.requests, [])
        c.verify_email("a@example.com", idempotency_key="~" + "x" * 254)
        self.assertEqual(self.server.requests[0].headers["idempotency-key"], "~" + "x" * 254)

    def test_text_that_cannot_be_sent_as_json_is_a_value_error_before_sending_as_in_the_other_clients(self) -> None:
        # A lone surrogate (half of a UTF-16 pair, as a bad decode or a sliced emoji leaves) has no UTF-8 form, and
        # NaN or Infinity no JSON one: the client's ValueError, as Ruby's ArgumentError and PHP's
        # InvalidArgumentException, not the codec's UnicodeEncodeError (whose .object is the whole body, password
        # included) nor a NaN the gateway would refuse as invalid JSON.
        password = "s3cret-\ud83d-password"
        c = self.client()
        calls = [
            lambda: c.search(query="\ud800 Smith", type="person"),
            lambda: c.verify_email("a\udfff@example.com"),
            lambda: c.batch([{"kind": "person", "input": {"name": "Jos\udce9"}}]),
            lambda: c.batch([{"kind": "phone", "input": {"phone": "+14155552671", "country": float("nan")}}]),
            lambda: c.batch([{"kind": "phone", "input": {"phone": float("inf")}}]),
            lambda: dossier.Client.register("a@example.com", password, base_url=self.server.url),
            lambda: dossier.Client.login("a@example.com", password, base_url=self.server.url),
        ]
        for i, call in enumerate(calls):
            with self.subTest(call=i):
                with self.assertRaises(ValueError) as ctx:
                    call()
                err = ctx.exception
                self.assertIs(type(err), ValueError)
                self.assertIn("cannot be sent as JSON", str(err))
                self.assertIsNone(err.__cause__)
                self.assertIsNone(err.__context__, "the codec's error (and the body it holds) is not chained")
                self.assertNotIn("s3cret", repr(err.args))
        self.assertEqual(self.server.requests, [])

    def test_search_generic_form(self) -> None:
        self.server.route("POST", "/v1/search", success())
        self.client().search(query="John Smith", type="person", country="US")
        self.client().search("Acme", "company")
        self.assertEqual(self.server.requests[0].json, {"query": "John Smith", "type": "person", "country": "US"})
        self.assertEqual(self.server.requests[1].json, {"query": "Acme", "type": "company"})

    def test_search_person_fields_route_to_person_search(self) -> None:
        self.server.route("POST", "/v1/search/person", success())
        self.client().search(name="John Smith")
        self.client().search(email="j@example.com", location="Austin, TX", age_range="30-40")
        self.assertEqual([r.path for r in self.server.requests], ["/v1/search/person"] * 2)
        self.assertEqual(self.server.requests[0].json, {"name": "John Smith"})
        self.assertEqual(self.server.requests[1].json, {"email": "j@example.com", "location": "Austin, TX", "age_range": "30-40"})

    def test_search_rejects_mixed_or_empty_forms_before_sending(self) -> None:
        c = self.client()
        with self.assertRaises(ValueError):
            c.search(query="x", type="person", name="y")
        with self.assertRaises(ValueError):
            c.search(name="y", country="US")
        with self.assertRaises(ValueError):
            c.search()
        self.assertEqual(self.server.requests, [])

    def test_bodies_omit_absent_fields(self) -> None:
        for path in ("/v1/search/person", "/v1/search/company", "/v1/verify/phone", "/v1/verify/email"):
            self.server.route("POST", path, success())
        c = self.client()
        c.search_person("Jane Doe", phone="+14155552671")
        c.search_person(username="jdoe", permissible_purpose="employment")
        c.search_company(domain="acme.com")
        c.search_company("Acme", country="DE", registration_number="HRB 1")
        c.verify_phone("4155552671", "US")
        c.verify_phone("+14155552671")
        c.verify_email("a@example.com", permissible_purpose="fraud_prevention")
        self.assertEqual(
            [r.json for r in self.server.requests],
            [
                {"name": "Jane Doe", "phone": "+14155552671"},
                {"username": "jdoe", "permissible_purpose": "employment"},
                {"domain": "acme.com"},
                {"company_name": "Acme", "registration_number": "HRB 1", "country": "DE"},
                {"phone": "4155552671", "country": "US"},
                {"phone": "+14155552671"},
                {"email": "a@example.com", "permissible_purpose": "fraud_prevention"},
            ],
        )

    def test_result_object(self) -> None:
        item = {"e164": "+14155552671", "valid": True}
        self.server.route("POST", "/v1/verify/phone", success("srch_9", [item], 2, X_Credits_Spent="1", Idempotent_Replayed="true"))
        r = self.client().verify_phone("+14155552671")
        self.assertEqual(r.status, "success")
        self.assertEqual(r.search_id, "srch_9")
        self.assertEqual(r.results, [item])
        self.assertEqual(r.credits_remaining, 2)
        self.assertEqual(r.sources, [{"provider": "p", "outcome": "ok", "took_ms": 1}])
        self.assertEqual(r.credits_spent, 1)
        self.assertTrue(r.replayed)
        self.assertFalse(r.pending)
        self.assertEqual(r.http_status, 200)
        self.assertEqual(r.request_id, "req_header")
        self.assertEqual(r["search_id"], "srch_9")
        self.assertEqual(r.raw["results"], [item])

    def test_register_and_login_send_no_key(self) -> None:
        self.server.route("POST", "/v1/auth/register", answer(201, {
            "status": "success", "account": {"id": "acct_1", "email": "a@example.com", "created_at": "t"},
            "api_key": "dsk_new", "credits_remaining": 3}))
        self.server.route("POST", "/v1/auth/login", answer(200, {"status": "success", "api_key": "dsk_two", "key_id": "key_2"}))
        reg = dossier.Client.register(email="a@example.com", password="pw123456", base_url=self.server.url)
        self.assertEqual((reg.api_key, reg.credits_remaining, reg.account.id, reg.account.email), ("dsk_new", 3, "acct_1", "a@example.com"))
        self.assertEqual(reg.http_status, 201)
        login = dossier.Client.login(email="a@example.com", password="pw123456", base_url=self.server.url)
        self.assertEqual((login.api_key, login.key_id), ("dsk_two", "key_2"))
        for req in self.server.requests:
            self.assertNotIn("authorization", req.headers)
            self.assertNotIn("idempotency-key", req.headers)
            self.assertEqual(req.json, {"email": "a@example.com", "password": "pw123456"})

    def test_printed_responses_hide_api_keys_and_webhook_secrets(self) -> None:
        secret_key = "dsk_SECRETKEYVALUE0000000000"
        self.server.route("POST", "/v1/auth/register", answer(201, {
            "status": "success", "account": {"id": "acct_1", "email": "a@example.com", "created_at": "t"},
            "api_key": secret_key, "credits_remaining": 3}))
        self.server.route("POST", "/v1/auth/login", answer(200, {"status": "success", "api_key": secret_key, "key_id": "key_2"}))
        self.server.route("POST", "/v1/webhooks", answer(201, {"status": "success", "webhook": {"id": "wh_1"},
                                                               "secret": "whsec_SECRETVALUE000"}))
        reg = dossier.Client.register(email="a@example.com", password="pw123456", base_url=self.server.url)
        login = dossier.Client.login(email="a@example.com", password="pw123456", base_url=self.server.url)
        hook = self.client().create_webhook("https://example.com/hook")
        for printed in (repr(reg), repr(reg.account), repr(login), str(login), repr(hook)):
            with self.subTest(printed=printed):
                self.assertNotIn("SECRET", printed)
        self.assertIn("'dsk_SECR…'", repr(login))  # as repr(client) shows its key
        self.assertIn("'whsec_…'", repr(hook))
        self.assertEqual((reg.api_key, login.api_key, hook.secret), (secret_key, secret_key, "whsec_SECRETVALUE000"))
        self.assertEqual(login.raw["api_key"], secret_key)  # only the printed form is shortened

    def test_keys_and_account(self) -> None:
        key = {"id": "key_1", "prefix": "dsk_abcd", "name": "ci", "created_at": "t", "last_used_at": None, "revoked_at": None}
        self.server.route("GET", "/v1/auth/keys", answer(200, {"status": "success", "keys": [key]}))
        self.server.route("POST", "/v1/auth/keys", answer(201, {"status": "success", "api_key": "dsk_k", "key_id": "key_2"}))
        self.server.route("DELETE", "/v1/auth/keys/key_1", answer(200, {"status": "success", "key": dict(key, revoked_at="t2")}))
        self.server.route("GET", "/v1/account", answer(200, {"status": "success", "account": {"id": "acct_1", "email": "a@b.c", "created_at": "t"}, "credits_remaining": 7}))
        c = self.client()
        keys = c.list_keys()
        self.assertEqual([(k.id, k.prefix, k.name, k.revoked) for k in keys], [("key_1", "dsk_abcd", "ci", False)])
        self.assertEqual(c.create_key().key_id, "key_2")
        self.assertEqual(c.create_key("ci").api_key, "dsk_k")
        revoked = c.revoke_key("key_1")
        self.assertTrue(revoked.revoked)
        self.assertEqual(revoked.revoked_at, "t2")
        acct = c.account()
        self.assertEqual((acct.id, acct.email, acct.credits_remaining), ("acct_1", "a@b.c", 7))
        posts = self.server.calls("POST", "/v1/auth/keys")
        self.assertEqual([p.json for p in posts], [{}, {"name": "ci"}])
        self.assertNotIn("idempotency-key", posts[0].headers)

    def test_the_lists_carry_the_http_answer_as_every_other_result_does(self) -> None:
        # list_keys, list_webhooks and webhook_deliveries: still lists of their items, and the headers too.
        limits = {"RateLimit_Limit": "100", "RateLimit_Remaining": "97", "RateLimit_Reset": "2"}
        key = {"id": "key_1", "prefix": "dsk_abcd", "name": None, "created_at": "t", "last_used_at": None, "revoked_at": None}
        hook = {"id": "wh_1", "url": "https://example.com/h", "events": ["search.completed"], "created_at": "t"}
        self.server.route("GET", "/v1/auth/keys", answer(200, {"status": "success", "keys": [key]}, **limits))
        self.server.route("GET", "/v1/webhooks", answer(200, {"status": "success", "webhooks": [hook]}, **limits))
        self.server.route("GET", "/v1/webhooks/wh_1/deliveries", answer(200, {"status": "success", "deliveries": []}, **limits))
        c = self.client()
        for listed, items in ((c.list_keys(), [dossier.ApiKey(key)]), (c.list_webhooks(), [dossier.WebhookEndpoint(hook)]),
                              (c.webhook_deliveries("wh_1"), [])):
            with self.subTest(listed=listed):
                self.assertIsInstance(listed, list)
                self.assertEqual(listed, items)  # backwards compatible: the same list as before
                self.assertEqual(listed.request_id, "req_header")
                self.assertEqual(listed.http_status, 200)
                self.assertEqual(listed.headers["ratelimit-remaining"], "97")
                self.assertEqual(listed.rate_limit, {"limit": 100, "remaining": 97, "reset": 2})
                self.assertEqual(listed.raw["status"], "success")

    def test_base_url_path_prefix_is_kept(self) -> None:
        self.server.route("GET", "/prefix/v1/account", answer(200, {"status": "success", "account": ACCOUNT, "credits_remaining": 0}))
        self.client(base_url=self.server.url + "/prefix/").account()
        self.assertEqual(self.server.requests[0].path, "/prefix/v1/account")


if __name__ == "__main__":
    unittest.main()
