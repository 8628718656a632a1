"""POST /v1/batch and GET /v1/batches/{id}: items per request, polling, errors."""

from __future__ import annotations

import unittest
from typing import Any, Dict, List

import dossier

from .base import FakeServerTest
from .fakeserver import answer, error

PHONE_ITEM = {"status": "success", "search_id": "srch_1", "results": [{"e164": "+14155552671"}],
              "credits_remaining": 2, "sources": [{"provider": "libphonenumber", "outcome": "found", "took_ms": 1}]}
INVALID_ITEM = {"status": "error", "error": {"code": "validation_error", "message": "phone is not a phone number",
                                             "details": [{"field": "phone", "issue": "is not a phone number"}]}}
BROKE_ITEM = {"status": "error", "error": {"code": "insufficient_credits", "message": "balance too low"}}
FAILED_ITEM = {"status": "error", "search_id": "srch_f", "error": {"code": "unavailable", "message": "the lookup failed"}}
PENDING_ITEM = {"status": "pending", "search_id": "srch_2", "credits_remaining": 2}

REQUESTS: List[Dict[str, Any]] = [
    {"kind": "phone", "input": {"phone": "+14155552671"}},
    {"kind": "phone", "input": {"phone": "abc"}},
]


def batch_body(status: str, items: List[Dict[str, Any]], credits: int = 2) -> Dict[str, Any]:
    return {"status": status, "batch_id": "bat_1", "items": items, "credits_remaining": credits}


def pending_batch(items: List[Dict[str, Any]], retry_after: str = "0.01") -> Any:
    return answer(202, batch_body("pending", items), Location="/v1/batches/bat_1", Retry_After=retry_after)


