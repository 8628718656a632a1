"""RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset, read the same way by the four clients."""

from __future__ import annotations

import unittest

import dossier

HEADERS = {"ratelimit-limit": "100", "ratelimit-remaining": "99", "ratelimit-reset": "1"}


class RateLimitHeadersTest(unittest.TestCase):
    def test_every_answer_reads_the_rate_limit_it_carries(self) -> None:
        answers = [
            dossier.SearchResult({"status": "success", "search_id": "srch_1"}, headers=HEADERS),
            dossier.BatchResult({"status": "success", "batch_id": "bat_1", "items": []}, headers=HEADERS),
            dossier.Account({"status": "success", "account": {}, "credits_remaining": 3}, headers=HEADERS),
        ]
        for answer in answers:
            with self.subTest(answer=type(answer).__name__):
                self.assertEqual(answer.rate_limit, {"limit": 100, "remaining": 99, "reset": 1})

    def test_a_missing_or_unreadable_header_is_none(self) -> None:
        # Read as the credit headers are: a whole number of ASCII digits, else None.
        result = dossier.SearchResult(
            {"status": "success", "search_id": "srch_1"}, headers={"ratelimit-limit": "1.5", "ratelimit-remaining": "-1"}
        )
        self.assertEqual(result.rate_limit, {"limit": None, "remaining": None, "reset": None})


if __name__ == "__main__":
    unittest.main()
