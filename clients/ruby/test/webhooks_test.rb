# frozen_string_literal: true

require_relative "test_helper"

class WebhooksTest < Minitest::Test
  include DossierTestHelpers

  HOOK = { id: "wh_1", url: "https://203.0.113.10/dossier", events: ["search.completed"],
           created_at: "2026-11-23T09:00:00.000Z" }.freeze

  def test_create_webhook
    @server.reply(201, { status: "success", webhook: HOOK, secret: "whsec_abc123" })
    res = client.create_webhook("https://203.0.113.10/dossier", events: [:"search.completed"])
    req = @server.requests.first
    assert_equal %w[POST /v1/webhooks], [req.method, req.path]
    assert_equal({ "url" => "https://203.0.113.10/dossier", "events" => ["search.completed"] }, req.json)
    assert_equal 201, res.http_status
    assert_equal "wh_1", res.webhook["id"]
    assert_equal "whsec_abc123", res.secret
    refute_includes res.inspect, "whsec_abc123", "inspect hides the secret"

    @server.reply(201, { status: "success", webhook: HOOK, secret: "whsec_x" })
    client.create_webhook("https://203.0.113.10/all")
    assert_equal({ "url" => "https://203.0.113.10/all" }, @server.requests.last.json, "no events: all of them")
  end

  def test_create_webhook_refused_url
    @server.reply(400, error_body("validation_error", "invalid request",
                                  details: [{ field: "url", issue: "must not resolve to a private address" }]))
    err = assert_raises(Dossier::ValidationError) { client.create_webhook("https://127.0.0.1/hook") }
    assert_equal "url", err.details.first["field"]
    assert_raises(ArgumentError) { client.create_webhook("") }
  end

  def test_list_delete_and_deliveries
    delivery = { event_id: "evt_1", type: "search.completed", attempt: 1, outcome: "delivered", status_code: 200,
                 error: nil, duration_ms: 12, attempted_at: "2026-11-23T09:01:00.000Z" }
    @server.reply(200, { status: "success", webhooks: [HOOK] })
           .reply(200, { status: "success", deliveries: [delivery] })
           .reply(200, { status: "success", webhook: HOOK })
           .reply(404, error_body("not_found", "no such webhook"))
    c = client
    assert_equal ["wh_1"], c.list_webhooks.webhooks.map { |w| w["id"] }
    assert_equal "delivered", c.webhook_deliveries("wh_1").deliveries.first["outcome"]
    assert_equal "wh_1", c.delete_webhook("wh_1").webhook["id"]
    assert_raises(Dossier::NotFoundError) { c.delete_webhook("wh/../x") }
    assert_equal [%w[GET /v1/webhooks], %w[GET /v1/webhooks/wh_1/deliveries], %w[DELETE /v1/webhooks/wh_1],
                  %w[DELETE /v1/webhooks/wh%2F..%2Fx]], @server.requests.map { |r| [r.method, r.path] }
    assert_raises(ArgumentError) { c.webhook_deliveries(nil) }
  end

  def test_create_test_key_and_list_modes
    @server.reply(201, { status: "success", api_key: "dsk_test_abc", key_id: "key_1" })
           .reply(200, { status: "success", keys: [{ id: "key_1", prefix: "dsk_test", name: nil, mode: "test" }] })
    c = client
    assert_equal "dsk_test_abc", c.create_key(mode: "test").api_key
    assert_equal({ "mode" => "test" }, @server.requests.first.json)
    assert_equal ["test"], c.list_keys.keys.map { |k| k["mode"] }
  end
end