class BatchTest(FakeServerTest):
    def test_none_fields_of_an_item_input_are_not_sent(self) -> None:
        # As for a lookup's body (and as the Ruby and PHP clients do): the server rejects null fields.
        self.server.route("POST", "/v1/batch", answer(200, batch_body("success", [PHONE_ITEM, PHONE_ITEM])))
        self.client().batch([{"kind": "phone", "input": {"phone": "+14155552671", "country": None}},
                             {"kind": "person", "input": {"name": "Jane Doe", "email": None, "location": "Austin"}}])
        self.assertEqual(self.server.calls("POST", "/v1/batch")[0].json, {"requests": [
            {"kind": "phone", "input": {"phone": "+14155552671"}},
            {"kind": "person", "input": {"name": "Jane Doe", "location": "Austin"}},
        ]})

    def test_settled_batch_models_each_item(self) -> None:
        self.server.route("POST", "/v1/batch", answer(200, batch_body("success", [PHONE_ITEM, INVALID_ITEM, BROKE_ITEM, FAILED_ITEM])))
        result = self.client().batch(REQUESTS, idempotency_key="batch-1")

        post = self.server.calls("POST", "/v1/batch")[0]
        self.assertEqual(post.json, {"requests": REQUESTS})
        self.assertEqual(post.headers["idempotency-key"], "batch-1")
        self.assertEqual(post.headers["prefer"], "wait=3")  # timeout=5 in the tests
        self.assertEqual(post.headers["content-type"], "application/json")

        self.assertEqual((result.status, result.batch_id, result.credits_remaining), ("success", "bat_1", 2))
        self.assertFalse(result.pending)
        self.assertEqual(result.idempotency_key, "batch-1")
        ok, invalid, broke, failed = result.items
        self.assertTrue(ok.ok)
        self.assertIsNone(ok.error)
        self.assertEqual((ok.search_id, ok.results, ok.credits_remaining), ("srch_1", [{"e164": "+14155552671"}], 2))
        self.assertEqual(ok.sources[0]["provider"], "libphonenumber")

        self.assertTrue(invalid.failed)
        self.assertIsInstance(invalid.error, dossier.ValidationError)
        assert invalid.error is not None
        self.assertEqual(invalid.error.code, "validation_error")
        self.assertEqual(invalid.error.details, [{"field": "phone", "issue": "is not a phone number"}])
        self.assertIsNone(invalid.error.status)
        self.assertEqual(invalid.results, [])

        self.assertIsInstance(broke.error, dossier.InsufficientCreditsError)
        self.assertIsInstance(failed.error, dossier.UnavailableError)
        self.assertEqual(failed.search_id, "srch_f")
        self.assertEqual(result.errors, [invalid, broke, failed])

    def test_pending_batch_is_polled_until_settled(self) -> None:
        self.server.route("POST", "/v1/batch", pending_batch([PHONE_ITEM, PENDING_ITEM], retry_after="0.03"))
        self.server.route("GET", "/v1/batches/bat_1", pending_batch([PHONE_ITEM, PENDING_ITEM], retry_after="0.02"),
                          answer(200, batch_body("success", [PHONE_ITEM, dict(PHONE_ITEM, search_id="srch_2", credits_remaining=1)], 1)))
        result = self.client().batch(REQUESTS)
        self.assertEqual(result.status, "success")
        self.assertEqual([i.status for i in result.items], ["success", "success"])
        self.assertEqual(result.credits_remaining, 1)
        self.assertEqual(self.sleeps.delays, [0.03, 0.02])
        post = self.server.calls("POST", "/v1/batch")[0]
        self.assertEqual(result.idempotency_key, post.headers["idempotency-key"])
        for get in self.server.calls("GET", "/v1/batches/bat_1"):
            self.assertNotIn("idempotency-key", get.headers)
            self.assertEqual(get.headers["authorization"], post.headers["authorization"])

    def test_wait_false_returns_the_pending_batch(self) -> None:
        self.server.route("POST", "/v1/batch", pending_batch([PENDING_ITEM]))
        result = self.client().batch(REQUESTS[:1], wait=False)
        self.assertTrue(result.pending)
        self.assertEqual(result.http_status, 202)
        self.assertEqual(result.items[0].status, "pending")
        self.assertEqual(result.items[0].search_id, "srch_2")
        self.assertFalse(result.items[0].ok or result.items[0].failed)
        self.assertEqual(self.server.requests[0].headers["prefer"], "respond-async")
        self.assertEqual(len(self.server.requests), 1)

    def test_get_batch_as_it_is_and_waiting(self) -> None:
        self.server.route("GET", "/v1/batches/bat_1", pending_batch([PENDING_ITEM]), pending_batch([PENDING_ITEM]),
                          answer(200, batch_body("success", [PHONE_ITEM])))
        client = self.client()
        self.assertTrue(client.get_batch("bat_1").pending)
        done = client.get_batch("bat_1", wait=True)
        self.assertEqual(done.items[0].results, PHONE_ITEM["results"])
        self.assertIsNone(done.idempotency_key)
        self.assertEqual(len(self.server.requests), 3)

    def test_polling_deadline_raises_with_the_batch(self) -> None:
        self.server.route("POST", "/v1/batch", pending_batch([PENDING_ITEM], retry_after="0.05"))
        self.server.route("GET", "/v1/batches/bat_1", pending_batch([PENDING_ITEM], retry_after="0.05"))
        with self.assertRaises(dossier.SearchTimeoutError) as ctx:
            self.client().batch(REQUESTS, poll_timeout=0.15)
        self.assertEqual(ctx.exception.batch_id, "bat_1")
        self.assertIsNone(ctx.exception.search_id)
        self.assertIsInstance(ctx.exception.search, dossier.BatchResult)
        self.assertIn("get_batch()", str(ctx.exception))

    def test_too_many_requests_is_the_servers_validation_error(self) -> None:
        self.server.route("POST", "/v1/batch", error(400, "validation_error", "requests must hold at most 100 items",
                                                     details=[{"field": "requests", "issue": "must hold at most 100 items"}]))
        many = [{"kind": "phone", "input": {"phone": "+14155552671"}}] * 101
        with self.assertRaises(dossier.ValidationError) as ctx:
            self.client().batch(many)
        self.assertEqual(ctx.exception.status, 400)
        self.assertEqual(ctx.exception.details[0]["field"], "requests")
        self.assertEqual(len(self.server.calls("POST", "/v1/batch")[0].json["requests"]), 101)
        self.assertEqual(len(self.server.requests), 1)  # a 400 is not retried

    def test_unknown_batch_is_not_found(self) -> None:
        self.server.route("GET", "/v1/batches/bat_nope", error(404, "not_found", "no such batch"))
        with self.assertRaises(dossier.NotFoundError):
            self.client().get_batch("bat_nope")


if __name__ == "__main__":
    unittest.main()
