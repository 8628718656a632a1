# frozen_string_literal: true

require_relative "test_helper"

class BatchTest < Minitest::Test
  include DossierTestHelpers

  ITEM_OK = { status: "success", search_id: "srch_a", results: [{ e164: "+14155552671" }], credits_remaining: 8,
              sources: [{ provider: "libphonenumber", outcome: "found", took_ms: 1 }] }.freeze
  ITEM_INVALID = { status: "error",
                   error: { code: "validation_error", message: "invalid input",
                            details: [{ field: "phone", issue: "must be a phone number" }] } }.freeze
  ITEM_BROKE = { status: "error", error: { code: "insufficient_credits", message: "not enough credits" } }.freeze
  ITEM_FAILED = { status: "error", error: { code: "unavailable", message: "lookup failed" },
                  search_id: "srch_f", credits_remaining: 8 }.freeze
  ITEM_PENDING = { status: "pending", search_id: "srch_b", credits_remaining: 8 }.freeze
  REQUESTS = [{ kind: "phone", input: { phone: "+14155552671" } }, { kind: :phone, input: { phone: "abc" } }].freeze

  def test_batch_posts_requests_and_models_each_item
    @server.reply(200, { status: "success", batch_id: "bat_1", credits_remaining: 8,
                         items: [ITEM_OK, ITEM_INVALID, ITEM_BROKE, ITEM_FAILED] })
    res = client.batch(REQUESTS + [{ "kind" => "email", "input" => { "email" => "a@b.c", "country" => nil } },
                                   { kind: "person", input: { name: "John Smith" } }])
    req = @server.requests.first
    assert_equal %w[POST /v1/batch], [req.method, req.path]
    assert_equal({ "requests" => [{ "kind" => "phone", "input" => { "phone" => "+14155552671" } },
                                  { "kind" => "phone", "input" => { "phone" => "abc" } },
                                  { "kind" => "email", "input" => { "email" => "a@b.c" } },
                                  { "kind" => "person", "input" => { "name" => "John Smith" } }] }, req.json)
    assert_match UUID_V4, req.headers["idempotency-key"], "a key is generated so a retry never charges twice"
    assert_equal req.headers["idempotency-key"], res.idempotency_key

    assert res.success?
    assert_equal "bat_1", res.batch_id
    assert_equal 8, res.credits_remaining
    ok, invalid, broke, failed = res.items
    assert ok.success?
    assert_equal "srch_a", ok.search_id
    assert_equal "+14155552671", ok.results.first["e164"]
    assert_nil ok.error

    assert invalid.error?
    refute invalid.success?
    assert_instance_of Dossier::ValidationError, invalid.error
    assert_equal "validation_error", invalid.error.code
    assert_equal "phone", invalid.error.details.first["field"]
    assert_nil invalid.search_id
    assert_equal [], invalid.results

    assert_instance_of Dossier::InsufficientCreditsError, broke.error
    assert_equal "not enough credits", broke.error.message
    assert_instance_of Dossier::UnavailableError, failed.error
    assert_equal "srch_f", failed.search_id
    assert_equal "srch_f", failed.error.search_id
  end

  def test_items_share_the_other_clients_model_ok_pending_failed_and_error
    @server.reply(200, { status: "success", batch_id: "bat_1", credits_remaining: 8,
                         items: [ITEM_OK, ITEM_PENDING, ITEM_INVALID, ITEM_FAILED] })
    res = client.batch(REQUESTS)
    assert_equal [[true, false, false], [false, true, false], [false, false, true], [false, false, true]],
                 res.items.map { |i| [i.ok?, i.pending?, i.failed?] }
    assert_equal [nil, nil, Dossier::ValidationError, Dossier::UnavailableError], res.items.map { |i| i.error&.class }
    assert_equal res.items.values_at(2, 3), res.errors
    assert_equal [8, 8, nil, 8], res.items.map(&:credits_remaining)
  end

  def test_idempotency_key_and_respond_async
    @server.reply(202, { status: "pending", batch_id: "bat_2", credits_remaining: 8, items: [ITEM_OK, ITEM_PENDING] },
                  { "Location" => "/v1/batches/bat_2" })
    res = client.batch(REQUESTS, idempotency_key: "batch-key-1", wait: false)
    req = @server.requests.first
    assert_equal "batch-key-1", req.headers["idempotency-key"]
    assert_equal "batch-key-1", res.idempotency_key
    assert_equal "respond-async", req.headers["prefer"]
    assert res.pending?
    assert_equal "/v1/batches/bat_2", res.location
    assert res.items.last.pending?
    assert_equal "srch_b", res.items.last.search_id
    assert_equal 1, @server.requests.size, "wait: false does not poll"
  end

  def test_pending_batch_is_polled_until_settled
    pending = { status: "pending", batch_id: "bat_3", credits_remaining: 8, items: [ITEM_PENDING] }
    @server.reply(202, pending, { "Retry-After" => "1" }).reply(202, pending).reply(
      200, { status: "success", batch_id: "bat_3", credits_remaining: 8, items: [ITEM_OK] }
    )
    c = client(poll_interval: 0.05)
    res = c.batch(REQUESTS.first(1))
    assert res.success?
    assert res.items.first.success?
    assert_equal [%w[POST /v1/batch], %w[GET /v1/batches/bat_3], %w[GET /v1/batches/bat_3]],
                 @server.requests.map { |r| [r.method, r.path] }
    assert_equal [1, 0.05], c.pauses
    assert_equal @server.requests.first.headers["idempotency-key"], res.idempotency_key, "kept through polling"
  end

  def test_poll_timeout_names_the_batch
    pending = { status: "pending", batch_id: "bat_4", credits_remaining: 8, items: [ITEM_PENDING] }
    @server.reply(202, pending)
    err = assert_raises(Dossier::PollTimeoutError) { client.batch(REQUESTS.first(1), poll_timeout: 0) }
    assert_equal "bat_4", err.batch_id
    assert_nil err.search_id
    assert_instance_of Dossier::BatchResult, err.result
    assert_match(/bat_4/, err.message)
  end

  def test_get_batch
    @server.reply(200, { status: "success", batch_id: "bat_5", credits_remaining: 8, items: [ITEM_OK] })
    res = client.get_batch("bat_5")
    assert_equal %w[GET /v1/batches/bat_5], [@server.requests.first.method, @server.requests.first.path]
    assert_equal "srch_a", res.items.first.search_id

    @server.reply(404, error_body("not_found", "no such batch"))
    err = assert_raises(Dossier::NotFoundError) { client.get_batch("bat_other") }
    assert_equal "not_found", err.code
    assert_raises(ArgumentError) { client.get_batch("") }
  end

  def test_too_many_requests_is_the_servers_400
    @server.reply(400, error_body("validation_error", "must contain at most 100 requests",
                                  details: [{ field: "requests", issue: "must contain at most 100 requests" }]))
    requests = Array.new(101) { { kind: "phone", input: { phone: "+14155552671" } } }
    err = assert_raises(Dossier::ValidationError) { client.batch(requests) }
    assert_equal 400, err.http_status
    assert_equal "requests", err.details.first["field"]
    assert_equal 101, @server.requests.first.json["requests"].size
  end

  def test_an_input_that_is_not_utf8_is_an_argument_error_before_anything_is_sent
    # As in the PHP client: the request cannot be written as JSON, which is the caller's to fix, not a JSON::GeneratorError.
    name = "Jos\xE9".b
    err = assert_raises(ArgumentError) { client.batch([{ kind: "person", input: { name: name } }]) }
    assert_match(/UTF-8/, err.message)
    assert_raises(ArgumentError) { client.search_person(name: name) }
    assert_empty @server.requests
  end

  def test_a_non_finite_number_is_an_argument_error_naming_it
    # As Python's ValueError, JavaScript's TypeError and PHP's InvalidArgumentException: the message names what is
    # wrong (a number), not UTF-8.
    [Float::NAN, Float::INFINITY, -Float::INFINITY].each do |number|
      err = assert_raises(ArgumentError) { client.batch([{ kind: "phone", input: { phone: "+14155552671", country: number } }]) }
      assert_match(/every number in it must be finite \(no NaN or Infinity\)/, err.message)
      refute_match(/UTF-8/, err.message)
      assert_raises(ArgumentError) { client.search_person(name: "Ada", age_range: [number]) }
    end
    assert_empty @server.requests
  end

  def test_requests_must_be_an_array_of_hashes
    assert_raises(ArgumentError) { client.batch({ kind: "phone" }) }
    assert_raises(ArgumentError) { client.batch(["phone"]) }
    assert_empty @server.requests
  end
end
