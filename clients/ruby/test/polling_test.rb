# frozen_string_literal: true

require_relative "test_helper"

class PollingTest < Minitest::Test
  include DossierTestHelpers

  PENDING = { status: "pending", search_id: "srch_p", credits_remaining: 4 }.freeze
  DONE = { status: "success", search_id: "srch_p", results: [{ e164: "+14155552671" }], credits_remaining: 4,
           sources: [{ provider: "libphonenumber", outcome: "found", took_ms: 3 }] }.freeze
  PENDING_HEADERS = { "Location" => "/v1/searches/srch_p", "Retry-After" => "1" }.freeze

  def test_202_is_polled_until_done
    @server.reply(202, PENDING, PENDING_HEADERS).reply(202, PENDING, PENDING_HEADERS).reply(200, DONE)
    c = client
    res = c.verify_phone(phone: "+14155552671")
    assert res.success?
    assert_equal "+14155552671", res.results.first["e164"]
    assert_equal 4, res.credits_remaining
    reqs = @server.requests
    assert_equal [%w[POST /v1/verify/phone], %w[GET /v1/searches/srch_p], %w[GET /v1/searches/srch_p]],
                 reqs.map { |r| [r.method, r.path] }
    assert_nil reqs[1].headers["idempotency-key"]
    assert_equal "Bearer dsk_test", reqs[1].headers["authorization"]
    assert_equal [1, 1], c.pauses, "waits the Retry-After between polls"
  end

  def test_result_keeps_the_idempotency_key_it_was_sent_with_through_polling
    @server.reply(202, PENDING, PENDING_HEADERS).reply(200, DONE)
    res = client.verify_phone(phone: "+14155552671", idempotency_key: "order-42")
    assert res.success?
    assert_equal "order-42", res.idempotency_key, "the key of the POST, kept on the polled result"

    @server.reply(200, DONE)
    generated = client.verify_phone(phone: "+14155552671")
    assert_equal @server.requests.last.headers["idempotency-key"], generated.idempotency_key
    assert_match UUID_V4, generated.idempotency_key

    @server.reply(202, PENDING, PENDING_HEADERS)
    pending = client.verify_phone(phone: "+14155552671", idempotency_key: "order-43", wait: false)
    assert_equal "order-43", pending.idempotency_key

    @server.reply(200, DONE)
    assert_nil client.get_search("srch_p").idempotency_key, "a GET sends no Idempotency-Key"
  end

  def test_poll_interval_used_without_retry_after
    @server.reply(202, PENDING).reply(200, DONE)
    c = client(poll_interval: 0.05)
    c.search(name: "John Smith")
    assert_equal [0.05], c.pauses
  end

  def test_an_unreadable_retry_after_waits_the_poll_interval
    @server.reply(202, PENDING, { "Retry-After" => "-1" }).reply(202, PENDING, { "Retry-After" => "soon" })
    @server.reply(200, DONE)
    c = client(poll_interval: 0.5)
    c.search(name: "John Smith")
    assert_equal [0.5, 0.5], c.pauses
  end

  def test_a_long_retry_after_waits_60_seconds_at_most_even_without_a_deadline
    # As the other three clients: a poll never sleeps more than 60 s (the longest Retry-After waited
    # before a retry); with poll_timeout: nil nothing else bounds it.
    @server.reply(202, PENDING, { "Retry-After" => "3600" }).reply(200, DONE)
    c = client(poll_timeout: nil)
    c.search(name: "John Smith")
    assert_equal [60], c.pauses
  end

  def test_wait_false_returns_the_pending_search_at_once
    @server.reply(202, PENDING, PENDING_HEADERS)
    res = client.search(query: "+14155552671", type: "phone", wait: false)
    assert res.pending?
    assert_equal "pending", res.status
    assert_equal "srch_p", res.search_id
    assert_equal [], res.results
    assert_equal 4, res.credits_remaining
    assert_equal "/v1/searches/srch_p", res.location
    assert_equal 1, res.retry_after
    assert_equal 1, @server.requests.size
    assert_equal "respond-async", @server.requests.first.headers["prefer"]
  end

  def test_get_search_once_and_with_wait
    @server.reply(202, PENDING, PENDING_HEADERS)
    @server.reply(202, PENDING, PENDING_HEADERS).reply(202, PENDING, PENDING_HEADERS).reply(200, DONE)
    c = client
    assert c.get_search("srch_p").pending?
    assert c.get_search("srch_p", wait: true).success?
    assert_equal 4, @server.requests.size
    assert(@server.requests.all? { |r| r.method == "GET" && r.path == "/v1/searches/srch_p" })
  end

  def test_polling_gets_are_retried_on_503_and_429
    @server.reply(202, PENDING, { "Retry-After" => "0" })
    @server.reply(503, error_body("unavailable", "redis down"), { "Retry-After" => "0" })
    @server.reply(429, error_body("rate_limited", "slow"), { "Retry-After" => "0" })
    @server.reply(200, DONE)
    res = client.search_person(name: "John Smith")
    assert res.success?
    assert_equal 4, @server.requests.size
  end

  def test_failed_search_while_polling_raises_unavailable
    @server.reply(202, PENDING, { "Retry-After" => "0" })
    @server.reply(503, { status: "error", error: { code: "unavailable", message: "the lookup failed; nothing was charged" },
                         search_id: "srch_p", credits_remaining: 5, request_id: "req_f" }, { "Retry-After" => "1" })
    err = assert_raises(Dossier::UnavailableError) { client.verify_phone(phone: "+14155552671") }
    assert_equal "srch_p", err.search_id
    assert_equal 2, @server.requests.size
  end

  def test_poll_deadline_raises_poll_timeout_error
    20.times { @server.reply(202, PENDING, { "Retry-After" => "0.0625" }) }
    c = fake_clock(Dossier::Client.new(api_key: "dsk_x", base_url: @server.url, poll_timeout: 0.3))
    err = assert_raises(Dossier::PollTimeoutError) { c.verify_phone(phone: "+14155552671") }
    assert_equal "srch_p", err.search_id
    assert err.search.pending?
    # Polled every Retry-After until the budget was spent, the last wait cut to what was left.
    assert_equal [0.0625] * 4, c.pauses.first(4)
    assert_equal 5, c.pauses.size
    assert_in_delta 0.05, c.pauses.last, 1e-9
    assert_equal 6, @server.requests.size, "the lookup and a poll after each wait"
  end

  def test_poll_timeout_counts_from_the_start_of_the_call_as_in_the_other_clients
    # The POST itself took the whole budget: no poll follows, the call ends at poll_timeout, not after it.
    c = fake_clock(client)
    slow = -> { c.clock[0] += 0.4 } # the answer takes 0.4 s of the (fake) clock
    @server.reply(202, PENDING, { "Retry-After" => "0.05" }, before: slow)
    err = assert_raises(Dossier::PollTimeoutError) { c.verify_phone(phone: "+14155552671", poll_timeout: 0.3) }
    assert_equal "srch_p", err.search_id
    assert_equal 1, @server.requests.size

    @server.reply(202, PENDING, { "Retry-After" => "0.05" }, before: slow)
    assert_raises(Dossier::PollTimeoutError) { c.get_search("srch_p", wait: true, poll_timeout: 0.3) }
    assert_equal 2, @server.requests.size
    assert_empty c.pauses, "no wait past the budget"
  end

  def test_poll_timeout_per_call
    5.times { @server.reply(202, PENDING, { "Retry-After" => "0.05" }) }
    assert_raises(Dossier::PollTimeoutError) { client.verify_phone(phone: "+14155552671", poll_timeout: 0) }
    assert_equal 1, @server.requests.size
  end
end
