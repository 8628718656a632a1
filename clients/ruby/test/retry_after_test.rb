# frozen_string_literal: true

require_relative "test_helper"

# Retry-After as every Dossier client reads it (RFC 9110 section 10.2.3), odd values included.
class RetryAfterTest < Minitest::Test
  include DossierTestHelpers

  NOW = Time.utc(2026, 11, 24, 14, 0, 0)

  # The same table is in the Python, JavaScript and PHP clients' tests: [header value, seconds or nil].
  CASES = [
    ["120", 120],
    ["0", 0],
    [" 7 ", 7], # surrounding whitespace is not part of the value
    ["1.5", 1.5], # a decimal fraction is tolerated
    ["86400", 86_400],
    ["86401", 86_400], # capped at one day
    ["99999999999999999999999999", 86_400],
    ["9" * 400, 86_400],
    ["Tue, 24 Nov 2026 14:00:30 GMT", 30], # IMF-fixdate
    ["Tuesday, 24-Nov-26 14:00:30 GMT", 30], # obsolete RFC 850 form
    ["Tue Nov 24 14:00:30 2026", 30], # obsolete asctime form
    ["Sun Nov  1 14:00:00 2026", 0], # asctime, one-digit day; a past date is no wait
    ["Sun, 06 Nov 1994 08:49:37 GMT", 0],
    ["Sunday, 06-Nov-94 08:49:37 GMT", 0], # two-digit year: 1994, not 2094 (over 50 years ahead)
    ["Fri, 31 Dec 9999 23:59:59 GMT", 86_400],
    # Garbage: nil (a retry waits its backoff, a poll its poll interval).
    ["", nil],
    ["   ", nil],
    ["-5", nil],
    ["+5", nil],
    ["1e3", nil],
    ["0x10", nil],
    ["1_000", nil],
    [".5", nil],
    ["5.", nil],
    ["1 2", nil],
    ["inf", nil],
    ["Infinity", nil],
    ["NaN", nil],
    ["soon", nil],
    ["tomorrow", nil],
    ["2026-11-24T14:00:30Z", nil], # RFC 3339 is not an HTTP-date
    ["Tue, 24 Nov 2026 14:00:30 +0000", nil], # an HTTP-date is always GMT
    ["tue, 24 nov 2026 14:00:30 gmt", nil], # HTTP-date is case-sensitive
    ["24 Nov 2026 14:00:30 GMT", nil],
    ["Mon, 30 Feb 2026 14:00:00 GMT", nil], # no such day
    ["Tue, 24 Nov 2026 24:00:00 GMT", nil],
  ].freeze

  def test_the_shared_table
    CASES.each do |value, expected|
      got = Dossier::Transport.parse_retry_after(value, NOW)
      if expected.nil?
        assert_nil got, "Retry-After #{value[0, 40].inspect}"
      else
        assert_equal expected, got, "Retry-After #{value[0, 40].inspect}"
      end
    end
    assert_nil Dossier::Transport.parse_retry_after(nil)
  end

  def test_garbage_is_ignored_and_the_backoff_waited
    @server.reply(429, error_body("rate_limited", "slow"), { "Retry-After" => "-5" })
    @server.reply(503, error_body("unavailable", "down"), { "Retry-After" => "in a while" })
    @server.reply(200, { status: "success", account: AN_ACCOUNT, credits_remaining: 1 })
    c = client(backoff_base: 2, backoff_max: 30)
    c.send(:transport).instance_variable_set(:@random, Struct.new(:rand).new(1.0)) # the backoff at its ceiling
    c.account
    assert_equal [2.0, 4.0], c.pauses
  end

  def test_a_huge_value_is_read_as_a_day_and_raised_at_once
    @server.reply(429, error_body("rate_limited", "slow"), { "Retry-After" => "9" * 400 })
    c = client
    err = assert_raises(Dossier::RateLimitError) { c.account }
    assert_equal 86_400, err.retry_after
    assert_empty c.pauses
    assert_equal 1, @server.requests.size
  end
end
