# frozen_string_literal: true

require_relative "test_helper"

# The person search's country, limit and min_score (ADRs 0044, 0047) and the envelope's total_results.
class PersonLimitTest < Minitest::Test
  include DossierTestHelpers

  def test_search_person_sends_country_limit_and_min_score_as_given
    @server.reply(200, { status: "success", search_id: "srch_l", results: [], total_results: 42, credits_remaining: 9,
                         sources: [] })
    @server.reply(200, SUCCESS)
    c = client
    found = c.search_person("Gonzalo Halvorson", phone: "(512) 555-0199", country: "US", limit: 10, min_score: 0.5)
    later = c.search_person("Gonzalo Halvorson", limit: 1)
    assert_equal [
      ["/v1/search/person", { "name" => "Gonzalo Halvorson", "phone" => "(512) 555-0199", "country" => "US",
                              "limit" => 10, "min_score" => 0.5 }],
      ["/v1/search/person", { "name" => "Gonzalo Halvorson", "limit" => 1 }],
    ], @server.requests.map { |r| [r.path, r.json] }
    assert_equal 42, found.total_results
    assert_equal 42, found["total_results"]
    assert_nil later.total_results
  end
end
