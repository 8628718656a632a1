# frozen_string_literal: true

require_relative "test_helper"

# Username presence's choice of sites (sites, tags, top) and POST /v1/screen.
class UsernameAndScreenTest < Minitest::Test
  include DossierTestHelpers

  HIT = { "list" => "ofac-sdn", "entry_id" => "9001", "listed_name" => "KARIMOV, Rustam Bakhtiyorovich",
          "programme" => "SDGT", "match_score" => 0.95, "matched_on" => %w[name birth_year] }.freeze
  SUMMARY = { "found" => 1, "not_found" => 3, "unknown" => 0, "rate_limited" => 0, "blocked" => 0, "timeout" => 1,
              "error" => 0, "skipped" => 0 }.freeze

  def test_search_person_and_search_send_sites_tags_and_top_as_given
    4.times { @server.reply(200, SUCCESS) }
    c = client
    c.search_person(username: "gracehopper", sites: %w[GitHub Reddit], tags: %w[coding de], top: 5)
    c.search_person(username: "gracehopper", top: 50)
    c.search(username: "gracehopper", tags: ["gaming"])
    c.search(query: "gracehopper", type: :username, sites: ["GitHub"], top: 3)
    assert_equal [
      ["/v1/search/person", { "username" => "gracehopper", "sites" => %w[GitHub Reddit], "tags" => %w[coding de],
                              "top" => 5 }],
      ["/v1/search/person", { "username" => "gracehopper", "top" => 50 }],
      ["/v1/search/person", { "username" => "gracehopper", "tags" => ["gaming"] }],
      ["/v1/search", { "query" => "gracehopper", "type" => "username", "sites" => ["GitHub"], "top" => 3 }],
    ], @server.requests.map { |r| [r.path, r.json] }
  end

  def test_a_pending_search_shows_its_progress_and_the_finished_one_its_source_summary
    progress = { "results" => [{ "id" => "per_u", "accounts" => [{ "service" => "GitHub" }] }],
                 "source_summary" => SUMMARY.merge("timeout" => 0), "sources_pending" => 1,
                 "updated_at" => "2026-12-07T00:00:00.000Z" }
    @server.reply(202, { status: "pending", search_id: "srch_u", credits_remaining: 9, progress: progress })
    @server.reply(200, { status: "success", search_id: "srch_u", results: [], credits_remaining: 9, sources: [],
                         source_summary: SUMMARY })
    c = client
    started = c.search_person(username: "gh", top: 5, wait: false)
    assert started.pending?
    assert_equal 1, started["progress"]["sources_pending"]
    assert_equal SUMMARY, c.get_search("srch_u")["source_summary"]
  end

  def test_screen_posts_the_name_and_its_options_without_absent_ones
    3.times { @server.reply(200, SUCCESS) }
    c = client
    c.screen("Rustam Karimov")
    c.screen(name: "Rustam Karimov", birth_year: 1961, country: "UZ", type: :person, permissible_purpose: "kyc")
    c.screen("Acme Ltd", type: "company")
    assert_equal [
      { "name" => "Rustam Karimov" },
      { "name" => "Rustam Karimov", "type" => "person", "birth_year" => 1961, "country" => "UZ",
        "permissible_purpose" => "kyc" },
      { "name" => "Acme Ltd", "type" => "company" },
    ], @server.requests.map(&:json)
    assert_equal ["/v1/screen"] * 3, @server.requests.map(&:path)
    @server.requests.each { |r| assert_match UUID_V4, r.headers["idempotency-key"] }
    assert_raises(ArgumentError) { c.screen }
    assert_equal 3, @server.requests.size, "no name: refused before sending"
  end

  def test_screen_is_retried_with_its_key_and_its_202_polled_to_the_envelope
    item = { "id" => "per_1", "full_name" => "KARIMOV, Rustam", "match_score" => 0.9, "watchlist_hits" => [HIT] }
    @server.reply(503, error_body("unavailable", "busy"), { "Retry-After" => "0" })
    @server.reply(202, { status: "pending", search_id: "srch_s", credits_remaining: 8 },
                  { "Location" => "/v1/searches/srch_s", "Retry-After" => "0" })
    @server.reply(200, { status: "success", search_id: "srch_s", results: [item], credits_remaining: 7, sources: [] })
    res = client.screen("Rustam Karimov", birth_year: 1961, idempotency_key: "screen-1")
    assert res.success?
    assert_equal [HIT], res.results.first["watchlist_hits"]
    assert_equal "screen-1", res.idempotency_key
    assert_equal [%w[POST /v1/screen], %w[POST /v1/screen], %w[GET /v1/searches/srch_s]],
                 @server.requests.map { |r| [r.method, r.path] }
    assert_equal %w[screen-1 screen-1], @server.requests.first(2).map { |r| r.headers["idempotency-key"] }
  end
end
