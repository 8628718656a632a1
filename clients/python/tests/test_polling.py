"""202 answers: polling GET /v1/searches/{id} until done, the deadline, and wait=False."""

from __future__ import annotations

import unittest

import dossier

from .base import FakeServerTest
from .fakeserver import answer, error, pending, success


class PollingTest(FakeServerTest):
    def test_202_is_polled_to_completion(self) -> None:
        self.server.route("POST", "/v1/search/person", pending("srch_p", retry_after="0.03"))
        self.server.route("GET", "/v1/searches/srch_p", pending("srch_p", retry_after="0.02"), success("srch_p", [{"full_name": "John Smith"}], 8))
        result = self.client().search(name="John Smith")
        self.assertEqual(result.status, "success")
        self.assertEqual(result.results, [{"full_name": "John Smith"}])
        self.assertEqual(result.credits_remaining, 8)
        self.assertEqual(len(self.server.calls("GET", "/v1/searches/srch_p")), 2)
        self.assertEqual(self.sleeps.delays, [0.03, 0.02])  # each Retry-After honoured
        post = self.server.calls("POST", "/v1/search/person")[0]
        self.assertEqual(result.idempotency_key, post.headers["idempotency-key"])
        for get in self.server.calls("GET", "/v1/searches/srch_p"):
            self.assertEqual(get.headers["authorization"], post.headers["authorization"])
            self.assertNotIn("idempotency-key", get.headers)

    def test_default_poll_interval_is_one_second(self) -> None:
        self.server.route("POST", "/v1/verify/email", answer(202, {"status": "pending", "search_id": "srch_n", "credits_remaining": 1}))
        self.server.route("GET", "/v1/searches/srch_n", success("srch_n"))
        client = self.client()
        client._transport.sleep = self.sleeps.delays.append  # do not really wait 1 s
        client.verify_email("a@example.com")
        self.assertEqual(self.sleeps.delays, [1.0])

    def test_poll_interval_is_configurable(self) -> None:
        # As poll_interval in the Ruby client, pollIntervalMs in the JavaScript one, pollInterval in the PHP one.
        self.server.route("POST", "/v1/verify/email", answer(202, {"status": "pending", "search_id": "srch_n", "credits_remaining": 1}))
        self.server.route("GET", "/v1/searches/srch_n", answer(202, {"status": "pending", "search_id": "srch_n", "credits_remaining": 1}),
                          success("srch_n"))
        client = self.client(poll_interval=0.25)
        client._transport.sleep = self.sleeps.delays.append
        client.verify_email("a@example.com")
        self.assertEqual(self.sleeps.delays, [0.25, 0.25])
        self.assertEqual(client.poll_interval, 0.25)

    def test_an_unreadable_retry_after_on_a_202_waits_the_poll_interval(self) -> None:
        self.server.route("POST", "/v1/verify/email", pending("srch_n", retry_after="-1"))
        self.server.route("GET", "/v1/searches/srch_n", pending("srch_n", retry_after="soon"), success("srch_n"))
        client = self.client(poll_interval=0.5)
        client._transport.sleep = self.sleeps.delays.append
        client.verify_email("a@example.com")
        self.assertEqual(self.sleeps.delays, [0.5, 0.5])

    def test_a_long_retry_after_on_a_202_waits_60_seconds_at_most(self) -> None:
        # As the other three clients: a poll never sleeps more than 60 s (the longest Retry-After waited
        # before a retry), whatever the deadline.
        self.server.route("POST", "/v1/verify/email", pending("srch_n", retry_after="3600"))
        self.server.route("GET", "/v1/searches/srch_n", success("srch_n"))
        client = self.client(poll_timeout=1000)
        client._transport.sleep = self.sleeps.delays.append
        client.verify_email("a@example.com")
        self.assertEqual(self.sleeps.delays, [60])

    def test_wait_false_returns_the_pending_search_at_once(self) -> None:
        self.server.route("POST", "/v1/verify/phone", pending("srch_a", credits=2))
        result = self.client().verify_phone("+14155552671", wait=False)
        self.assertTrue(result.pending)
        self.assertEqual(result.status, "pending")
        self.assertEqual(result.search_id, "srch_a")
        self.assertEqual(result.credits_remaining, 2)
        self.assertEqual(result.results, [])
        self.assertEqual(result.http_status, 202)
        self.assertEqual(self.server.requests[0].headers["prefer"], "respond-async")
        self.assertEqual(len(self.server.requests), 1)

    def test_get_search_then_wait(self) -> None:
        self.server.route("GET", "/v1/searches/srch_g", pending("srch_g"), pending("srch_g"), success("srch_g", [{"e164": "+1"}]))
        client = self.client()
        first = client.get_search("srch_g")
        self.assertTrue(first.pending)
        done = client.get_search("srch_g", wait=True)
        self.assertEqual(done.results, [{"e164": "+1"}])
        self.assertEqual(len(self.server.requests), 3)

    def test_deadline_raises_search_timeout_with_the_pending_search(self) -> None:
        self.server.route("POST", "/v1/search", pending("srch_slow", retry_after="0.0625"))
        self.server.route("GET", "/v1/searches/srch_slow", pending("srch_slow", retry_after="0.0625"))
        client = self.client()
        clock = self.fake_clock(client)
        with self.assertRaises(dossier.SearchTimeoutError) as ctx:
            client.search(query="x", type="person", poll_timeout=0.3)
        err = ctx.exception
        self.assertEqual(err.search_id, "srch_slow")
        self.assertTrue(err.search.pending)
        # Polled every Retry-After until the budget was spent, the last wait cut to what was left.
        self.assertEqual(clock.delays[:4], [0.0625] * 4)
        self.assertEqual(len(clock.delays), 5)
        self.assertAlmostEqual(clock.delays[4], 0.05)
        self.assertEqual(len(self.server.calls("GET", "/v1/searches/srch_slow")), 5, "a poll after each wait")

    def test_client_wide_poll_timeout(self) -> None:
        self.server.route("GET", "/v1/searches/srch_s", pending("srch_s", retry_after="0.05"))
        with self.assertRaises(dossier.SearchTimeoutError):
            self.client(poll_timeout=0.1).get_search("srch_s", wait=True)

    def test_poll_timeout_error_and_its_deprecated_name_search_timeout_error_catch_it(self) -> None:
        self.server.route("GET", "/v1/searches/srch_s", pending("srch_s", retry_after="0.05"))
        for name in ("PollTimeoutError", "SearchTimeoutError"):
            with self.subTest(name=name), self.assertRaises(getattr(dossier, name)):
                self.client(poll_timeout=0.1).get_search("srch_s", wait=True)
        self.assertIs(dossier.SearchTimeoutError, dossier.PollTimeoutError)

    def test_polling_get_is_retried_on_503_and_429(self) -> None:
        self.server.route("POST", "/v1/verify/email", pending("srch_r"))
        self.server.route("GET", "/v1/searches/srch_r",
                          error(503, "unavailable", Retry_After="0.01"),
                          error(429, "rate_limited", Retry_After="0.01"),
                          success("srch_r", [{"email": "a@example.com"}]))
        result = self.client().verify_email("a@example.com")
        self.assertEqual(result.results, [{"email": "a@example.com"}])
        self.assertEqual(len(self.server.calls("GET", "/v1/searches/srch_r")), 3)

    def test_failed_lookup_raises_unavailable_without_retrying_the_get(self) -> None:
        failed = answer(503, {"status": "error", "error": {"code": "unavailable", "message": "the lookup failed; nothing was charged"},
                              "search_id": "srch_f", "credits_remaining": 3, "request_id": "req_f"}, Retry_After="0.01")
        self.server.route("POST", "/v1/verify/phone", pending("srch_f"))
        self.server.route("GET", "/v1/searches/srch_f", failed)
        with self.assertRaises(dossier.UnavailableError) as ctx:
            self.client().verify_phone("+14155552671")
        self.assertEqual(ctx.exception.search_id, "srch_f")
        self.assertEqual(ctx.exception.request_id, "req_f")
        self.assertEqual(len(self.server.calls("GET", "/v1/searches/srch_f")), 1)

    def test_unknown_search_is_not_found(self) -> None:
        self.server.route("GET", "/v1/searches/srch_nope", error(404, "not_found", "no such search"))
        with self.assertRaises(dossier.NotFoundError):
            self.client().get_search("srch_nope")


if __name__ == "__main__":
    unittest.main()