class WebhookVerifyTest < Minitest::Test
  SECRET = "whsec_3q2-7wVbQ0nLk9sYt4XcZr1mA8uHf6dJ5pGe0iBo2Nw"
  PAYLOAD = '{"id":"evt_1","type":"search.completed","created_at":"2026-11-23T09:00:00.000Z","data":{"search_id":"srch_1"}}'
  T = 1_795_000_000

  def header(t: T, secret: SECRET, payload: PAYLOAD)
    "t=#{t},v1=#{OpenSSL::HMAC.hexdigest('SHA256', secret, "#{t}.#{payload}")}"
  end

  def test_valid_signature_returns_the_event
    event = Dossier::Webhook.verify(PAYLOAD, header, SECRET, now: T + 10)
    assert_equal "evt_1", event["id"]
    assert_equal "srch_1", event.dig("data", "search_id")
    assert_equal header, Dossier::Webhook.signature_header(SECRET, PAYLOAD, T)
    assert_equal "evt_1", Dossier::Webhook.verify(PAYLOAD, header, SECRET, now: Time.at(T - 299))["id"]
  end

  def test_any_of_several_v1_values
    forged = "v1=#{'0' * 64}"
    good = header.split(",").last
    assert Dossier::Webhook.verify(PAYLOAD, "t=#{T},#{forged}, #{good},v0=zz", SECRET, now: T)
  end

  def test_elements_without_an_equals_sign_are_ignored_as_in_the_other_clients
    ["#{header},", "#{header},garbage", "garbage,#{header}", header.sub(",", ", ,")].each do |h|
      assert_equal "evt_1", Dossier::Webhook.verify(PAYLOAD, h, SECRET, now: T)["id"], h
    end
  end

  def test_forged_signature
    assert_refused(/no v1 signature/) { Dossier::Webhook.verify(PAYLOAD, header(secret: "whsec_other"), SECRET, now: T) }
    assert_refused(/no v1 signature/) do
      Dossier::Webhook.verify(PAYLOAD.sub("srch_1", "srch_2"), header, SECRET, now: T)
    end
    # the timestamp is signed too: moving it breaks the signature
    assert_refused(/no v1 signature/) do
      Dossier::Webhook.verify(PAYLOAD, header.sub("t=#{T}", "t=#{T + 1}"), SECRET, now: T)
    end
  end

  def test_the_hex_signature_may_be_in_either_case_as_in_the_other_clients
    # Hex is case-insensitive (RFC 4648 section 8); Python, JavaScript and PHP accept both cases too.
    good = OpenSSL::HMAC.hexdigest("SHA256", SECRET, "#{T}.#{PAYLOAD}")
    mixed = good.chars.each_with_index.map { |c, i| i.odd? ? c.upcase : c }.join
    [good.upcase, mixed].each do |candidate|
      assert_equal "evt_1", Dossier::Webhook.verify(PAYLOAD, "t=#{T},v1=#{candidate}", SECRET, now: T)["id"]
    end
    forged = OpenSSL::HMAC.hexdigest("SHA256", "whsec_other", "#{T}.#{PAYLOAD}").upcase
    assert_refused(/no v1 signature/) { Dossier::Webhook.verify(PAYLOAD, "t=#{T},v1=#{forged}", SECRET, now: T) }
  end

  def test_expired_or_future_timestamp
    assert_refused(/tolerance/) { Dossier::Webhook.verify(PAYLOAD, header, SECRET, now: T + 301) }
    assert_refused(/tolerance/) { Dossier::Webhook.verify(PAYLOAD, header, SECRET, now: T - 301) }
    assert_refused(/tolerance/) { Dossier::Webhook.verify(PAYLOAD, header, SECRET, tolerance: 5, now: T + 6) }
    assert Dossier::Webhook.verify(PAYLOAD, header, SECRET, tolerance: nil, now: T + 10_000)
  end

  def test_tolerance_may_be_positional_as_in_the_other_clients
    assert_refused(/tolerance/) { Dossier::Webhook.verify(PAYLOAD, header, SECRET, 60, now: T + 61) }
    assert_equal "evt_1", Dossier::Webhook.verify(PAYLOAD, header, SECRET, 60, now: T + 60)["id"]
    assert Dossier::Webhook.verify(PAYLOAD, header, SECRET, nil, now: T + 10_000), "nil: no check"
    t = Time.now.to_i - 120 # the real clock
    assert_refused(/tolerance/) { Dossier::Webhook.verify(PAYLOAD, header(t: t), SECRET, 60) }
    assert Dossier::Webhook.verify(PAYLOAD, header(t: t), SECRET, 600)
  end

  def test_tolerance_given_twice_or_not_a_number_is_an_argument_error
    assert_raises(ArgumentError) { Dossier::Webhook.verify(PAYLOAD, header, SECRET, 60, tolerance: 60, now: T) }
    ["60", -1, Float::NAN, [60]].each do |bad|
      assert_raises(ArgumentError, bad.inspect) { Dossier::Webhook.verify(PAYLOAD, header, SECRET, bad, now: T) }
      assert_raises(ArgumentError, bad.inspect) { Dossier::Webhook.verify(PAYLOAD, header, SECRET, tolerance: bad, now: T) }
    end
  end

  def test_missing_or_malformed_header
    [nil, "", "   "].each do |h|
      assert_refused(/missing/) { Dossier::Webhook.verify(PAYLOAD, h, SECRET, now: T) }
    end
    v1 = header.split(",").last
    ["v1=abc", v1, "t=#{T}", "t=abc,#{v1}", "t=#{T},v1=xyz", "garbage", "t=-5,#{v1}"].each do |h|
      assert_refused(/malformed/) { Dossier::Webhook.verify(PAYLOAD, h, SECRET, now: T) }
    end
  end

  def test_signed_non_json_payload_and_missing_secret
    assert_refused(/not JSON/) { Dossier::Webhook.verify("nope", header(payload: "nope"), SECRET, now: T) }
    assert_refused(/secret/) { Dossier::Webhook.verify(PAYLOAD, header, "", now: T) }
  end

  def test_any_validly_signed_object_is_accepted_even_empty_and_an_empty_body_is_not
    # As in the other three clients.
    ["{}", " { } \n", '{"0":"a"}'].each do |payload|
      assert_equal JSON.parse(payload), Dossier::Webhook.verify(payload, header(payload: payload), SECRET, now: T)
    end
    ["", "[]", "null", '"{}"'].each do |payload|
      assert_refused(/not JSON|not a JSON object/) { Dossier::Webhook.verify(payload, header(payload: payload), SECRET, now: T) }
    end
  end

  def assert_refused(pattern, &block)
    err = assert_raises(Dossier::SignatureVerificationError, &block)
    assert_kind_of Dossier::Error, err
    assert_match pattern, err.message
  end
end
