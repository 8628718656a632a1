"""Retry-After as every Dossier client reads it (RFC 9110 section 10.2.3), odd values included."""

from __future__ import annotations

import unittest
from unittest import mock

import dossier
from dossier._errors import parse_retry_after

from .base import FakeServerTest
from .fakeserver import ACCOUNT, answer, error

NOW = 1795528800.0  # 2026-11-24T14:00:00Z

# The same table is in the JavaScript, Ruby and PHP clients' tests: (header value, seconds or None).
CASES = [
    ("120", 120),
    ("0", 0),
    (" 7 ", 7),  # surrounding whitespace is not part of the value
    ("1.5", 1.5),  # a decimal fraction is tolerated
    ("86400", 86400),
    ("86401", 86400),  # capped at one day
    ("99999999999999999999999999", 86400),
    ("9" * 400, 86400),
    ("Tue, 24 Nov 2026 14:00:30 GMT", 30),  # IMF-fixdate
    ("Tuesday, 24-Nov-26 14:00:30 GMT", 30),  # obsolete RFC 850 form
    ("Tue Nov 24 14:00:30 2026", 30),  # obsolete asctime form
    ("Sun Nov  1 14:00:00 2026", 0),  # asctime, one-digit day; a past date is no wait
    ("Sun, 06 Nov 1994 08:49:37 GMT", 0),
    ("Sunday, 06-Nov-94 08:49:37 GMT", 0),  # two-digit year: 1994, not 2094 (over 50 years ahead)
    ("Fri, 31 Dec 9999 23:59:59 GMT", 86400),
    # Garbage: none (a retry waits its backoff, a poll its poll interval).
    ("", None),
    ("   ", None),
    ("-5", None),
    ("+5", None),
    ("1e3", None),
    ("0x10", None),
    ("1_000", None),
    (".5", None),
    ("5.", None),
    ("1 2", None),
    ("inf", None),
    ("Infinity", None),
    ("NaN", None),
    ("soon", None),
    ("tomorrow", None),
    ("2026-11-24T14:00:30Z", None),  # RFC 3339 is not an HTTP-date
    ("Tue, 24 Nov 2026 14:00:30 +0000", None),  # an HTTP-date is always GMT
    ("tue, 24 nov 2026 14:00:30 gmt", None),  # HTTP-date is case-sensitive
    ("24 Nov 2026 14:00:30 GMT", None),
    ("Mon, 30 Feb 2026 14:00:00 GMT", None),  # no such day
    ("Tue, 24 Nov 2026 24:00:00 GMT", None),
]


class ParseRetryAfterTest(unittest.TestCase):
    def test_the_shared_table(self) -> None:
        for value, expected in CASES:
            with self.subTest(value=value):
                self.assertEqual(parse_retry_after(value, now=NOW), expected)

    def test_absent_is_none(self) -> None:
        self.assertIsNone(parse_retry_after(None))


class OddRetryAfterTest(FakeServerTest):
    def test_garbage_is_ignored_and_the_backoff_waited(self) -> None:
        self.server.route("GET", "/v1/account", error(429, "rate_limited", Retry_After="-5"),
                          error(503, "unavailable", Retry_After="in a while"),
                          answer(200, {"status": "success", "account": ACCOUNT, "credits_remaining": 1}))
        c = self.client(backoff_base=2, backoff_cap=30)
        delays: "list[float]" = []
        c._transport.sleep = delays.append  # records without sleeping
        with mock.patch("random.uniform", side_effect=lambda lo, hi: hi):  # the backoff at its ceiling
            c.account()
        self.assertEqual(delays, [2, 4])

    def test_a_huge_value_is_read_as_a_day_and_raised_at_once(self) -> None:
        self.server.route("GET", "/v1/account", error(429, "rate_limited", Retry_After="9" * 400))
        c = self.client()
        delays: "list[float]" = []
        c._transport.sleep = delays.append
        with self.assertRaises(dossier.RateLimitError) as ctx:
            c.account()
        self.assertEqual(ctx.exception.retry_after, 86400)
        self.assertEqual(delays, [])
        self.assertEqual(len(self.server.requests), 1)


if __name__ == "__main__":
    unittest.main()
