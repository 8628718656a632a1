# frozen_string_literal: true

require_relative "test_helper"

# The caller's own X-Request-Id (API.md: echoed by the gateway when it is 1–128 safe characters).
class RequestIdTest < Minitest::Test
  include DossierTestHelpers

  OK = { status: "success" }.freeze
  RID = "order-42/attempt:1"

  def test_every_method_sends_the_callers_request_id
    c = client
    opts = { base_url: @server.url, request_id: RID }
    calls = [
      [OK.merge(api_key: "dsk_n", account: AN_ACCOUNT, credits_remaining: 3), -> { Dossier::Client.register(email: "a@example.com", password: "password123", **opts) }],
      [OK.merge(api_key: "dsk_l", key_id: "key_l"), -> { Dossier::Client.login(email: "a@example.com", password: "password123", **opts) }],
      [OK.merge(account: AN_ACCOUNT, credits_remaining: 1), -> { c.account(request_id: RID) }],
      [OK.merge(api_key: "dsk_k", key_id: "key_k"), -> { c.create_key(name: "ci", request_id: RID) }],
      [OK.merge(keys: []), -> { c.list_keys(request_id: RID) }],
      [OK.merge(key: { id: "key_k" }), -> { c.revoke_key("key_k", request_id: RID) }],
      [SUCCESS, -> { c.search(query: "Acme", type: "company", request_id: RID) }],
      [SUCCESS, -> { c.search(name: "J", request_id: RID) }],
      [SUCCESS, -> { c.search_person("J", request_id: RID) }],
      [SUCCESS, -> { c.search_company("Acme", request_id: RID) }],
      [SUCCESS, -> { c.verify_email("a@example.com", request_id: RID) }],
      [SUCCESS, -> { c.verify_phone("+14155552671", request_id: RID) }],
      [SUCCESS, -> { c.get_search("srch_1", request_id: RID) }],
      [OK.merge(searches: [], next_cursor: nil), -> { c.list_searches(kind: "phone", request_id: RID) }],
      [OK.merge(searches: [], next_cursor: nil), -> { c.each_search(request_id: RID).to_a }],
      [OK.merge(batch_id: "bat_1", items: [], credits_remaining: 1), -> { c.batch([{ kind: "phone", input: { phone: "+1" } }], request_id: RID) }],
      [OK.merge(batch_id: "bat_1", items: [], credits_remaining: 1), -> { c.get_batch("bat_1", request_id: RID) }],
      [OK.merge(webhook: { id: "wh_1" }, secret: "whsec_x"), -> { c.create_webhook("https://example.com/h", request_id: RID) }],
      [OK.merge(webhooks: []), -> { c.list_webhooks(request_id: RID) }],
      [OK.merge(webhook: { id: "wh_1" }), -> { c.delete_webhook("wh_1", request_id: RID) }],
      [OK.merge(deliveries: []), -> { c.webhook_deliveries("wh_1", request_id: RID) }],
    ]
    calls.each do |body, call|
      @server.reply(200, body, { "X-Request-Id" => RID }) # the gateway echoes it
      result = call.call
      assert_equal RID, result.request_id if result.respond_to?(:request_id)
    end
    requests = @server.requests
    assert_equal calls.size, requests.size
    requests.each { |r| assert_equal RID, r.headers["x-request-id"], "#{r.method} #{r.path}" }
  end

  def test_without_one_none_is_sent
    @server.reply(200, OK.merge(account: AN_ACCOUNT, credits_remaining: 1))
    client.account
    refute @server.requests.first.headers.key?("x-request-id")
  end

  def test_the_same_id_goes_with_every_retry_and_every_poll_of_the_call
    pending = { status: "pending", search_id: "srch_p", credits_remaining: 9 }
    @server.reply(503, error_body("unavailable", "try again"), { "Retry-After" => "0" })
    @server.reply(202, pending, { "Retry-After" => "0" }).reply(200, pending, { "Retry-After" => "0" })
    @server.reply(200, SUCCESS)
    client.verify_phone("+14155552671", request_id: "trace-7")
    assert_equal ["trace-7"] * 4, @server.requests.map { |r| r.headers["x-request-id"] }
  end

  def test_an_id_the_gateway_would_not_echo_is_refused_before_anything_is_sent
    c = client
    ["", "a" * 129, "has space", "line\r\nX-Injected: 1", "café", 42].each do |rid|
      assert_raises(ArgumentError, rid.inspect) { c.account(request_id: rid) }
      assert_raises(ArgumentError, rid.inspect) { c.verify_phone("+14155552671", request_id: rid) }
    end
    assert_empty @server.requests
    longest = ("AZaz09._~:@+=/-" * 9)[0, 128]
    @server.reply(200, OK.merge(account: AN_ACCOUNT, credits_remaining: 1))
    c.account(request_id: longest)
    assert_equal longest, @server.requests.first.headers["x-request-id"]
  end
end
