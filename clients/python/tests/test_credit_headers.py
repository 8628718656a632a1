"""X-Credits-Spent and X-Credits-Remaining, read the same way by the four clients."""

from __future__ import annotations

import unittest

import dossier

# The same table is in the JavaScript, Ruby and PHP clients' tests: (header value, count or None).
COUNTS = [
    ("7", 7), ("0", 0), (" 7 ", 7),
    ("-1", None), ("+7", None), ("1.5", None), ("1e2", None), ("0x10", None), ("1_000", None),
    ("٣", None), ("", None), (" ", None), ("seven", None),
]


class CreditHeadersTest(unittest.TestCase):
    def test_credits_spent_and_remaining_are_whole_numbers_or_none(self) -> None:
        for value, expected in COUNTS:
            with self.subTest(value=value):
                result = dossier.SearchResult({"status": "success", "search_id": "srch_1"}, headers={"x-credits-spent": value})
                self.assertEqual(result.credits_spent, expected)
                err = dossier.InsufficientCreditsError("no credits", headers={"x-credits-remaining": value})
                self.assertEqual(err.credits_remaining, expected)


if __name__ == "__main__":
    unittest.main()
