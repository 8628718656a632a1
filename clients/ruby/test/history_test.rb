# frozen_string_literal: true

require_relative "test_helper"

# Search history: GET /v1/searches, its filters and its cursor pages.
class HistoryTest < Minitest::Test
  include DossierTestHelpers

  def summary(id, kind = "phone")
    { search_id: id, kind: kind, status: "succeeded", created_at: "2026-11-22T09:31:12.418Z",
      completed_at: "2026-11-22T09:31:12.502Z", credits_spent: 1, permissible_purpose: nil, result_count: 1 }
  end

  def test_list_searches_sends_the_filters_and_returns_the_page
    @server.reply(200, { status: "success", searches: [summary("srch_2"), summary("srch_1")], next_cursor: "c+/2" })
    page = client.list_searches(kind: "phone", since: "2026-11-01T00:00:00Z", until: "2026-12-01T00:00:00Z", limit: 2)
    assert_equal %w[srch_2 srch_1], page.searches.map { |s| s["search_id"] }
    assert_equal "c+/2", page.next_cursor
    request = @server.requests.first
    assert_equal "GET", request.method
    assert_equal "/v1/searches?kind=phone&since=2026-11-01T00%3A00%3A00Z&until=2026-12-01T00%3A00%3A00Z&limit=2",
                 request.path
    assert_equal "Bearer dsk_test", request.headers["authorization"]
  end

  def test_time_date_time_and_date_filters_are_sent_as_rfc3339_utc
    # Time#to_s ("2026-11-24 14:00:00 +0100") is not a date-time the gateway reads: it answers 400.
    4.times { @server.reply(200, { status: "success", searches: [], next_cursor: nil }) }
    c = client
    c.list_searches(since: Time.new(2026, 11, 24, 15, 0, 0, "+01:00"), until: Time.utc(2026, 11, 25, 8, 30, 0.25r))
    c.list_searches(since: DateTime.new(2026, 11, 24, 14, 0, 0, "-05:00"), until: Date.new(2026, 12, 1))
    c.list_searches(since: Time.at(1_795_528_800, 123_456_789, :nsec).utc)
    c.list_searches(since: "2026-11-24T14:00:00+01:00") # a String is sent as given
    assert_equal ["/v1/searches?since=2026-11-24T14%3A00%3A00Z&until=2026-11-25T08%3A30%3A00.25Z",
                  "/v1/searches?since=2026-11-24T19%3A00%3A00Z&until=2026-12-01T00%3A00%3A00Z",
                  "/v1/searches?since=2026-11-24T14%3A00%3A00.123456Z",
                  "/v1/searches?since=2026-11-24T14%3A00%3A00%2B01%3A00"],
                 @server.requests.map(&:path)
  end

  def test_no_filters_and_the_last_page
    @server.reply(200, { status: "success", searches: [], next_cursor: nil })
    page = client.list_searches
    assert_equal [[], nil], [page.searches, page.next_cursor]
    assert_equal "/v1/searches", @server.requests.first.path
  end

  def test_each_search_follows_next_cursor_with_the_same_filters
    @server.reply(200, { status: "success", searches: [summary("srch_3"), summary("srch_2")], next_cursor: "c+/2" })
    @server.reply(200, { status: "success", searches: [summary("srch_1")], next_cursor: nil })
    assert_equal %w[srch_3 srch_2 srch_1], client.each_search(kind: "phone", limit: 2).map { |s| s["search_id"] }
    assert_equal ["/v1/searches?kind=phone&limit=2", "/v1/searches?kind=phone&limit=2&cursor=c%2B%2F2"],
                 @server.requests.map(&:path)
  end

  def test_a_bad_or_unknown_filter
    @server.reply(400, error_body("validation_error", "limit must be a whole number from 1 to 100",
                                  details: [{ field: "limit", issue: "must be a whole number from 1 to 100" }]))
    err = assert_raises(Dossier::ValidationError) { client.list_searches(limit: 0) }
    assert_equal "limit", err.details.first["field"]
    assert_raises(ArgumentError) { client.list_searches(knd: "phone") }
    assert_equal 1, @server.requests.size
  end
end
