# frozen_string_literal: true

require_relative "test_helper"

class ErrorsTest < Minitest::Test
  include DossierTestHelpers

  CASES = [
    [400, "validation_error", Dossier::ValidationError],
    [400, "invalid_json", Dossier::ValidationError],
    [401, "unauthorized", Dossier::AuthenticationError],
    [401, "invalid_credentials", Dossier::AuthenticationError],
    [402, "insufficient_credits", Dossier::InsufficientCreditsError],
    [404, "not_found", Dossier::NotFoundError],
    [405, "method_not_allowed", Dossier::APIError],
    [409, "email_taken", Dossier::ConflictError],
    [409, "idempotency_conflict", Dossier::ConflictError],
    [413, "payload_too_large", Dossier::APIError],
    [415, "unsupported_media_type", Dossier::APIError],
    [429, "rate_limited", Dossier::RateLimitError],
    [500, "internal_error", Dossier::APIError],
    [503, "unavailable", Dossier::UnavailableError],
  ].freeze

  def test_hierarchy
    [Dossier::AuthenticationError, Dossier::InsufficientCreditsError, Dossier::RateLimitError,
     Dossier::ValidationError, Dossier::NotFoundError, Dossier::ConflictError,
     Dossier::UnavailableError].each { |k| assert_operator k, :<, Dossier::APIError }
    assert_operator Dossier::APIError, :<, Dossier::Error
    assert_operator Dossier::ConnectionError, :<, Dossier::Error
    assert_operator Dossier::PollTimeoutError, :<, Dossier::Error
    assert_operator Dossier::Error, :<, StandardError
  end

  CASES.each do |status, code, klass|
    define_method("test_#{code}_maps_to_#{klass.name.split('::').last}") do
      @server.reply(status, error_body(code, "#{code} happened", request_id: "req_#{code}"), { "Retry-After" => "7" })
      err = assert_raises(Dossier::APIError) { client(max_retries: 0).verify_email(email: "a@example.com") }
      assert_instance_of klass, err
      assert_equal status, err.http_status
      assert_equal code, err.code
      assert_equal "#{code} happened", err.message
      assert_equal "req_#{code}", err.request_id
      assert_equal [], err.details
      assert_equal code, err.body.dig("error", "code")
      assert_equal JSON.parse(err.raw_body), err.body
      assert_equal "7", err.headers["retry-after"]
    end
  end

  def test_validation_error_details
    details = [{ field: "phone", issue: "is not a phone number" }, { field: "country", issue: "must be ISO" }]
    @server.reply(400, error_body("validation_error", "phone is not a phone number", details: details))
    err = assert_raises(Dossier::ValidationError) { client.verify_phone(phone: "abc") }
    assert_equal [{ "field" => "phone", "issue" => "is not a phone number" },
                  { "field" => "country", "issue" => "must be ISO" }], err.details
    assert_equal 1, @server.requests.size, "a 400 is never retried"
  end

  def test_insufficient_credits_carries_the_balance_as_in_the_other_clients
    @server.reply(402, error_body("insufficient_credits", "this lookup costs 1"),
                  { "X-Credits-Spent" => "0", "X-Credits-Remaining" => "3" })
    err = assert_raises(Dossier::InsufficientCreditsError) { client.verify_phone(phone: "+14155552671") }
    assert_equal 3, err.credits_remaining
  end

  def test_rate_limit_and_unavailable_expose_retry_after
    @server.reply(429, error_body("rate_limited", "slow down"), { "Retry-After" => "3" })
    @server.reply(503, error_body("unavailable", "down"), { "Retry-After" => "2" })
    c = client(max_retries: 0)
    assert_equal 3, assert_raises(Dossier::RateLimitError) { c.account }.retry_after
    assert_equal 2, assert_raises(Dossier::UnavailableError) { c.account }.retry_after
  end

  def test_request_id_falls_back_to_header
    @server.reply(404, { status: "error", error: { code: "not_found", message: "no such key" } },
                  { "X-Request-Id" => "req_hdr" })
    err = assert_raises(Dossier::NotFoundError) { client.revoke_key("key_nope") }
    assert_equal "req_hdr", err.request_id
  end

  def test_unknown_code_falls_back_to_status
    @server.reply(409, error_body("something_new", "new conflict"))
    err = assert_raises(Dossier::ConflictError) { client.account }
    assert_equal "something_new", err.code
  end

  def test_non_json_error_body
    @server.reply(502, "<html>bad gateway</html>")
    err = assert_raises(Dossier::APIError) { client(max_retries: 0).account } # a GET's 502 is retried otherwise
    assert_instance_of Dossier::APIError, err
    assert_equal 502, err.http_status
    assert_nil err.code
    assert_nil err.body
    assert_equal "<html>bad gateway</html>", err.raw_body
    assert_match(/502/, err.message)
  end

  def test_success_status_without_json_body
    @server.reply(200, "not json")
    err = assert_raises(Dossier::APIError) { client.account }
    assert_equal 200, err.http_status
    assert_equal "not json", err.raw_body
  end

  def test_a_redirect_is_not_followed_but_an_error_with_its_status_as_in_the_other_clients
    @server.reply(301, { status: "success" }, { "Location" => "/v1/auth/keys" })
    err = assert_raises(Dossier::APIError) { client.account }
    assert_instance_of Dossier::APIError, err
    assert_equal 301, err.http_status
    assert_equal ["/v1/account"], @server.requests.map(&:path)
  end

  def test_success_body_that_is_empty_or_not_an_object_is_an_error_as_in_the_other_clients
    ["", "[1,2]", "null", '"{}"'].each do |raw|
      @server.reply(200, raw)
      err = assert_raises(Dossier::APIError, raw) { client.account }
      assert_instance_of Dossier::APIError, err
      assert_equal 200, err.http_status
    end
  end

  # A paid lookup's answer without its status, search_id, credits_remaining or (once done) results is broken, not
  # "nothing found": the base APIError (code nil), never a SearchResult with no results. As in the other clients.
  BROKEN_SEARCHES = [
    [200, {}],
    [200, { status: "success", search_id: "srch_1", credits_remaining: 9 }],
    [200, { status: "success", search_id: "srch_1", results: {}, credits_remaining: 9 }],
    [200, { status: "done", search_id: "srch_1", results: [], credits_remaining: 9 }],
    [200, { status: "success", search_id: "srch_1", results: [] }],
    [200, { status: "success", search_id: "", results: [], credits_remaining: 9 }],
    [202, { status: "pending", credits_remaining: 9 }],
  ].freeze

  BROKEN_BATCHES = [
    [200, {}],
    [200, { status: "success", batch_id: "bat_1", credits_remaining: 9 }],
    [200, { status: "success", batch_id: "bat_1", items: [], credits_remaining: "9" }],
    [202, { status: "pending", items: [], credits_remaining: 9 }],
  ].freeze

  def test_a_2xx_that_is_not_a_search_envelope_is_an_error_not_an_empty_result_as_in_the_other_clients
    c = client(max_retries: 0)
    assert_not_an_envelope(BROKEN_SEARCHES, "search envelope",
                           [-> { c.verify_phone("+14155552671") }, -> { c.get_search("srch_1") }])
  end

  def test_a_2xx_that_is_not_a_batch_envelope_is_an_error_as_in_the_other_clients
    c = client(max_retries: 0)
    assert_not_an_envelope(BROKEN_BATCHES, "batch envelope",
                           [-> { c.batch([{ kind: "phone", input: { phone: "+14155552671" } }]) },
                            -> { c.get_batch("bat_1") }])
  end

  def test_any_other_2xx_that_is_not_its_documented_shape_is_an_error_as_in_the_other_clients
    # An account without its id, a key list that is no list, a new key or webhook without its secret: broken, not
    # empty. The base APIError (code nil) with the status, request id and body, as a lookup's.
    ok = { status: "success" }
    c = client(max_retries: 0)
    auth = { email: "a@example.com", password: "password123", base_url: @server.url, max_retries: 0 }
    {
      -> { c.account } => [{}, { account: AN_ACCOUNT, credits_remaining: 1 }, ok.merge(account: {}, credits_remaining: 1),
                           ok.merge(account: AN_ACCOUNT.merge(id: ""), credits_remaining: 1), ok.merge(account: AN_ACCOUNT),
                           ok.merge(account: AN_ACCOUNT, credits_remaining: "1")],
      -> { Dossier::Client.register(**auth) } => [ok.merge(account: AN_ACCOUNT, credits_remaining: 3),
                                                   ok.merge(api_key: "dsk_n", credits_remaining: 3)],
      -> { Dossier::Client.login(**auth) } => [ok.merge(key_id: "key_l"), ok.merge(api_key: "dsk_l")],
      -> { c.create_key(name: "ci") } => [ok.merge(api_key: "", key_id: "key_k"), {}],
      -> { c.list_keys } => [ok, ok.merge(keys: {}), ok.merge(keys: ["key_1"])],
      -> { c.revoke_key("key_1") } => [ok, ok.merge(key: {})],
      -> { c.list_searches } => [ok.merge(searches: []), ok.merge(next_cursor: nil), ok.merge(searches: [], next_cursor: 7)],
      -> { c.create_webhook("https://example.com/h") } => [ok.merge(webhook: { id: "wh_1" }), ok.merge(secret: "whsec_x")],
      -> { c.list_webhooks } => [ok, ok.merge(webhooks: nil)],
      -> { c.delete_webhook("wh_1") } => [ok],
      -> { c.webhook_deliveries("wh_1") } => [ok, ok.merge(deliveries: {})]
    }.each do |call, bodies|
      bodies.each do |body|
        @server.reply(200, body, { "X-Request-Id" => "req_broken" })
        err = assert_raises(Dossier::APIError, body.inspect) { call.call }
        assert_instance_of Dossier::APIError, err, body.inspect
        assert_equal [200, nil, "req_broken"], [err.http_status, err.code, err.request_id], body.inspect
        assert_equal JSON.parse(JSON.generate(body)), err.body
        assert_match(/\AHTTP 200 with a body that is not an? /, err.message)
      end
    end
  end

  private

  def assert_not_an_envelope(answers, what, calls)
    answers.each do |status, body|
      calls.each do |call|
        @server.reply(status, body, { "X-Request-Id" => "req_broken" })
        before = @server.requests.size
        err = assert_raises(Dossier::APIError, body.inspect) { call.call }
        assert_instance_of Dossier::APIError, err, body.inspect
        assert_equal [status, nil, "req_broken"], [err.http_status, err.code, err.request_id], body.inspect
        assert_equal JSON.parse(JSON.generate(body)), err.body
        assert_match(/not a #{what}/, err.message)
        assert_equal 1, @server.requests.size - before, "a 2xx is not retried"
      end
    end
  end
end
