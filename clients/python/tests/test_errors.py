"""Every error envelope maps onto its typed error, with status, code, message, request id and details."""

from __future__ import annotations

import unittest

import dossier

from .base import FakeServerTest
from .fakeserver import ACCOUNT, answer, error

CASES = [
    (400, "invalid_json", dossier.ValidationError),
    (400, "validation_error", dossier.ValidationError),
    (401, "unauthorized", dossier.AuthenticationError),
    (401, "invalid_credentials", dossier.AuthenticationError),
    (402, "insufficient_credits", dossier.InsufficientCreditsError),
    (404, "not_found", dossier.NotFoundError),
    (405, "method_not_allowed", dossier.APIError),
    (409, "email_taken", dossier.ConflictError),
    (409, "idempotency_conflict", dossier.ConflictError),
    (413, "payload_too_large", dossier.APIError),
    (415, "unsupported_media_type", dossier.APIError),
    (429, "rate_limited", dossier.RateLimitError),
    (500, "internal_error", dossier.APIError),
    (503, "unavailable", dossier.UnavailableError),
]


class ErrorMappingTest(FakeServerTest):
    def test_every_code(self) -> None:
        client = self.client(max_retries=0)
        for status, code, cls in CASES:
            with self.subTest(code=code):
                self.server.route("POST", "/v1/verify/email", error(status, code, f"message for {code}", request_id=f"req_{code}"))
                with self.assertRaises(dossier.APIError) as ctx:
                    client.verify_email("a@example.com")
                err = ctx.exception
                self.assertIs(type(err), cls)
                self.assertEqual(err.status, status)
                self.assertEqual(err.code, code)
                self.assertEqual(err.message, f"message for {code}")
                self.assertEqual(err.request_id, f"req_{code}")
                self.assertEqual(err.body["error"]["code"], code)
                self.assertIn(f'"code": "{code}"', err.raw_body)
                self.assertEqual(str(err), f"{status} {code}: message for {code} (request_id=req_{code})")

    def test_validation_details(self) -> None:
        details = [{"field": "phone", "issue": "is not a phone number"}, {"field": "country", "issue": "must be an ISO 3166-1 alpha-2 country code"}]
        self.server.route("POST", "/v1/verify/phone", error(400, "validation_error", "phone is not a phone number", details))
        with self.assertRaises(dossier.ValidationError) as ctx:
            self.client().verify_phone("abc", "XX")
        self.assertEqual(ctx.exception.details, details)
        self.assertEqual([d["field"] for d in ctx.exception.details], ["phone", "country"])

    def test_details_default_to_empty(self) -> None:
        self.server.route("GET", "/v1/account", error(401, "unauthorized", "missing key", WWW_Authenticate="Bearer"))
        with self.assertRaises(dossier.AuthenticationError) as ctx:
            self.client().account()
        self.assertEqual(ctx.exception.details, [])
        self.assertEqual(ctx.exception.headers["www-authenticate"], "Bearer")

    def test_insufficient_credits_carries_the_balance(self) -> None:
        self.server.route("POST", "/v1/verify/phone", error(402, "insufficient_credits", "this lookup costs 1", X_Credits_Remaining="0", X_Credits_Spent="0"))
        with self.assertRaises(dossier.InsufficientCreditsError) as ctx:
            self.client().verify_phone("+14155552671")
        self.assertEqual(ctx.exception.credits_remaining, 0)

    def test_unknown_code_falls_back_to_status(self) -> None:
        self.server.route("GET", "/v1/account", error(404, "something_new"))
        with self.assertRaises(dossier.NotFoundError) as ctx:
            self.client().account()
        self.assertEqual(ctx.exception.code, "something_new")

    def test_request_id_from_header_when_body_has_none(self) -> None:
        self.server.route("GET", "/v1/account", answer(404, {"status": "error", "error": {"code": "not_found", "message": "x"}}))
        with self.assertRaises(dossier.NotFoundError) as ctx:
            self.client().account()
        self.assertEqual(ctx.exception.request_id, "req_header")

    def test_non_json_error_body(self) -> None:
        self.server.route("GET", "/v1/account", answer(502, "<html>Bad Gateway</html>"))
        with self.assertRaises(dossier.APIError) as ctx:
            self.client().account()
        err = ctx.exception
        self.assertIs(type(err), dossier.APIError)
        self.assertEqual(err.status, 502)
        self.assertIsNone(err.code)
        self.assertIsNone(err.body)
        self.assertEqual(err.raw_body, "<html>Bad Gateway</html>")

    def test_non_json_400_is_a_validation_error_as_in_the_other_clients(self) -> None:
        self.server.route("GET", "/v1/account", answer(400, "<html>Bad Request</html>"))
        with self.assertRaises(dossier.ValidationError) as ctx:
            self.client().account()
        self.assertEqual(ctx.exception.status, 400)
        self.assertIsNone(ctx.exception.code)

    def test_non_json_success_body_is_an_error(self) -> None:
        self.server.route("GET", "/v1/account", answer(200, "not json"))
        with self.assertRaises(dossier.APIError) as ctx:
            self.client().account()
        self.assertEqual(ctx.exception.status, 200)

    def test_a_redirect_is_not_followed_but_an_error_with_its_status_as_in_the_other_clients(self) -> None:
        self.server.route("GET", "/v1/account", answer(301, {"status": "success"}, Location="/v1/auth/keys"))
        with self.assertRaises(dossier.APIError) as ctx:
            self.client().account()
        self.assertIs(type(ctx.exception), dossier.APIError)
        self.assertEqual(ctx.exception.status, 301)
        self.assertEqual([r.path for r in self.server.requests], ["/v1/account"])

    def test_a_success_body_that_is_empty_or_not_an_object_is_an_error_as_in_the_other_clients(self) -> None:
        for body in ("", [1, 2], "null"):
            with self.subTest(body=body):
                self.server.route("GET", "/v1/account", answer(200, body))
                with self.assertRaises(dossier.APIError) as ctx:
                    self.client().account()
                self.assertIs(type(ctx.exception), dossier.APIError)
                self.assertEqual(ctx.exception.status, 200)

    def test_a_2xx_that_is_not_a_search_envelope_is_an_error_not_an_empty_result_as_in_the_other_clients(self) -> None:
        # A paid lookup's answer without its status, search_id, credits_remaining or (once done) results is
        # broken, not "nothing found": the base APIError (code None), never a SearchResult with no results.
        broken = [
            answer(200, {}),
            answer(200, {"status": "success", "search_id": "srch_1", "credits_remaining": 9}),
            answer(200, {"status": "success", "search_id": "srch_1", "results": {}, "credits_remaining": 9}),
            answer(200, {"status": "done", "search_id": "srch_1", "results": [], "credits_remaining": 9}),
            answer(200, {"status": "success", "search_id": "srch_1", "results": []}),
            answer(200, {"status": "success", "search_id": "", "results": [], "credits_remaining": 9}),
            answer(202, {"status": "pending", "credits_remaining": 9}),
        ]
        client = self.client(max_retries=0)
        calls = [
            ("POST", "/v1/verify/phone", lambda: client.verify_phone("+14155552671")),
            ("GET", "/v1/searches/srch_1", lambda: client.get_search("srch_1")),
        ]
        for body in broken:
            for method, path, call in calls:
                with self.subTest(body=body[1], path=path):
                    self.server.route(method, path, body)
                    before = len(self.server.requests)
                    with self.assertRaises(dossier.APIError) as ctx:
                        call()
                    err = ctx.exception
                    self.assertIs(type(err), dossier.APIError)
                    self.assertEqual((err.status, err.code, err.request_id), (body[0], None, "req_header"))
                    self.assertEqual(err.body, body[1])
                    self.assertIn("not a search envelope", err.message)
                    self.assertEqual(len(self.server.requests) - before, 1, "a 2xx is not retried")

    def test_a_2xx_that_is_not_a_batch_envelope_is_an_error_as_in_the_other_clients(self) -> None:
        broken = [
            answer(200, {}),
            answer(200, {"status": "success", "batch_id": "bat_1", "credits_remaining": 9}),
            answer(200, {"status": "success", "batch_id": "bat_1", "items": [], "credits_remaining": "9"}),
            answer(202, {"status": "pending", "items": [], "credits_remaining": 9}),
        ]
        client = self.client(max_retries=0)
        calls = [
            ("POST", "/v1/batch", lambda: client.batch([{"kind": "phone", "input": {"phone": "+14155552671"}}])),
            ("GET", "/v1/batches/bat_1", lambda: client.get_batch("bat_1")),
        ]
        for body in broken:
            for method, path, call in calls:
                with self.subTest(body=body[1], path=path):
                    self.server.route(method, path, body)
                    with self.assertRaises(dossier.APIError) as ctx:
                        call()
                    err = ctx.exception
                    self.assertIs(type(err), dossier.APIError)
                    self.assertEqual((err.status, err.code, err.request_id), (body[0], None, "req_header"))
                    self.assertIn("not a batch envelope", err.message)

    def test_any_other_2xx_that_is_not_its_documented_shape_is_an_error_as_in_the_other_clients(self) -> None:
        # An account without its id, a key list that is no list, a new key or webhook without its secret: broken,
        # not empty. The base APIError (code None) with the status, request id and body, as a lookup's.
        ok = {"status": "success"}
        base_url = self.server.url
        client = self.client(max_retries=0)
        cases = [
            ("GET", "/v1/account", client.account, [
                {}, {"account": ACCOUNT, "credits_remaining": 1}, {**ok, "account": {}, "credits_remaining": 1},
                {**ok, "account": {**ACCOUNT, "id": ""}, "credits_remaining": 1}, {**ok, "account": ACCOUNT},
                {**ok, "account": ACCOUNT, "credits_remaining": "1"},
            ]),
            ("POST", "/v1/auth/register",
             lambda: dossier.Client.register("a@example.com", "password123", base_url=base_url, max_retries=0),
             [{**ok, "account": ACCOUNT, "credits_remaining": 3}, {**ok, "api_key": "dsk_n", "credits_remaining": 3}]),
            ("POST", "/v1/auth/login",
             lambda: dossier.Client.login("a@example.com", "password123", base_url=base_url, max_retries=0),
             [{**ok, "key_id": "key_l"}, {**ok, "api_key": "dsk_l"}]),
            ("POST", "/v1/auth/keys", lambda: client.create_key("ci"), [{**ok, "api_key": "", "key_id": "key_k"}, {}]),
            ("GET", "/v1/auth/keys", client.list_keys, [ok, {**ok, "keys": {}}, {**ok, "keys": ["key_1"]}]),
            ("DELETE", "/v1/auth/keys/key_1", lambda: client.revoke_key("key_1"), [ok, {**ok, "key": {}}]),
            ("GET", "/v1/searches", client.list_searches, [
                {**ok, "searches": []}, {**ok, "next_cursor": None}, {**ok, "searches": [], "next_cursor": 7},
            ]),
            ("POST", "/v1/webhooks", lambda: client.create_webhook("https://example.com/h"),
             [{**ok, "webhook": {"id": "wh_1"}}, {**ok, "secret": "whsec_x"}]),
            ("GET", "/v1/webhooks", client.list_webhooks, [ok, {**ok, "webhooks": None}]),
            ("DELETE", "/v1/webhooks/wh_1", lambda: client.delete_webhook("wh_1"), [ok]),
            ("GET", "/v1/webhooks/wh_1/deliveries", lambda: client.webhook_deliveries("wh_1"),
             [ok, {**ok, "deliveries": {}}]),
        ]
        for method, path, call, broken in cases:
            for body in broken:
                with self.subTest(path=path, body=body):
                    self.server.route(method, path, answer(200, body))
                    with self.assertRaises(dossier.APIError) as ctx:
                        call()
                    err = ctx.exception
                    self.assertIs(type(err), dossier.APIError)
                    self.assertEqual((err.status, err.code, err.request_id), (200, None, "req_header"))
                    self.assertEqual(err.body, body)
                    self.assertRegex(err.message, r"^HTTP 200 with a body that is not an? ")

    def test_hierarchy(self) -> None:
        for cls in (dossier.AuthenticationError, dossier.InsufficientCreditsError, dossier.RateLimitError,
                    dossier.ValidationError, dossier.NotFoundError, dossier.ConflictError,
                    dossier.UnavailableError, dossier.APIConnectionError, dossier.SearchTimeoutError):
            self.assertTrue(issubclass(cls, dossier.APIError), cls)
        self.assertTrue(issubclass(dossier.APIError, Exception))

    def test_login_invalid_credentials(self) -> None:
        self.server.route("POST", "/v1/auth/login", error(401, "invalid_credentials", "wrong e-mail or password"))
        with self.assertRaises(dossier.AuthenticationError) as ctx:
            dossier.Client.login(email="a@example.com", password="nope-nope", base_url=self.server.url)
        self.assertEqual(ctx.exception.code, "invalid_credentials")

    def test_register_email_taken(self) -> None:
        self.server.route("POST", "/v1/auth/register", error(409, "email_taken", "taken"))
        with self.assertRaises(dossier.ConflictError) as ctx:
            dossier.Client.register(email="a@example.com", password="pw123456", base_url=self.server.url)
        self.assertEqual(ctx.exception.code, "email_taken")


if __name__ == "__main__":
    unittest.main()
