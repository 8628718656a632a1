"""The person search's country, limit and min_score (ADRs 0044, 0047) and the envelope's total_results."""

from __future__ import annotations

import unittest

from .base import FakeServerTest
from .fakeserver import answer, success


class PersonLimitTest(FakeServerTest):
    def test_search_person_sends_country_limit_and_min_score_as_given(self) -> None:
        body = {"status": "success", "search_id": "srch_l", "results": [], "total_results": 42,
                "credits_remaining": 9, "sources": []}
        self.server.route("POST", "/v1/search/person", answer(200, body))
        c = self.client()
        found = c.search_person("Gonzalo Halvorson", phone="(512) 555-0199", country="US", limit=10, min_score=0.5)
        c.search_person("Gonzalo Halvorson", limit=1)
        self.assertEqual(
            [r.json for r in self.server.requests],
            [
                {"name": "Gonzalo Halvorson", "phone": "(512) 555-0199", "country": "US", "limit": 10,
                 "min_score": 0.5},
                {"name": "Gonzalo Halvorson", "limit": 1},
            ],
        )
        self.assertEqual(found.total_results, 42)
        self.assertEqual(found["total_results"], 42)

    def test_total_results_is_none_when_the_envelope_has_none(self) -> None:
        self.server.route("POST", "/v1/search/person", success())
        self.assertIsNone(self.client().search_person("Ada").total_results)


if __name__ == "__main__":
    unittest.main()
