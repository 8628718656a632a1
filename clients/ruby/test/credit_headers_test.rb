# frozen_string_literal: true

require_relative "test_helper"

# X-Credits-Spent and X-Credits-Remaining, read the same way by the four clients.
class CreditHeadersTest < Minitest::Test
  # The same table is in the Python, JavaScript and PHP clients' tests: [header value, count or nil].
  COUNTS = [["7", 7], ["0", 0], [" 7 ", 7], ["-1", nil], ["+7", nil], ["1.5", nil], ["1e2", nil], ["0x10", nil],
            ["1_000", nil], ["٣", nil], ["", nil], [" ", nil], ["seven", nil]].freeze

  def test_credits_spent_and_remaining_are_whole_numbers_or_nil
    COUNTS.each do |value, count|
      reply = Dossier::Transport::Reply.new(200, { "x-credits-spent" => value }, "{}",
                                            { "status" => "success", "search_id" => "srch_1" })
      err = Dossier::InsufficientCreditsError.new("no credits", http_status: 402,
                                                                headers: { "x-credits-remaining" => value })
      if count.nil?
        assert_nil Dossier::SearchResult.new(reply).credits_spent, "X-Credits-Spent #{value.inspect}"
        assert_nil err.credits_remaining, "X-Credits-Remaining #{value.inspect}"
      else
        assert_equal count, Dossier::SearchResult.new(reply).credits_spent, "X-Credits-Spent #{value.inspect}"
        assert_equal count, err.credits_remaining, "X-Credits-Remaining #{value.inspect}"
      end
    end
  end
end
