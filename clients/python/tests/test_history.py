"""Search history: GET /v1/searches, its filters and its cursor pages."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import dossier

from .base import KEY, FakeServerTest
from .fakeserver import answer, error


def summary(search_id: str, kind: str = "person") -> dict:
    return {"search_id": search_id, "kind": kind, "status": "succeeded",
            "created_at": "2026-11-22T09:31:12.418Z", "completed_at": "2026-11-22T09:31:12.502Z",
            "credits_spent": 1, "permissible_purpose": None, "result_count": 2}


def page(searches: list, next_cursor: "str | None") -> tuple:
    return answer(200, {"status": "success", "searches": searches, "next_cursor": next_cursor})


class SearchHistoryTest(FakeServerTest):
    def test_one_page_with_filters(self) -> None:
        path = "/v1/searches?kind=person&since=2026-11-01T00%3A00%3A00Z&until=2026-12-01T00%3A00%3A00Z&limit=2"
        self.server.route("GET", path, page([summary("srch_2"), summary("srch_1")], "cur_1"))
        got = self.client().list_searches(kind="person", since="2026-11-01T00:00:00Z",
                                          until="2026-12-01T00:00:00Z", limit=2)
        self.assertIsInstance(got, dossier.SearchHistory)
        self.assertEqual([s["search_id"] for s in got.searches], ["srch_2", "srch_1"])
        self.assertEqual(got.next_cursor, "cur_1")
        self.assertTrue(got.has_more)
        (call,) = self.server.calls("GET", path)
        self.assertEqual(call.headers["authorization"], f"Bearer {KEY}")

    def test_datetime_and_date_filters_are_sent_as_rfc3339_utc(self) -> None:
        # str(datetime) ("2026-11-24 15:00:00+01:00", with a space) is not a date-time the gateway reads: 400.
        plus_one = timezone(timedelta(hours=1))
        sent = [
            ({"since": datetime(2026, 11, 24, 15, 0, tzinfo=plus_one),
              "until": datetime(2026, 11, 25, 8, 30, 0, 250000, tzinfo=timezone.utc)},
             "since=2026-11-24T14%3A00%3A00Z&until=2026-11-25T08%3A30%3A00.25Z"),
            ({"since": datetime(2026, 11, 24, 14, 0, 0, 123456, tzinfo=timezone.utc), "until": date(2026, 12, 1)},
             "since=2026-11-24T14%3A00%3A00.123456Z&until=2026-12-01T00%3A00%3A00Z"),
            ({"since": "2026-11-24T14:00:00+01:00"}, "since=2026-11-24T14%3A00%3A00%2B01%3A00"),  # as given
        ]
        for _, query in sent:
            self.server.route("GET", f"/v1/searches?{query}", page([], None))
        client = self.client()
        for filters, _ in sent:
            client.list_searches(**filters)
        self.assertEqual([r.path for r in self.server.requests], [f"/v1/searches?{q}" for _, q in sent])

    def test_a_naive_datetime_is_local_time_as_datetime_astimezone_reads_it(self) -> None:
        naive = datetime(2026, 11, 24, 14, 0)
        utc = naive.astimezone(timezone.utc).strftime("%Y-%m-%dT%H%%3A%M%%3A%SZ")
        self.server.route("GET", f"/v1/searches?since={utc}", page([], None))
        self.client().list_searches(since=naive)
        self.assertEqual([r.path for r in self.server.requests], [f"/v1/searches?since={utc}"])

    def test_no_filters_and_the_last_page(self) -> None:
        self.server.route("GET", "/v1/searches", page([], None))
        got = self.client().list_searches()
        self.assertEqual((got.searches, got.next_cursor, got.has_more), ([], None, False))

    def test_iter_searches_follows_next_cursor_with_the_same_filters(self) -> None:
        self.server.route("GET", "/v1/searches?kind=phone&limit=2",
                          page([summary("srch_4", "phone"), summary("srch_3", "phone")], "c+/2"))
        self.server.route("GET", "/v1/searches?kind=phone&limit=2&cursor=c%2B%2F2",
                          page([summary("srch_2", "phone")], None))
        ids = [s["search_id"] for s in self.client().iter_searches(kind="phone", limit=2)]
        self.assertEqual(ids, ["srch_4", "srch_3", "srch_2"])
        self.assertEqual(len(self.server.requests), 2)

    def test_a_bad_filter_is_a_validation_error(self) -> None:
        self.server.route("GET", "/v1/searches?limit=0",
                          error(400, "validation_error", "limit must be a whole number from 1 to 100",
                                details=[{"field": "limit", "issue": "must be a whole number from 1 to 100"}]))
        with self.assertRaises(dossier.ValidationError) as ctx:
            self.client().list_searches(limit=0)
        self.assertEqual(ctx.exception.details[0]["field"], "limit")
