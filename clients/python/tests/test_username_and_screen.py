"""Username presence's choice of sites (sites, tags, top) and POST /v1/screen."""

from __future__ import annotations

import unittest
import uuid

from .base import FakeServerTest
from .fakeserver import answer, error, pending, success

HIT = {
    "list": "ofac-sdn",
    "entry_id": "9001",
    "listed_name": "KARIMOV, Rustam Bakhtiyorovich",
    "programme": "SDGT",
    "match_score": 0.95,
    "matched_on": ["name", "birth_year"],
}
SUMMARY = {"found": 1, "not_found": 3, "unknown": 0, "rate_limited": 0, "blocked": 0, "timeout": 1, "error": 0, "skipped": 0}


class UsernameSitesTest(FakeServerTest):
    def test_search_person_sends_sites_tags_and_top_as_given(self) -> None:
        self.server.route("POST", "/v1/search/person", success())
        c = self.client()
        c.search_person(username="gracehopper", sites=["GitHub", "Reddit"], tags=("coding", "de"), top=5)
        c.search_person(username="gracehopper", top=50)
        c.search(username="gracehopper", tags=["gaming"])
        self.assertEqual(
            [r.json for r in self.server.requests],
            [
                {"username": "gracehopper", "sites": ["GitHub", "Reddit"], "tags": ["coding", "de"], "top": 5},
                {"username": "gracehopper", "top": 50},
                {"username": "gracehopper", "tags": ["gaming"]},
            ],
        )

    def test_the_generic_form_sends_them_with_type_username(self) -> None:
        self.server.route("POST", "/v1/search", success())
        self.client().search(query="gracehopper", type="username", sites=["GitHub"], top=3)
        req = self.server.requests[0]
        self.assertEqual(req.path, "/v1/search")
        self.assertEqual(req.json, {"query": "gracehopper", "type": "username", "sites": ["GitHub"], "top": 3})

    def test_a_pending_search_shows_its_progress_and_the_finished_one_its_source_summary(self) -> None:
        progress = {
            "results": [{"id": "per_u", "accounts": [{"service": "GitHub", "username": "gh", "url": None}]}],
            "source_summary": dict(SUMMARY, timeout=0),
            "sources_pending": 1,
            "updated_at": "2026-12-07T00:00:00.000Z",
        }
        self.server.route(
            "POST",
            "/v1/search/person",
            answer(202, {"status": "pending", "search_id": "srch_u", "credits_remaining": 9, "progress": progress}),
        )
        done = {"status": "success", "search_id": "srch_u", "results": [], "credits_remaining": 9, "sources": [],
                "source_summary": SUMMARY}
        self.server.route("GET", "/v1/searches/srch_u", answer(200, done))
        c = self.client()
        started = c.search_person(username="gh", top=5, wait=False)
        self.assertTrue(started.pending)
        self.assertEqual(started["progress"]["sources_pending"], 1)
        self.assertEqual(c.get_search("srch_u")["source_summary"], SUMMARY)


class ScreenTest(FakeServerTest):
    def test_screen_posts_the_name_and_its_options_without_absent_ones(self) -> None:
        self.server.route("POST", "/v1/screen", success())
        c = self.client()
        c.screen("Rustam Karimov")
        c.screen("Rustam Karimov", birth_year=1961, country="UZ", type="person", permissible_purpose="kyc")
        c.screen("Acme Ltd", type="company")
        self.assertEqual([r.path for r in self.server.requests], ["/v1/screen"] * 3)
        self.assertEqual(
            [r.json for r in self.server.requests],
            [
                {"name": "Rustam Karimov"},
                {"name": "Rustam Karimov", "type": "person", "birth_year": 1961, "country": "UZ",
                 "permissible_purpose": "kyc"},
                {"name": "Acme Ltd", "type": "company"},
            ],
        )
        for r in self.server.requests:
            self.assertEqual(uuid.UUID(r.headers["idempotency-key"]).version, 4)

    def test_screen_is_retried_with_its_key_and_its_202_polled_to_the_envelope(self) -> None:
        item = {"id": "per_1", "full_name": "KARIMOV, Rustam", "match_score": 0.9, "watchlist_hits": [HIT]}
        self.server.route("POST", "/v1/screen", error(503, "unavailable"), pending("srch_s", retry_after="0"))
        self.server.route("GET", "/v1/searches/srch_s", success("srch_s", [item], 7))
        result = self.client().screen("Rustam Karimov", birth_year=1961, idempotency_key="screen-1")
        self.assertEqual(result.status, "success")
        self.assertEqual(result.results[0]["watchlist_hits"], [HIT])
        self.assertEqual(result.idempotency_key, "screen-1")
        self.assertEqual([c.headers["idempotency-key"] for c in self.server.calls("POST", "/v1/screen")], ["screen-1"] * 2)
        self.assertEqual(len(self.server.calls("GET", "/v1/searches/srch_s")), 1)


if __name__ == "__main__":
    unittest.main()
