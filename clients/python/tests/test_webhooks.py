"""Webhook registration, test keys, and Webhook.verify."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import unittest

import dossier

from .base import FakeServerTest
from .fakeserver import answer, error

HOOK = {"id": "wh_1", "url": "https://203.0.113.10/hook", "events": ["search.completed"], "created_at": "2026-11-23T09:00:00.000Z"}
SECRET = "whsec_3q2-7wVbQ0nLk9sYt4XcZr1mA8uHf6dJ5pGe0iBo2Nw"
NOW = 1_795_000_000
BODY = json.dumps({"id": "evt_1", "type": "search.completed", "created_at": "2026-11-23T09:00:00.000Z",
                   "data": {"status": "success", "search_id": "srch_1", "results": []}}, separators=(",", ":"))


def sign(body: str, t: int, secret: str = SECRET) -> str:
    """As the server signs (libs/contracts signatureHeader), written out independently."""
    return hmac.new(secret.encode(), f"{t}.{body}".encode(), hashlib.sha256).hexdigest()


class WebhookRegistrationTest(FakeServerTest):
    def test_create_list_delete_and_deliveries(self) -> None:
        self.server.route("POST", "/v1/webhooks", answer(201, {"status": "success", "webhook": HOOK, "secret": SECRET}))
        self.server.route("GET", "/v1/webhooks", answer(200, {"status": "success", "webhooks": [HOOK]}))
        self.server.route("DELETE", "/v1/webhooks/wh_1", answer(200, {"status": "success", "webhook": HOOK}))
        delivery = {"event_id": "evt_1", "type": "search.completed", "attempt": 2, "outcome": "delivered",
                    "status_code": 200, "error": None, "duration_ms": 41, "attempted_at": "2026-11-23T09:01:02.120Z"}
        self.server.route("GET", "/v1/webhooks/wh_1/deliveries", answer(200, {"status": "success", "deliveries": [delivery]}))
        c = self.client()

        created = c.create_webhook(HOOK["url"], events=["search.completed"])
        self.assertEqual(created.http_status, 201)
        self.assertEqual(created.secret, SECRET)
        self.assertEqual((created.webhook.id, created.webhook.url, created.webhook.events), ("wh_1", HOOK["url"], ["search.completed"]))
        self.assertEqual(self.server.calls("POST", "/v1/webhooks")[0].json, {"url": HOOK["url"], "events": ["search.completed"]})

        c.create_webhook(HOOK["url"])
        self.assertEqual(self.server.calls("POST", "/v1/webhooks")[1].json, {"url": HOOK["url"]})

        self.assertEqual([(w.id, w.created_at) for w in c.list_webhooks()], [("wh_1", HOOK["created_at"])])
        self.assertEqual(c.delete_webhook("wh_1").id, "wh_1")
        [d] = c.webhook_deliveries("wh_1")
        self.assertEqual((d.event_id, d.attempt, d.outcome, d.status_code, d.error, d.duration_ms), ("evt_1", 2, "delivered", 200, None, 41))

    def test_refused_url_and_unknown_webhook(self) -> None:
        self.server.route("POST", "/v1/webhooks", error(400, "validation_error", "url must be an https URL",
                                                        details=[{"field": "url", "issue": "must be an https URL"}]))
        self.server.route("DELETE", "/v1/webhooks/wh_nope", error(404, "not_found"))
        self.server.route("GET", "/v1/webhooks/wh_nope/deliveries", error(404, "not_found"))
        c = self.client()
        with self.assertRaises(dossier.ValidationError) as ctx:
            c.create_webhook("http://10.0.0.1/hook")
        self.assertEqual(ctx.exception.details[0]["field"], "url")
        with self.assertRaises(dossier.NotFoundError):
            c.delete_webhook("wh_nope")
        with self.assertRaises(dossier.NotFoundError):
            c.webhook_deliveries("wh_nope")


class TestKeysTest(FakeServerTest):
    def test_create_a_test_key_and_see_modes(self) -> None:
        self.server.route("POST", "/v1/auth/keys", answer(201, {"status": "success", "api_key": "dsk_test_abc", "key_id": "key_t"}))
        keys = [{"id": "key_l", "prefix": "dsk_abcd", "name": None, "mode": "live", "created_at": "t", "last_used_at": None, "revoked_at": None},
                {"id": "key_t", "prefix": "dsk_test_abcd", "name": "sandbox", "mode": "test", "created_at": "t", "last_used_at": None, "revoked_at": None}]
        self.server.route("GET", "/v1/auth/keys", answer(200, {"status": "success", "keys": keys}))
        c = self.client()
        issued = c.create_key("sandbox", mode="test")
        self.assertEqual(issued.api_key, "dsk_test_abc")
        c.create_key(mode="test")
        c.create_key()
        self.assertEqual([r.json for r in self.server.calls("POST", "/v1/auth/keys")],
                         [{"name": "sandbox", "mode": "test"}, {"mode": "test"}, {}])
        listed = c.list_keys()
        self.assertEqual([(k.id, k.mode, k.test) for k in listed], [("key_l", "live", False), ("key_t", "test", True)])


class VerifyTest(unittest.TestCase):
    def header(self, t: int = NOW, *sigs: str) -> str:
        return ",".join([f"t={t}"] + [f"v1={s}" for s in (sigs or (sign(BODY, t),))])

    def test_a_genuine_delivery_returns_the_event(self) -> None:
        for payload in (BODY, BODY.encode()):
            event = dossier.Webhook.verify(payload, self.header(), SECRET, now=NOW + 299)
            self.assertIsInstance(event, dossier.WebhookEvent)
            self.assertEqual((event.id, event.type), ("evt_1", "search.completed"))
            self.assertEqual(event.data["search_id"], "srch_1")
            self.assertEqual(event["created_at"], "2026-11-23T09:00:00.000Z")

    def test_elements_without_an_equals_sign_are_ignored_as_in_the_other_clients(self) -> None:
        good = self.header()
        for header in (good + ",", good + ",garbage", "garbage," + good, good.replace(",", ", ,")):
            with self.subTest(header=header):
                self.assertEqual(dossier.Webhook.verify(BODY, header, SECRET, now=NOW).id, "evt_1")

    def test_any_of_several_v1_signatures_may_match(self) -> None:
        header = self.header(NOW, "0" * 64, sign(BODY, NOW)) + ",v0=ignored"
        self.assertEqual(dossier.Webhook.verify(BODY, header, SECRET, now=NOW).id, "evt_1")

    def test_the_hex_signature_may_be_in_either_case_as_in_the_other_clients(self) -> None:
        # Hex is case-insensitive (RFC 4648 section 8); Ruby, PHP and JavaScript accept both cases too.
        good = sign(BODY, NOW)
        mixed = "".join(c.upper() if i % 2 else c for i, c in enumerate(good))
        for candidate in (good.upper(), mixed):
            with self.subTest(candidate=candidate):
                self.assertEqual(dossier.Webhook.verify(BODY, self.header(NOW, candidate), SECRET, now=NOW).id, "evt_1")
        self.assert_refused(BODY, self.header(NOW, sign(BODY, NOW, secret="whsec_other").upper()))

    def assert_refused(self, payload: str, header: "str | None", *, now: float = NOW, tolerance: float = 300) -> dossier.SignatureVerificationError:
        with self.assertRaises(dossier.SignatureVerificationError) as ctx:
            dossier.Webhook.verify(payload, header, SECRET, tolerance, now=now)
        self.assertIsInstance(ctx.exception, dossier.APIError)
        self.assertIsNone(ctx.exception.status)
        return ctx.exception

    def test_with_the_real_clock_a_fresh_signature_verifies(self) -> None:
        t = int(time.time())
        self.assertEqual(dossier.Webhook.verify(BODY, self.header(t, sign(BODY, t)), SECRET).id, "evt_1")
        with self.assertRaises(dossier.SignatureVerificationError):
            dossier.Webhook.verify(BODY, self.header(t - 1000, sign(BODY, t - 1000)), SECRET)

    def test_forged_signatures_are_refused(self) -> None:
        self.assert_refused(BODY, self.header(NOW, sign(BODY, NOW, secret="whsec_other")))
        self.assert_refused(BODY.replace("srch_1", "srch_2"), self.header())  # body changed
        self.assert_refused(BODY, f"t={NOW + 1},v1={sign(BODY, NOW)}")  # timestamp changed
        self.assert_refused(BODY, self.header(NOW, "é" * 64))

    def test_timestamps_outside_the_tolerance_are_refused(self) -> None:
        err = self.assert_refused(BODY, self.header(), now=NOW + 301)
        self.assertIn("tolerance", err.message)
        self.assert_refused(BODY, self.header(), now=NOW - 301)
        self.assert_refused(BODY, self.header(), now=NOW + 11, tolerance=10)
        self.assertEqual(dossier.Webhook.verify(BODY, self.header(), SECRET, 10, now=NOW - 10).id, "evt_1")

    def test_missing_or_malformed_headers_are_refused(self) -> None:
        good = sign(BODY, NOW)
        for header in (None, "", "garbage", f"v1={good}", f"t={NOW}", f"t=abc,v1={good}", f"t=-{NOW},v1={good}",
                       f"t={NOW},v1=", f"t={NOW};v1={good}", f"t={NOW},{good}"):
            with self.subTest(header=header):
                self.assert_refused(BODY, header)

    def test_an_overlong_timestamp_is_a_signature_error_not_a_value_error(self) -> None:
        # int() refuses more than 4300 digits with ValueError; t is at most 12 digits.
        for t in ("1" * 5000, "1" * 13):
            with self.subTest(digits=len(t)):
                with self.assertRaises(dossier.SignatureVerificationError):
                    dossier.Webhook.verify(b"{}", f"t={t},v1={'a' * 64}", "whsec_x")
        padded = "0" + str(NOW)  # a zero-padded t of up to 12 digits still verifies
        self.assertEqual(dossier.Webhook.verify(BODY, f"t={padded},v1={sign(BODY, NOW)}", SECRET, now=NOW).id, "evt_1")

    def test_an_empty_or_missing_secret_is_refused_as_in_the_other_clients(self) -> None:
        # Signed with the empty key, as anyone can: a receiver whose secret variable is unset must not accept it.
        for secret in ("", None):
            with self.subTest(secret=secret):
                with self.assertRaises(dossier.SignatureVerificationError) as ctx:
                    dossier.Webhook.verify(BODY, self.header(NOW, sign(BODY, NOW, secret="")), secret, now=NOW)  # type: ignore[arg-type]
                self.assertIn("secret", ctx.exception.message)

    def test_a_signed_payload_that_is_not_an_object_is_refused(self) -> None:
        self.assert_refused("[1,2]", f"t={NOW},v1={sign('[1,2]', NOW)}")
        self.assert_refused("not json", f"t={NOW},v1={sign('not json', NOW)}")

    def test_any_validly_signed_object_is_accepted_even_empty_and_an_empty_body_is_not(self) -> None:
        # As in the other three clients.
        for payload in ("{}", " { } \n", '{"0":"a"}'):
            with self.subTest(payload=payload):
                event = dossier.Webhook.verify(payload, f"t={NOW},v1={sign(payload, NOW)}", SECRET, now=NOW)
                self.assertEqual(event.raw, json.loads(payload))
        for payload in ("", "[]", "null", '"{}"'):
            with self.subTest(payload=payload):
                self.assert_refused(payload, f"t={NOW},v1={sign(payload, NOW)}")


if __name__ == "__main__":
    unittest.main()
