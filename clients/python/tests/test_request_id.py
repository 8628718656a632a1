"""The caller's own X-Request-Id (API.md: echoed by the gateway when it is 1–128 safe characters)."""

from __future__ import annotations

import unittest

import dossier

from .base import FakeServerTest
from .fakeserver import ACCOUNT, answer, error, pending, success

OK = {"status": "success"}


class RequestIdTest(FakeServerTest):
    def test_every_method_sends_the_callers_request_id(self) -> None:
        s = self.server
        s.route("POST", "/v1/auth/register", answer(201, {**OK, "api_key": "dsk_n", "account": ACCOUNT, "credits_remaining": 3}))
        s.route("POST", "/v1/auth/login", answer(200, {**OK, "api_key": "dsk_l", "key_id": "key_l"}))
        s.route("GET", "/v1/account", answer(200, {**OK, "account": ACCOUNT, "credits_remaining": 1}))
        s.route("POST", "/v1/auth/keys", answer(201, {**OK, "api_key": "dsk_k", "key_id": "key_k"}))
        s.route("GET", "/v1/auth/keys", answer(200, {**OK, "keys": []}))
        s.route("DELETE", "/v1/auth/keys/key_k", answer(200, {**OK, "key": {"id": "key_k"}}))
        for path in ("/v1/search", "/v1/search/person", "/v1/search/company", "/v1/verify/email", "/v1/verify/phone"):
            s.route("POST", path, success())
        s.route("GET", "/v1/searches/srch_1", success())
        s.route("GET", "/v1/searches", answer(200, {**OK, "searches": [], "next_cursor": None}))
        s.route("POST", "/v1/batch", answer(200, {**OK, "batch_id": "bat_1", "items": [], "credits_remaining": 1}))
        s.route("GET", "/v1/batches/bat_1", answer(200, {**OK, "batch_id": "bat_1", "items": [], "credits_remaining": 1}))
        s.route("POST", "/v1/webhooks", answer(201, {**OK, "webhook": {"id": "wh_1"}, "secret": "whsec_x"}))
        s.route("GET", "/v1/webhooks", answer(200, {**OK, "webhooks": []}))
        s.route("DELETE", "/v1/webhooks/wh_1", answer(200, {**OK, "webhook": {"id": "wh_1"}}))
        s.route("GET", "/v1/webhooks/wh_1/deliveries", answer(200, {**OK, "deliveries": []}))
        c = self.client()
        rid = "order-42/attempt:1"
        calls = [
            lambda: dossier.Client.register("a@example.com", "password123", base_url=s.url, request_id=rid),
            lambda: dossier.Client.login("a@example.com", "password123", base_url=s.url, request_id=rid),
            lambda: c.account(request_id=rid),
            lambda: c.create_key("ci", request_id=rid),
            lambda: c.list_keys(request_id=rid),
            lambda: c.revoke_key("key_k", request_id=rid),
            lambda: c.search(query="Acme", type="company", request_id=rid),
            lambda: c.search(name="J", request_id=rid),
            lambda: c.search_person("J", request_id=rid),
            lambda: c.search_company("Acme", request_id=rid),
            lambda: c.verify_email("a@example.com", request_id=rid),
            lambda: c.verify_phone("+14155552671", request_id=rid),
            lambda: c.get_search("srch_1", request_id=rid),
            lambda: c.list_searches(request_id=rid),
            lambda: list(c.iter_searches(request_id=rid)),
            lambda: c.batch([{"kind": "phone", "input": {"phone": "+14155552671"}}], request_id=rid),
            lambda: c.get_batch("bat_1", request_id=rid),
            lambda: c.create_webhook("https://example.com/h", request_id=rid),
            lambda: c.list_webhooks(request_id=rid),
            lambda: c.delete_webhook("wh_1", request_id=rid),
            lambda: c.webhook_deliveries("wh_1", request_id=rid),
        ]
        for call in calls:
            call()
        self.assertEqual(len(s.requests), len(calls))
        for sent in s.requests:
            self.assertEqual(sent.headers.get("x-request-id"), rid, f"{sent.method} {sent.path}")

    def test_without_one_none_is_sent_and_the_answers_id_is_read_as_before(self) -> None:
        self.server.route("GET", "/v1/account", answer(200, {**OK, "account": ACCOUNT, "credits_remaining": 1}))
        account = self.client().account()
        self.assertNotIn("x-request-id", self.server.requests[0].headers)
        self.assertEqual(account.request_id, "req_header")

    def test_the_same_id_goes_with_every_retry_and_every_poll_of_the_call(self) -> None:
        self.server.route("POST", "/v1/verify/phone", error(503, "unavailable", Retry_After="0"), pending("srch_p", retry_after="0"))
        self.server.route("GET", "/v1/searches/srch_p", pending("srch_p", retry_after="0"), success("srch_p"))
        self.client().verify_phone("+14155552671", request_id="trace-7")
        self.assertEqual([r.headers.get("x-request-id") for r in self.server.requests], ["trace-7"] * 4)

    def test_an_id_the_gateway_would_not_echo_is_refused_before_anything_is_sent(self) -> None:
        c = self.client()
        for rid in ("", "a" * 129, "has space", "line\r\nX-Injected: 1", "café", 42):
            with self.subTest(rid=rid):
                with self.assertRaises(ValueError):
                    c.account(request_id=rid)  # type: ignore[arg-type]
                with self.assertRaises(ValueError):
                    c.verify_phone("+14155552671", request_id=rid)  # type: ignore[arg-type]
        self.assertEqual(self.server.requests, [])
        # The longest the gateway echoes, with every character it allows.
        longest = ("AZaz09._~:@+=/-" * 9)[:128]
        self.server.route("GET", "/v1/account", answer(200, {**OK, "account": ACCOUNT, "credits_remaining": 1}))
        c.account(request_id=longest)
        self.assertEqual(self.server.requests[0].headers["x-request-id"], longest)


if __name__ == "__main__":
    unittest.main()
