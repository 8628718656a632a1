# frozen_string_literal: true

require_relative "test_helper"

class RetryTest < Minitest::Test
  include DossierTestHelpers

  UNAVAILABLE = { status: "error", error: { code: "unavailable", message: "queue saturated" }, request_id: "req_u" }.freeze
  RATE_LIMITED = { status: "error", error: { code: "rate_limited", message: "slow down" }, request_id: "req_r" }.freeze

  def test_retries_503_with_backoff_then_succeeds
    @server.reply(503, UNAVAILABLE).reply(503, UNAVAILABLE).reply(200, SUCCESS)
    c = client(max_retries: 2)
    res = c.verify_phone(phone: "+14155552671")
    assert_equal "srch_1", res.search_id
    assert_equal 3, @server.requests.size
    # Full jitter: attempt n waits a random time in [0, min(backoff_max, backoff_base * 2**n)].
    assert_equal 2, c.pauses.size
    assert_operator c.pauses[0], :<=, 0.01
    assert_operator c.pauses[1], :<=, 0.02
    assert(c.pauses.all? { |p| p >= 0 })
  end

  def test_backoff_is_exponential_full_jitter_and_capped
    c = Dossier::Client.new(api_key: "dsk_x", base_url: @server.url, backoff_base: 1, backoff_max: 5)
    t = c.send(:transport)
    samples = Array.new(200) { t.backoff(0) }
    assert(samples.all? { |s| s >= 0 && s <= 1 })
    assert_operator samples.uniq.size, :>, 100, "jittered"
    assert(Array.new(50) { t.backoff(2) }.all? { |s| s <= 4 })
    assert(Array.new(50) { t.backoff(10) }.all? { |s| s <= 5 }, "capped at backoff_max")
    assert_operator Array.new(50) { t.backoff(10) }.max, :>, 2.5
  end

  def test_503_retries_exhausted_raises_unavailable
    4.times { @server.reply(503, UNAVAILABLE, { "Retry-After" => "0" }) }
    c = client(max_retries: 2)
    err = assert_raises(Dossier::UnavailableError) { c.verify_phone(phone: "+14155552671") }
    assert_equal 3, @server.requests.size, "1 attempt + max_retries"
    assert_equal 503, err.http_status
    assert_equal "unavailable", err.code
    assert_equal 0, err.retry_after
  end

  def test_max_retries_zero_disables_retries
    @server.reply(503, UNAVAILABLE).reply(200, SUCCESS)
    assert_raises(Dossier::UnavailableError) { client(max_retries: 0).account }
    assert_equal 1, @server.requests.size
  end

  def test_failed_lookup_503_with_search_id_is_not_retried
    @server.reply(503, { status: "error", error: { code: "unavailable", message: "the lookup failed" },
                         search_id: "srch_f", credits_remaining: 3 }, { "Retry-After" => "1" })
    err = assert_raises(Dossier::UnavailableError) { client.get_search("srch_f") }
    assert_equal 1, @server.requests.size
    assert_equal "srch_f", err.search_id
  end

  def test_failed_lookup_503_on_a_post_is_retried_with_the_same_key
    # The gateway answers a failed lookup 503 (Retry-After: 1) and runs it again when the same
    # Idempotency-Key comes back: only a GET's 503 naming a search is final.
    @server.reply(503, { status: "error", error: { code: "unavailable", message: "the lookup failed" },
                         search_id: "srch_f", credits_remaining: 3 }, { "Retry-After" => "1" })
    @server.reply(200, SUCCESS)
    c = client
    res = c.verify_phone(phone: "+14155552671", idempotency_key: "order-7")
    assert_equal "srch_1", res.search_id
    assert_equal %w[order-7 order-7], @server.requests.map { |r| r.headers["idempotency-key"] }
    assert_equal [1], c.pauses
  end

  def test_429_honours_retry_after
    @server.reply(429, RATE_LIMITED, { "Retry-After" => "0.3" }).reply(200, SUCCESS)
    c = fake_clock(Dossier::Client.new(api_key: "dsk_x", base_url: @server.url, backoff_base: 0.01, backoff_max: 0.01))
    c.verify_phone(phone: "+14155552671")
    assert_equal 2, @server.requests.size
    assert_equal [0.3], c.pauses, "waited the Retry-After, not the (tiny) backoff"
  end

  def test_429_integer_retry_after_is_used_as_the_delay
    @server.reply(429, RATE_LIMITED, { "Retry-After" => "1" }).reply(429, RATE_LIMITED, { "Retry-After" => "2" })
    @server.reply(200, SUCCESS)
    c = client(max_retries: 2)
    c.search(name: "John Smith")
    assert_equal [1, 2], c.pauses
  end

  def test_429_exhausted_raises_rate_limit_error_with_retry_after
    3.times { @server.reply(429, RATE_LIMITED, { "Retry-After" => "1" }) }
    c = client(max_retries: 1)
    err = assert_raises(Dossier::RateLimitError) { c.account }
    assert_equal 2, @server.requests.size
    assert_equal 1, err.retry_after
    assert_equal "rate_limited", err.code
    assert_equal 429, err.http_status
  end

  def test_429_with_a_very_long_retry_after_is_raised_at_once
    @server.reply(429, RATE_LIMITED, { "Retry-After" => "3600" })
    err = assert_raises(Dossier::RateLimitError) { client.account }
    assert_equal 1, @server.requests.size
    assert_equal 3600, err.retry_after
  end

  def test_same_idempotency_key_on_every_retry
    @server.reply(503, UNAVAILABLE).reply(429, RATE_LIMITED, { "Retry-After" => "0" }).reply(200, SUCCESS)
    client.search_person(name: "John Smith")
    keys = @server.requests.map { |r| r.headers["idempotency-key"] }
    assert_equal 3, keys.size
    assert_equal 1, keys.uniq.size, "one key for the whole call: #{keys.inspect}"
    assert_match UUID_V4, keys.first
  end

  def test_generated_idempotency_key_differs_per_call
    2.times { @server.reply(200, SUCCESS) }
    c = client
    c.verify_phone(phone: "+14155552671")
    c.verify_phone(phone: "+14155552671")
    keys = @server.requests.map { |r| r.headers["idempotency-key"] }
    assert(keys.all? { |k| k.match?(UUID_V4) })
    refute_equal keys[0], keys[1]
  end

  def test_caller_idempotency_key_is_sent_on_every_retry
    @server.reply(503, UNAVAILABLE).reply(200, SUCCESS)
    client.verify_email(email: "a@example.com", idempotency_key: "order-42")
    assert_equal %w[order-42 order-42], @server.requests.map { |r| r.headers["idempotency-key"] }
  end

  def test_connection_refused_retries_then_raises_connection_error
    port = free_port
    c = Dossier::Client.new(api_key: "dsk_x", base_url: "http://127.0.0.1:#{port}", max_retries: 2,
                            backoff_base: 0.01, backoff_max: 0.04)
    record_pauses(c)
    err = assert_raises(Dossier::ConnectionError) { c.verify_phone(phone: "+14155552671") }
    assert_kind_of Dossier::Error, err
    refute_kind_of Dossier::APIError, err
    assert_kind_of Errno::ECONNREFUSED, err.cause
    assert_equal 2, c.pauses.size, "3 attempts, 2 backoff pauses"
    assert_match(/after 3 attempts/, err.message)
  end

  def test_connection_refused_then_server_comes_up
    port = free_port
    late = nil
    c = Dossier::Client.new(api_key: "dsk_x", base_url: "http://127.0.0.1:#{port}", max_retries: 3,
                            backoff_base: 0.01, backoff_max: 0.04)
    record_pauses(c) do |n|
      next unless n == 1

      late = FakeServer.new(port: port)
      late.reply(200, SUCCESS)
    end
    res = c.verify_phone(phone: "+14155552671", idempotency_key: "k-1")
    assert_equal "srch_1", res.search_id
    assert_equal 1, c.pauses.size
    assert_equal "k-1", late.requests.first.headers["idempotency-key"]
  ensure
    late&.stop
  end

  REQUEST_TIMEOUT = { status: "error", error: { code: "request_timeout",
                                                  message: "the request did not arrive in time; the connection is closed" },
                      request_id: "req_t" }.freeze

  def test_408_request_timeout_is_retried_when_the_request_is_safe_to_repeat
    # The gateway's 408: the request did not arrive in time, so it was not acted on. A lookup (it carries its
    # Idempotency-Key), a GET and a DELETE are sent again, as after a 429 or a 503.
    @server.reply(408, REQUEST_TIMEOUT).reply(200, SUCCESS)
    @server.reply(408, REQUEST_TIMEOUT).reply(200, { status: "success", account: AN_ACCOUNT, credits_remaining: 1 })
    @server.reply(408, REQUEST_TIMEOUT).reply(200, { status: "success", key: { id: "key_1" } })
    c = client
    assert_equal "srch_1", c.verify_phone(phone: "+14155552671", idempotency_key: "k-408").search_id
    assert_equal 1, c.account.credits_remaining
    assert_equal "key_1", c.revoke_key("key_1").key["id"]
    requests = @server.requests
    assert_equal 6, requests.size
    assert_equal %w[k-408 k-408], requests.first(2).map { |r| r.headers["idempotency-key"] }
  end

  def test_408_is_not_retried_for_a_post_without_an_idempotency_key
    # register, login, create_key, create_webhook: a 408 may come from a proxy that passed part of it on.
    @server.reply(408, REQUEST_TIMEOUT).reply(201, { status: "success", api_key: "dsk_y", key_id: "key_y" })
    err = assert_raises(Dossier::APIError) { client.create_key(name: "once") }
    assert_equal [408, "request_timeout"], [err.http_status, err.code]
    assert_equal 1, @server.requests.size
  end

  ACCOUNT = { status: "success", account: AN_ACCOUNT, credits_remaining: 1 }.freeze

  def test_502_and_504_are_retried_when_the_request_is_safe_to_repeat
    # A load balancer's answer while a gateway pod restarts: a page of its own, not the API's envelope. A lookup (it
    # carries its Idempotency-Key), a GET and a DELETE are sent again, as on a 408.
    [502, 504].each do |status|
      server = FakeServer.new
      page = "<html><body>#{status} from the load balancer</body></html>"
      server.reply(status, page).reply(200, SUCCESS)
      server.reply(status, page).reply(200, ACCOUNT)
      server.reply(status, page).reply(200, { status: "success", key: { id: "key_1" } })
      c = Dossier::Client.new(api_key: "dsk_test", base_url: server.url, backoff_base: 0.001, backoff_max: 0.001)
      assert_equal "srch_1", c.verify_phone(phone: "+14155552671", idempotency_key: "k-#{status}").search_id
      assert_equal 1, c.account.credits_remaining
      assert_equal "key_1", c.revoke_key("key_1").key["id"]
      requests = server.requests
      assert_equal 6, requests.size
      assert_equal ["k-#{status}"] * 2, requests.first(2).map { |r| r.headers["idempotency-key"] }
    ensure
      server&.stop
    end
  end

  def test_a_delete_whose_retry_finds_it_gone_succeeds
    # The first attempt deleted it but its answer was lost (a cut connection, a 502): the retry's 404 is success.
    not_found = error_body("not_found", "no such key")
    [->(s) { s.drop }, ->(s) { s.reply(502, "<html>502</html>") }].each do |lose|
      server = FakeServer.new
      lose.call(server).reply(404, not_found)
      lose.call(server).reply(404, not_found)
      c = Dossier::Client.new(api_key: "dsk_test", base_url: server.url, backoff_base: 0.001, backoff_max: 0.001)
      revoked = c.revoke_key("key_1")
      assert_equal ["success", nil, 404], [revoked.status, revoked.key, revoked.http_status]
      deleted = c.delete_webhook("wh_1")
      assert_equal ["success", nil], [deleted.status, deleted.webhook]
      assert_equal ["/v1/auth/keys/key_1"] * 2 + ["/v1/webhooks/wh_1"] * 2, server.requests.map(&:path)
    ensure
      server&.stop
    end
  end

  def test_a_404_on_the_first_attempt_of_a_delete_is_still_not_found
    2.times { @server.reply(404, error_body("not_found", "no such key")) }
    assert_raises(Dossier::NotFoundError) { client.revoke_key("key_1") }
    assert_raises(Dossier::NotFoundError) { client.delete_webhook("wh_1") }
    assert_equal 2, @server.requests.size
  end

  def test_502_and_504_are_not_retried_for_a_post_without_an_idempotency_key_and_raised_after_the_retries
    [502, 504].each do |status|
      server = FakeServer.new
      server.reply(status, "<html>#{status}</html>").reply(201, { status: "success", api_key: "dsk_y", key_id: "key_y" })
      c = Dossier::Client.new(api_key: "dsk_test", base_url: server.url, backoff_base: 0.001, backoff_max: 0.001)
      err = assert_raises(Dossier::APIError) { c.create_key(name: "once") }
      assert_equal [status, nil], [err.http_status, err.code]
      assert_equal 1, server.requests.size, "a POST the gateway may have acted on is not re-sent"
      server.stop
      server = FakeServer.new
      3.times { server.reply(status, "<html>#{status}</html>") }
      c = Dossier::Client.new(api_key: "dsk_test", base_url: server.url, backoff_base: 0.001, backoff_max: 0.001)
      err = assert_raises(Dossier::APIError) { c.account }
      assert_equal [status, nil], [err.http_status, err.code]
      assert_equal 3, server.requests.size
    ensure
      server&.stop
    end
  end

  def test_408_after_max_retries_is_raised
    3.times { @server.reply(408, REQUEST_TIMEOUT) }
    err = assert_raises(Dossier::APIError) { client(max_retries: 2).account }
    assert_equal 408, err.http_status
    assert_equal 3, @server.requests.size
  end

  def test_dropped_connection_is_retried_for_lookups
    @server.drop.reply(200, SUCCESS)
    res = client.verify_phone(phone: "+14155552671")
    assert_equal "srch_1", res.search_id
    keys = @server.requests.map { |r| r.headers["idempotency-key"] }
    assert_equal 2, keys.size
    assert_equal 1, keys.uniq.size
  end

  def test_api_connection_error_is_the_other_clients_name_of_connection_error_and_both_catch_it
    [Dossier::APIConnectionError, Dossier::ConnectionError].each do |name|
      server = FakeServer.new
      server.drop
      c = Dossier::Client.new(api_key: "dsk_test", base_url: server.url, backoff_base: 0.001, backoff_max: 0.001)
      assert_raises(name) { c.create_key(name: "once") }
    ensure
      server&.stop
    end
  end

  def test_dropped_connection_is_not_retried_for_create_key
    @server.drop.reply(201, { status: "success", api_key: "dsk_y", key_id: "key_y" })
    assert_raises(Dossier::ConnectionError) { client.create_key(name: "once") }
    assert_equal 1, @server.requests.size, "a POST without an Idempotency-Key may have been applied"
  end

  # A listener that is not HTTP: answers every connection with an SSH banner, counting them.
  def with_ssh_listener
    listener = LoopbackListener.new do |socket|
      socket.readpartial(4096)
      socket.write("SSH-2.0-OpenSSH_9.6p1 Debian-4\r\n")
    end
    yield listener.url, -> { listener.connections }
  ensure
    listener&.stop
  end

  def test_a_malformed_answer_is_a_connection_error_retried_like_a_dropped_connection
    with_ssh_listener do |url, connections|
      c = record_pauses(Dossier::Client.new(api_key: "dsk_x", base_url: url, max_retries: 2,
                                            backoff_base: 0.01, backoff_max: 0.01))
      err = assert_raises(Dossier::ConnectionError) { c.account }
      assert_kind_of Dossier::Error, err
      assert_kind_of Net::HTTPBadResponse, err.cause
      assert_equal 3, connections.call, "a GET is retried"

      assert_raises(Dossier::ConnectionError) { c.create_key(name: "once") }
      assert_equal 4, connections.call, "a POST without an Idempotency-Key may have been applied: not repeated"
    end
  end

  # A TLS listener whose certificate no client trusts (self-signed, made here), counting connections.
  def with_untrusted_tls_listener
    key = OpenSSL::PKey::EC.generate("prime256v1")
    cert = OpenSSL::X509::Certificate.new
    cert.version = 2
    cert.serial = 1
    cert.subject = cert.issuer = OpenSSL::X509::Name.parse("/CN=127.0.0.1")
    cert.public_key = key
    cert.not_before = Time.now - 60
    cert.not_after = Time.now + 3600
    cert.sign(key, OpenSSL::Digest.new("SHA256"))
    context = OpenSSL::SSL::SSLContext.new
    context.cert = cert
    context.key = key
    # The client gives up on the certificate: the handshake fails, and the listener closes the connection.
    listener = LoopbackListener.new { |socket| OpenSSL::SSL::SSLSocket.new(socket, context).accept }
    yield listener.url("https"), -> { listener.connections }
  ensure
    listener&.stop
  end

  def test_a_certificate_error_is_not_retried_as_in_the_other_clients
    # Not transient: asking again meets the same certificate. Python, JavaScript and PHP give up at once too.
    with_untrusted_tls_listener do |url, connections|
      c = record_pauses(Dossier::Client.new(api_key: "dsk_x", base_url: url, max_retries: 2,
                                            backoff_base: 0.01, backoff_max: 0.01))
      err = assert_raises(Dossier::ConnectionError) { c.account }
      assert_kind_of OpenSSL::SSL::SSLError, err.cause
      assert_match(/certificate verify failed/, err.message)
      assert_equal 1, connections.call, "a GET is not retried"
      assert_raises(Dossier::ConnectionError) { c.verify_phone("+14155552671") }
      assert_equal 2, connections.call, "nor a lookup POST"
      assert_empty c.pauses
    end
  end

  def test_read_timeout_is_a_connection_error
    silent = TCPServer.new("127.0.0.1", 0)
    c = Dossier::Client.new(api_key: "dsk_x", base_url: "http://127.0.0.1:#{silent.addr[1]}", timeout: 0.2,
                            max_retries: 0)
    err = assert_raises(Dossier::ConnectionError) { c.account }
    assert_kind_of Net::ReadTimeout, err.cause
  ensure
    silent&.close
  end

  def test_timeout_bounds_the_whole_attempt_even_when_the_server_trickles_bytes
    # Every byte of the answer comes within 0.05 s, the whole answer takes 5 s: with timeout: 0.5 the
    # attempt gives up (as in the Python, JavaScript and PHP clients) instead of reading on.
    server = TrickleServer.new({ status: "success", account: { id: "acc_1" }, credits_remaining: 5 })
    c = record_pauses(Dossier::Client.new(api_key: "dsk_x", base_url: server.url, timeout: 0.5, max_retries: 1,
                                          backoff_base: 0.001, backoff_max: 0.001))
    err = assert_raises(Dossier::ConnectionError) { c.account }
    assert_kind_of Timeout::Error, err.cause
    assert_match(/after 2 attempts/, err.message)
    assert_equal 2, server.connections
  ensure
    server&.stop
  end
end
