# frozen_string_literal: true

require_relative "test_helper"

# RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset, read the same way by the four clients.
class RateLimitHeadersTest < Minitest::Test
  HEADERS = { "ratelimit-limit" => "100", "ratelimit-remaining" => "99", "ratelimit-reset" => "1" }.freeze

  def reply(headers, data)
    Dossier::Transport::Reply.new(200, headers, "{}", data)
  end

  def test_every_answer_reads_the_rate_limit_it_carries
    [
      Dossier::SearchResult.new(reply(HEADERS, { "status" => "success", "search_id" => "srch_1" })),
      Dossier::BatchResult.new(reply(HEADERS, { "status" => "success", "batch_id" => "bat_1", "items" => [] })),
      Dossier::Response.new(reply(HEADERS, { "status" => "success", "credits_remaining" => 3 })),
    ].each do |answer|
      assert_equal({ limit: 100, remaining: 99, reset: 1 }, answer.rate_limit, answer.class.name)
    end
  end

  def test_a_missing_or_unreadable_header_is_nil
    # Read as the credit headers are: a whole number of ASCII digits, else nil.
    result = Dossier::SearchResult.new(reply({ "ratelimit-limit" => "1.5", "ratelimit-remaining" => "-1" },
                                             { "status" => "success" }))
    assert_equal({ limit: nil, remaining: nil, reset: nil }, result.rate_limit)
  end
end
