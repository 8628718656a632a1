# frozen_string_literal: true

# Integration tests against a real gateway + worker. DOSSIER_BASE_URL must name it (they fail, not
# skip, without it). They expect SIGNUP_CREDITS=3: each test registers its own account.
$LOAD_PATH.unshift File.expand_path("../lib", __dir__)
require "dossier"
require "json"
require "openssl"
require "securerandom"
require "time"
require "minitest/autorun"

class IntegrationTest < Minitest::Test
  PHONE = "+14155552671"
  PASSWORD = "correct horse battery staple"
  SIGNUP_CREDITS = 3

  def setup
    @base_url = ENV["DOSSIER_BASE_URL"].to_s
    flunk "DOSSIER_BASE_URL is not set: point it at a running Dossier gateway (with SIGNUP_CREDITS=3)" if @base_url.empty?
  end

  def register
    email = "ruby-#{Time.now.to_i}-#{SecureRandom.hex(6)}@example.com"
    reg = Dossier::Client.register(email: email, password: PASSWORD, base_url: @base_url)
    [email, reg]
  end

  def client_for(api_key)
    Dossier::Client.new(api_key: api_key, base_url: @base_url, timeout: 15, poll_timeout: 15)
  end

  def test_the_gateway_echoes_the_callers_request_id
    rid = "ruby-it/#{SecureRandom.hex(8)}"
    email = "ruby-rid-#{SecureRandom.hex(6)}@example.com"
    reg = Dossier::Client.register(email: email, password: PASSWORD, base_url: @base_url, request_id: rid)
    assert_equal rid, reg.request_id
    client = client_for(reg.api_key)
    assert_equal rid, client.list_keys(request_id: rid).request_id
    err = assert_raises(Dossier::NotFoundError) { client.get_search("srch_doesnotexist", request_id: rid) }
    assert_equal rid, err.request_id
    refute_equal rid, client.account.request_id, "without one, the gateway makes one up"
  end

  def test_register_phone_lookups_spend_credits_until_402
    email, reg = register
    assert_equal "success", reg.status
    assert_match(/\Adsk_/, reg.api_key)
    assert_equal email, reg.account["email"]
    assert_equal SIGNUP_CREDITS, reg.credits_remaining

    client = client_for(reg.api_key)
    SIGNUP_CREDITS.times do |i|
      res = i.even? ? client.verify_phone(PHONE) : client.verify_phone(phone: PHONE)
      assert_equal "success", res.status
      assert_equal 1, res.results.size
      assert_equal PHONE, res.results.first["e164"]
      assert_equal true, res.results.first["valid"]
      assert_match(/\Asrch_/, res.search_id)
      assert_equal SIGNUP_CREDITS - i - 1, res.credits_remaining, "one credit per phone lookup"
      assert_equal 1, res.credits_spent
      refute_empty res.sources
      # The key's rate limit, as every answer reports it (the gateway's default burst: 100).
      assert_equal 100, res.rate_limit[:limit]
      assert_kind_of Integer, res.rate_limit[:remaining]
      assert_kind_of Integer, res.rate_limit[:reset]
    end
    account = client.account
    assert_equal 0, account.credits_remaining
    assert_equal 100, account.rate_limit[:limit]

    err = assert_raises(Dossier::InsufficientCreditsError) { client.verify_phone(phone: PHONE) }
    assert_equal 402, err.http_status
    assert_equal "insufficient_credits", err.code
    refute_nil err.request_id
    assert_equal 0, err.credits_remaining
    assert_equal 0, client.account.credits_remaining, "a refused lookup charges nothing"
  end

  def test_search_history_pages_newest_first
    _, reg = register
    client = client_for(reg.api_key)
    done = Array.new(3) { client.verify_phone(PHONE).search_id }
    first = client.list_searches(kind: "phone", limit: 2)
    assert_equal done.reverse.first(2), first.searches.map { |s| s["search_id"] }
    assert_equal "succeeded", first.searches.first["status"]
    refute_nil first.next_cursor
    assert_equal done.reverse, client.each_search(kind: "phone", limit: 2).map { |s| s["search_id"] }
    assert_empty client.list_searches(kind: "email").searches
    # Time and Date filters reach the gateway as RFC 3339 date-times it accepts.
    day_ago = Time.now - 86_400
    assert_equal done.reverse, client.list_searches(kind: "phone", since: day_ago).searches.map { |s| s["search_id"] }
    assert_empty client.list_searches(kind: "phone", until: day_ago).searches
    assert_equal 3, client.list_searches(kind: "phone", since: Date.today - 1, until: Date.today + 2).searches.size
    assert_raises(Dossier::ValidationError) { client.list_searches(limit: 0) }
  end

  def test_validation_errors_carry_field_details
    _, reg = register
    client = client_for(reg.api_key)

    err = assert_raises(Dossier::ValidationError) { client.verify_phone(phone: "abc") }
    assert_equal 400, err.http_status
    assert_equal "validation_error", err.code
    assert_includes err.details.map { |d| d["field"] }, "phone"
    refute_nil err.request_id

    err = assert_raises(Dossier::ValidationError) { client.search_person(location: "Austin, TX") }
    assert_includes err.details.map { |d| d["field"] }, "name"

    # top: chooses the sites a username is checked on: without a username the gateway refuses it, naming it.
    err = assert_raises(Dossier::ValidationError) { client.search_person("John Smith", top: 5) }
    assert_includes err.details.map { |d| d["field"] }, "top"

    assert_equal SIGNUP_CREDITS, client.account.credits_remaining
  end

  def test_keys_login_and_revoked_key
    email, reg = register
    client = client_for(reg.api_key)

    created = client.create_key(name: "ruby-integration")
    assert_match(/\Adsk_/, created.api_key)
    assert_match(/\Akey_/, created.key_id)
    listed = client.list_keys.keys
    mine = listed.find { |k| k["id"] == created.key_id }
    refute_nil mine
    assert_equal "ruby-integration", mine["name"]
    assert_nil mine["revoked_at"]

    second = client_for(created.api_key)
    assert_equal email, second.account.account["email"]

    revoked = client.revoke_key(created.key_id)
    refute_nil revoked.key["revoked_at"]
    err = assert_raises(Dossier::AuthenticationError) { second.account }
    assert_equal 401, err.http_status
    assert_equal "unauthorized", err.code
    refute_nil err.request_id

    login = Dossier::Client.login(email: email, password: PASSWORD, base_url: @base_url)
    assert_match(/\Adsk_/, login.api_key)
    refute_equal reg.api_key, login.api_key
    assert_match(/\Akey_/, login.key_id)
    assert_equal email, client_for(login.api_key).account.account["email"]

    err = assert_raises(Dossier::AuthenticationError) do
      Dossier::Client.login(email: email, password: "wrong password!", base_url: @base_url)
    end
    assert_equal "invalid_credentials", err.code

    err = assert_raises(Dossier::ConflictError) do
      Dossier::Client.register(email: email.upcase, password: PASSWORD, base_url: @base_url)
    end
    assert_equal "email_taken", err.code
  end

  def test_async_pending_then_get_search
    _, reg = register
    client = client_for(reg.api_key)

    pending = client.verify_phone(phone: PHONE, wait: false)
    assert_equal "pending", pending.status
    assert_match(/\Asrch_/, pending.search_id)
    assert_equal "/v1/searches/#{pending.search_id}", pending.location

    deadline = Time.now + 15
    current = pending
    while current.pending?
      flunk "search #{pending.search_id} still pending after 15 s" if Time.now > deadline
      sleep 0.2
      current = client.get_search(pending.search_id)
    end
    assert_equal "success", current.status
    assert_equal pending.search_id, current.search_id
    assert_equal PHONE, current.results.first["e164"]
    assert_equal SIGNUP_CREDITS - 1, current.credits_remaining

    again = client.get_search(pending.search_id, wait: true)
    assert_equal current.results, again.results

    assert_raises(Dossier::NotFoundError) { client.get_search("srch_doesnotexist") }
  end

  def test_idempotency_key_replays_and_conflicts
    _, reg = register
    client = client_for(reg.api_key)
    key = "ruby-#{SecureRandom.uuid}"

    first = client.verify_phone(phone: PHONE, idempotency_key: key)
    replay = client.verify_phone(phone: PHONE, idempotency_key: key)
    assert_equal first.search_id, replay.search_id
    assert replay.replayed?
    assert_equal 0, replay.credits_spent
    assert_equal SIGNUP_CREDITS - 1, client.account.credits_remaining, "charged once"

    err = assert_raises(Dossier::ConflictError) { client.verify_phone(phone: "+14155550100", idempotency_key: key) }
    assert_equal "idempotency_conflict", err.code
  end

  def test_person_and_company_searches_are_free_and_empty
    _, reg = register
    client = client_for(reg.api_key)

    person = client.search(name: "John Smith", location: "Austin, TX")
    assert_equal "success", person.status
    assert_equal [], person.results
    assert_equal SIGNUP_CREDITS, person.credits_remaining

    generic = client.search(query: "John Smith", type: "person")
    assert_equal [], generic.results
    company = client.search_company(company_name: "Acme Inc", country: "US")
    assert_equal [], company.results
    # No sanctions list is imported: a screen finds no one, and costs nothing.
    screened = client.screen("John Smith", birth_year: 1970, country: "US")
    assert_equal ["success", []], [screened.status, screened.results]

    assert_equal SIGNUP_CREDITS, client.account.credits_remaining
  end

  def test_batch_one_valid_phone_and_one_invalid_item
    _, reg = register
    client = client_for(reg.api_key)

    batch = client.batch([{ kind: "phone", input: { phone: PHONE } }, { kind: "phone", input: { phone: "abc" } }])
    assert_equal "success", batch.status
    assert_match(/\Abat_/, batch.batch_id)
    assert_equal 2, batch.items.size
    valid, invalid = batch.items
    assert valid.success?
    assert_match(/\Asrch_/, valid.search_id)
    assert_equal PHONE, valid.results.first["e164"]
    assert invalid.error?
    assert_instance_of Dossier::ValidationError, invalid.error
    assert_equal "validation_error", invalid.error.code
    assert_includes invalid.error.details.map { |d| d["field"] }, "phone"
    assert_equal SIGNUP_CREDITS - 1, batch.credits_remaining, "the valid item costs one credit, the invalid none"
    assert_equal SIGNUP_CREDITS - 1, client.account.credits_remaining

    again = client.get_batch(batch.batch_id)
    assert_equal "success", again.status
    assert_equal batch.batch_id, again.batch_id
    assert_equal [valid.search_id, nil], again.items.map(&:search_id)
    assert_equal "validation_error", again.items.last.error.code
    assert_equal valid.search_id, client.get_search(valid.search_id).search_id

    too_many = Array.new(101) { { kind: "phone", input: { phone: PHONE } } }
    err = assert_raises(Dossier::ValidationError) { client.batch(too_many) }
    assert_equal 400, err.http_status
    assert_raises(Dossier::NotFoundError) { client.get_batch("bat_doesnotexist") }
    assert_equal SIGNUP_CREDITS - 1, client.account.credits_remaining, "refused batches charge nothing"
  end

  def test_webhooks_create_list_deliveries_delete_and_signature
    _, reg = register
    client = client_for(reg.api_key)
    url = "https://203.0.113.10/dossier-ruby" # a documentation address: public, resolves without DNS

    created = client.create_webhook(url, events: ["search.completed"])
    assert_equal 201, created.http_status
    hook = created.webhook
    assert_match(/\Awh_/, hook["id"])
    assert_equal url, hook["url"]
    assert_equal ["search.completed"], hook["events"]
    assert_match(/\Awhsec_/, created.secret)

    listed = client.list_webhooks.webhooks
    assert_equal [hook["id"]], listed.map { |w| w["id"] }
    refute listed.first.key?("secret"), "the secret is shown only at creation"
    assert_equal [], client.webhook_deliveries(hook["id"]).deliveries

    err = assert_raises(Dossier::ValidationError) { client.create_webhook("https://127.0.0.1/hooks") }
    assert_includes err.details.map { |d| d["field"] }, "url"

    # A delivery signed as the server signs it (HMAC-SHA256 of "<t>.<raw body>" keyed with the whsec_ string).
    payload = JSON.generate(id: "evt_1", type: "search.completed", created_at: Time.now.utc.iso8601,
                            data: { search_id: "srch_1" })
    t = Time.now.to_i
    header = "t=#{t},v1=#{OpenSSL::HMAC.hexdigest('SHA256', created.secret, "#{t}.#{payload}")}"
    assert_equal "evt_1", Dossier::Webhook.verify(payload, header, created.secret)["id"]
    assert_raises(Dossier::SignatureVerificationError) { Dossier::Webhook.verify(payload, header, "whsec_other") }

    assert_equal hook["id"], client.delete_webhook(hook["id"]).webhook["id"]
    assert_equal [], client.list_webhooks.webhooks
    assert_raises(Dossier::NotFoundError) { client.delete_webhook(hook["id"]) }
    assert_equal SIGNUP_CREDITS, client.account.credits_remaining, "webhooks cost nothing"
  end

  def test_test_key_lookups_are_free
    _, reg = register
    client = client_for(reg.api_key)

    created = client.create_key(name: "ruby-sandbox", mode: "test")
    assert_match(/\Adsk_test_/, created.api_key)
    modes = client.list_keys.keys.to_h { |k| [k["id"], k["mode"]] }
    assert_equal "test", modes[created.key_id]
    assert_equal ["live"], modes.values.uniq - ["test"]

    sandbox = client_for(created.api_key)
    res = sandbox.verify_phone("+15555550100")
    assert_equal "success", res.status
    assert_equal "+15555550100", res.results.first["e164"]
    assert_equal 0, res.credits_spent
    assert_equal SIGNUP_CREDITS, res.credits_remaining
    assert_equal SIGNUP_CREDITS, client.account.credits_remaining, "a test key's lookup is free"
  end
end
