# frozen_string_literal: true

require_relative "test_helper"

class ClientTest < Minitest::Test
  include DossierTestHelpers

  def test_version_and_user_agent
    assert_match(/\A\d+\.\d+\.\d+\z/, Dossier::VERSION)
    @server.reply(200, { status: "success", account: { id: "acct_1" }, credits_remaining: 5 })
    client.account
    headers = @server.requests.first.headers
    assert_equal "dossier-ruby/#{Dossier::VERSION}", headers["user-agent"]
    assert_equal "Bearer dsk_test", headers["authorization"]
    assert_equal "application/json", headers["accept"]
    assert_nil headers["content-type"], "a GET sends no body and no Content-Type"
  end

  def test_api_key_from_environment
    ENV["DOSSIER_API_KEY"] = "dsk_from_env"
    @server.reply(200, { status: "success", account: AN_ACCOUNT, credits_remaining: 1 })
    Dossier::Client.new(base_url: @server.url).account
    assert_equal "Bearer dsk_from_env", @server.requests.first.headers["authorization"]
  ensure
    ENV.delete("DOSSIER_API_KEY")
  end

  def test_explicit_api_key_wins_over_environment
    ENV["DOSSIER_API_KEY"] = "dsk_from_env"
    @server.reply(200, { status: "success", account: AN_ACCOUNT, credits_remaining: 1 })
    Dossier::Client.new(api_key: "dsk_explicit", base_url: @server.url).account
    assert_equal "Bearer dsk_explicit", @server.requests.first.headers["authorization"]
  ensure
    ENV.delete("DOSSIER_API_KEY")
  end

  def test_the_key_is_trimmed_and_one_with_a_control_character_is_refused_as_in_the_other_clients
    ENV["DOSSIER_API_KEY"] = " dsk_from_env\n"
    2.times { @server.reply(200, { status: "success", account: AN_ACCOUNT, credits_remaining: 1 }) }
    Dossier::Client.new(api_key: " dsk_file\r\n", base_url: @server.url).account
    Dossier::Client.new(api_key: "  ", base_url: @server.url).account # a blank key is no key
    assert_equal ["Bearer dsk_file", "Bearer dsk_from_env"], @server.requests.map { |r| r.headers["authorization"] }
    ["dsk_SECRET\nX-Injected: 1", "dsk_SECRET\u0000x", "dsk_\tSECRET"].each do |key|
      err = assert_raises(ArgumentError, key.inspect) { Dossier::Client.new(api_key: key, base_url: @server.url) }
      refute_match(/SECRET/, err.message)
    end
    assert_equal 2, @server.requests.size
  ensure
    ENV.delete("DOSSIER_API_KEY")
  end

  def test_an_empty_id_is_refused_before_anything_is_sent_as_in_the_other_clients
    c = client
    [-> { c.get_search("") }, -> { c.get_batch("") }, -> { c.revoke_key("") }, -> { c.delete_webhook("") },
     -> { c.webhook_deliveries("") }, -> { c.get_search(nil) }].each do |call|
      assert_raises(ArgumentError) { call.call }
    end
    assert_empty @server.requests
  end

  def test_missing_api_key_raises
    err = assert_raises(ArgumentError) { Dossier::Client.new }
    assert_match(/DOSSIER_API_KEY/, err.message)
  end

  def test_defaults
    c = with_env("DOSSIER_BASE_URL" => nil) { Dossier::Client.new(api_key: "dsk_x") }
    assert_equal "http://127.0.0.1:3000", c.base_url
    assert_equal 2, c.max_retries
    assert_equal 30, c.timeout
    assert_equal 60, c.poll_timeout
    refute_includes c.inspect, "dsk_x\"", "inspect must not show the whole key"
  end

  def test_bad_base_url_raises
    assert_raises(ArgumentError) { Dossier::Client.new(api_key: "dsk_x", base_url: "localhost:3000") }
  end

  def test_base_url_from_the_environment_as_in_the_other_clients
    # The argument, else DOSSIER_BASE_URL, else http://127.0.0.1:3000; a blank one counts as none.
    with_env("DOSSIER_BASE_URL" => " https://dossier.example.com/api/ \n") do
      assert_equal "https://dossier.example.com/api", Dossier::Client.new(api_key: "dsk_x").base_url
      assert_equal "http://10.0.0.1:8080", Dossier::Client.new(api_key: "dsk_x", base_url: "http://10.0.0.1:8080").base_url
      assert_equal "https://dossier.example.com/api", Dossier::Client.new(api_key: "dsk_x", base_url: " ").base_url
    end
    with_env("DOSSIER_BASE_URL" => "  ") do
      assert_equal "http://127.0.0.1:3000", Dossier::Client.new(api_key: "dsk_x").base_url
    end
    err = with_env("DOSSIER_BASE_URL" => "localhost:3000") do
      assert_raises(ArgumentError) { Dossier::Client.new(api_key: "dsk_x") }
    end
    assert_match(/DOSSIER_BASE_URL/, err.message)
  end

  def test_the_environment_names_the_server_and_the_key
    @server.reply(200, { status: "success", account: { id: "acct_1" }, credits_remaining: 1 })
    @server.reply(200, { status: "success", api_key: "dsk_new", key_id: "key_1" })
    with_env("DOSSIER_BASE_URL" => @server.url, "DOSSIER_API_KEY" => "dsk_env123") do
      Dossier::Client.new.account
      Dossier::Client.login(email: "a@example.com", password: "password123")
    end
    assert_equal ["/v1/account", "/v1/auth/login"], @server.requests.map(&:path)
    assert_equal "Bearer dsk_env123", @server.requests.first.headers["authorization"]
  end

  def test_base_url_with_path_prefix_and_trailing_slash
    @server.reply(200, { status: "success", keys: [] })
    Dossier::Client.new(api_key: "dsk_x", base_url: "#{@server.url}/api/").list_keys
    assert_equal "/api/v1/auth/keys", @server.requests.first.path
  end

  def test_verify_phone_result_object
    @server.reply(200, SUCCESS, { "X-Credits-Spent" => "1", "X-Credits-Remaining" => "9", "X-Request-Id" => "req_9",
                                  "RateLimit-Limit" => "100", "RateLimit-Remaining" => "99", "RateLimit-Reset" => "1" })
    res = client.verify_phone(phone: "+14155552671")
    req = @server.requests.first
    assert_equal "POST", req.method
    assert_equal "/v1/verify/phone", req.path
    assert_equal "application/json", req.headers["content-type"]
    assert_equal({ "phone" => "+14155552671" }, req.json)
    assert_kind_of Dossier::SearchResult, res
    assert_equal "success", res.status
    assert res.success?
    refute res.pending?
    assert_equal "srch_1", res.search_id
    assert_equal 9, res.credits_remaining
    assert_equal "+14155552671", res.results.first["e164"]
    assert_equal "libphonenumber", res.sources.first["provider"]
    assert_equal 1, res.credits_spent
    assert_equal "req_9", res.request_id
    assert_equal({ limit: 100, remaining: 99, reset: 1 }, res.rate_limit)
    refute res.replayed?
    assert_equal 200, res.http_status
    assert_equal "srch_1", res["search_id"]
    assert_equal "srch_1", res.body["search_id"]
    assert_equal JSON.parse(res.raw_body), res.to_h
  end

  def test_bodies_omit_absent_fields
    6.times { @server.reply(200, SUCCESS) }
    c = client
    c.search_person(name: "John Smith")
    c.search_company(domain: "example.com")
    c.verify_phone(phone: "4155552671", country: "US", permissible_purpose: "fraud_prevention")
    c.verify_email(email: "a@example.com")
    c.search(query: "Acme", type: :company)
    c.search_person(email: "j@example.com", age_range: "30-40", location: "Austin, TX")
    bodies = @server.requests.map { |r| [r.path, r.json] }
    assert_equal [
      ["/v1/search/person", { "name" => "John Smith" }],
      ["/v1/search/company", { "domain" => "example.com" }],
      ["/v1/verify/phone", { "phone" => "4155552671", "country" => "US", "permissible_purpose" => "fraud_prevention" }],
      ["/v1/verify/email", { "email" => "a@example.com" }],
      ["/v1/search", { "query" => "Acme", "type" => "company" }],
      ["/v1/search/person", { "email" => "j@example.com", "location" => "Austin, TX", "age_range" => "30-40" }],
    ], bodies
  end

  def test_search_routes_generic_and_person_forms
    3.times { @server.reply(200, SUCCESS) }
    c = client
    c.search(query: "+14155552671", type: "phone", country: "US")
    c.search(name: "John Smith", location: "Austin, TX")
    c.search(username: "jsmith")
    assert_equal [
      ["/v1/search", { "query" => "+14155552671", "type" => "phone", "country" => "US" }],
      ["/v1/search/person", { "name" => "John Smith", "location" => "Austin, TX" }],
      ["/v1/search/person", { "username" => "jsmith" }],
    ], @server.requests.map { |r| [r.path, r.json] }
  end

  def test_search_rejects_mixed_forms
    assert_raises(ArgumentError) { client.search(query: "x", type: "person", name: "y") }
    assert_empty @server.requests
  end

  def test_prefer_header_asks_for_an_answer_within_the_poll_budget_and_2_s_under_the_timeout
    # As the Python, JavaScript and PHP clients reckon it: the gateway's 10 s, less when the poll budget or
    # the HTTP timeout calls for less, so the call ends within poll_timeout and no attempt times out.
    5.times { @server.reply(200, SUCCESS) }
    client.verify_phone(phone: "+14155552671")
    client(timeout: 5).verify_phone(phone: "+14155552671")
    client(poll_timeout: 3).verify_phone(phone: "+14155552671")
    client.verify_phone(phone: "+14155552671", poll_timeout: 4.5)
    client(timeout: nil, poll_timeout: nil).verify_phone(phone: "+14155552671")
    assert_equal [nil, "wait=3", "wait=3", "wait=4", nil], @server.requests.map { |r| r.headers["prefer"] }
  end

  def test_account_and_keys
    @server.reply(200, { status: "success", account: { id: "acct_1", email: "a@example.com" }, credits_remaining: 7 })
    @server.reply(201, { status: "success", api_key: "dsk_new", key_id: "key_2" })
    @server.reply(201, { status: "success", api_key: "dsk_new2", key_id: "key_3" })
    @server.reply(200, { status: "success", keys: [{ id: "key_1", prefix: "dsk_abcd", name: "ci" }] })
    @server.reply(200, { status: "success", key: { id: "key_2", revoked_at: "2026-01-01T00:00:00Z" } })
    c = client
    acct = c.account
    assert_equal "acct_1", acct.account["id"]
    assert_equal 7, acct.credits_remaining
    created = c.create_key(name: "ci")
    assert_equal "dsk_new", created.api_key
    assert_equal "key_2", created.key_id
    c.create_key
    assert_equal "key_1", c.list_keys.keys.first["id"]
    assert_equal "2026-01-01T00:00:00Z", c.revoke_key("key_2").key["revoked_at"]

    reqs = @server.requests
    assert_equal [%w[GET /v1/account], %w[POST /v1/auth/keys], %w[POST /v1/auth/keys], %w[GET /v1/auth/keys],
                  %w[DELETE /v1/auth/keys/key_2]], reqs.map { |r| [r.method, r.path] }
    assert_equal({ "name" => "ci" }, reqs[1].json)
    assert_equal({}, reqs[2].json)
    assert_equal "", reqs[4].body
    assert_nil reqs[4].headers["content-type"]
    assert_nil reqs[1].headers["idempotency-key"], "only lookups carry an Idempotency-Key"
  end

  def test_ids_are_escaped_in_paths
    @server.reply(404, error_body("not_found", "no such search"))
    assert_raises(Dossier::NotFoundError) { client(max_retries: 0).get_search("a/b c") }
    assert_equal "/v1/searches/a%2Fb%20c", @server.requests.first.path
  end

  def test_register_and_login_are_class_methods_without_a_key
    @server.reply(201, { status: "success", account: { id: "acct_1", email: "a@example.com", created_at: "x" },
                         api_key: "dsk_first", credits_remaining: 3 })
    @server.reply(200, { status: "success", api_key: "dsk_second", key_id: "key_2" })
    reg = Dossier::Client.register(email: "a@example.com", password: "password123", base_url: @server.url)
    assert_equal "dsk_first", reg.api_key
    assert_equal 3, reg.credits_remaining
    assert_equal "acct_1", reg.account["id"]
    refute_includes reg.inspect, "dsk_first"
    log = Dossier::Client.login(email: "a@example.com", password: "password123", base_url: @server.url)
    assert_equal "dsk_second", log.api_key
    assert_equal "key_2", log.key_id
    reqs = @server.requests
    assert_equal %w[/v1/auth/register /v1/auth/login], reqs.map(&:path)
    assert(reqs.none? { |r| r.headers.key?("authorization") })
    assert_equal({ "email" => "a@example.com", "password" => "password123" }, reqs[0].json)
  end

  def test_login_with_wrong_password
    @server.reply(401, error_body("invalid_credentials", "wrong e-mail or password"))
    err = assert_raises(Dossier::AuthenticationError) do
      Dossier::Client.login(email: "a@example.com", password: "nope", base_url: @server.url)
    end
    assert_equal "invalid_credentials", err.code
  end

  def test_an_idempotency_key_the_gateway_would_refuse_is_an_argument_error_before_sending
    # 1–255 printable ASCII characters (API.md); a CR/LF must never reach the request's headers.
    c = client
    ["k\r\nX-Injected: 1", "k\n", "", "has space", "x" * 256, "clé", "k\0"].each do |key|
      assert_raises(ArgumentError, key.inspect) { c.verify_email("a@example.com", idempotency_key: key) }
      assert_raises(ArgumentError, key.inspect) do
        c.batch([{ kind: "email", input: { email: "a@example.com" } }], idempotency_key: key)
      end
    end
    assert_empty @server.requests
    @server.reply(200, SUCCESS)
    c.verify_email("a@example.com", idempotency_key: "~#{'x' * 254}")
    assert_equal "~#{'x' * 254}", @server.requests.first.headers["idempotency-key"]
  end

  def test_main_value_positional_or_keyword
    6.times { @server.reply(200, SUCCESS) }
    c = client
    c.verify_phone("+14155552671", country: "US")
    c.verify_phone(phone: "+14155552671")
    c.verify_email("grace@example.com")
    c.search_person("John Smith", location: "Austin, TX")
    c.search_company("Acme Inc", country: "US")
    c.search("+14155552671", type: "phone")
    bodies = @server.requests.map { |r| [r.path, r.json] }
    assert_equal [["/v1/verify/phone", { "phone" => "+14155552671", "country" => "US" }],
                  ["/v1/verify/phone", { "phone" => "+14155552671" }],
                  ["/v1/verify/email", { "email" => "grace@example.com" }],
                  ["/v1/search/person", { "name" => "John Smith", "location" => "Austin, TX" }],
                  ["/v1/search/company", { "company_name" => "Acme Inc", "country" => "US" }],
                  ["/v1/search", { "query" => "+14155552671", "type" => "phone" }]], bodies
  end

  def test_main_value_given_twice_or_missing_is_an_argument_error
    c = client
    assert_raises(ArgumentError) { c.verify_phone("+14155552671", phone: "+14155552671") }
    assert_raises(ArgumentError) { c.verify_email("a@b.c", email: "a@b.c") }
    assert_raises(ArgumentError) { c.search_person("John", name: "John") }
    assert_raises(ArgumentError) { c.search_company("Acme", company_name: "Acme") }
    assert_raises(ArgumentError) { c.search("x", query: "x") }
    assert_match(/phone is required/, assert_raises(ArgumentError) { c.verify_phone }.message)
    assert_raises(ArgumentError) { c.verify_email(country: "US") }
    assert_empty @server.requests
  end
end
