# frozen_string_literal: true

$LOAD_PATH.unshift File.expand_path("../lib", __dir__)
require "dossier"
require "json"
require "socket"
require "minitest/autorun"

# A TCP listener on 127.0.0.1 (a random port unless one is given) that hands each connection it accepts to
# the block, on its accept thread (or, with concurrent: true, on a thread of its own), then closes it; it
# counts the connections. Every test server (FakeServer, TrickleServer, the listeners of retry_test.rb) is
# one of these, so the accept loop and `stop` exist once.
class LoopbackListener
  attr_reader :port

  def initialize(port: 0, concurrent: false, &handler)
    @server = TCPServer.new("127.0.0.1", port)
    @port = @server.addr[1]
    @handler = handler
    @concurrent = concurrent
    @lock = Mutex.new
    @connections = 0
    @thread = Thread.new { accept_loop }
    @thread.report_on_exception = false
  end

  def url(scheme = "http")
    "#{scheme}://127.0.0.1:#{port}"
  end

  def connections
    @lock.synchronize { @connections }
  end

  def stop
    @server.close unless @server.closed?
    @thread.kill
    @thread.join(1)
  end

  private

  def accept_loop
    loop do
      socket = @server.accept
      @lock.synchronize { @connections += 1 }
      if @concurrent
        Thread.new(socket) { |s| serve(s) }.report_on_exception = false
      else
        serve(socket)
      end
    end
  rescue IOError, Errno::EBADF
    nil # the listener was closed
  end

  def serve(socket)
    @handler.call(socket)
  rescue StandardError
    nil # the client hung up, or gave up on a handshake: deliberate in these tests
  ensure
    socket.close unless socket.closed?
  end
end

# A tiny HTTP/1.1 server on 127.0.0.1 (random port) for the unit tests. Each connection carries one
# request; the answer comes from a queue of scripted replies (FIFO). Every request is recorded.
# An account as the gateway describes it (API.md): the fixtures' account and register answers carry it.
AN_ACCOUNT = { id: "acc_1", email: "a@example.com", created_at: "2026-11-24T00:00:00.000Z" }.freeze

class FakeServer
  Request = Struct.new(:method, :path, :headers, :body) do
    def json
      body.empty? ? nil : JSON.parse(body)
    end
  end

  REASONS = { 200 => "OK", 201 => "Created", 202 => "Accepted", 400 => "Bad Request", 401 => "Unauthorized",
              402 => "Payment Required", 404 => "Not Found", 405 => "Method Not Allowed", 408 => "Request Timeout",
              409 => "Conflict", 413 => "Payload Too Large", 415 => "Unsupported Media Type", 429 => "Too Many Requests",
              500 => "Internal Server Error", 502 => "Bad Gateway", 503 => "Service Unavailable",
              504 => "Gateway Timeout" }.freeze

  def initialize(port: 0)
    @lock = Mutex.new
    @replies = []
    @requests = []
    @listener = LoopbackListener.new(port: port) { |socket| handle(socket) }
  end

  def port
    @listener.port
  end

  def url
    @listener.url
  end

  # Queue a reply. body: Hash (sent as JSON), String (sent as is) or nil; before: called before answering (to
  # move a fake clock on, for instance).
  def reply(status, body = nil, headers = {}, before: nil)
    @lock.synchronize { @replies << [status, body, headers, before] }
    self
  end

  # Queue a dropped connection: the request is read, then the socket is closed without an answer.
  def drop
    @lock.synchronize { @replies << :drop }
    self
  end

  def requests
    @lock.synchronize { @requests.dup }
  end

  def stop
    @listener.stop
  end

  private

  def handle(socket)
    request_line = socket.gets or return
    method, path, = request_line.split(" ")
    headers = {}
    while (line = socket.gets) && line != "\r\n"
      name, value = line.split(":", 2)
      headers[name.strip.downcase] = value.strip
    end
    body = headers["content-length"] ? socket.read(headers["content-length"].to_i) : ""
    request = Request.new(method, path, headers, body.to_s)
    scripted = @lock.synchronize do
      @requests << request
      @replies.shift
    end
    return if scripted == :drop

    status, payload, extra, before = scripted || [500, { status: "error", error: { code: "internal_error", message: "no scripted reply" } }, {}]
    before&.call
    text = payload.is_a?(Hash) ? JSON.generate(payload) : payload.to_s
    out = +"HTTP/1.1 #{status} #{REASONS.fetch(status, 'Status')}\r\n"
    out << "Content-Type: application/json; charset=utf-8\r\n" if payload.is_a?(Hash)
    out << "Content-Length: #{text.bytesize}\r\nConnection: close\r\n"
    extra.each { |k, v| out << "#{k}: #{v}\r\n" }
    out << "\r\n" << text
    socket.write(out)
  end
end

# A server on 127.0.0.1 that answers every request with a complete, valid 200 whose body it sends one
# byte every `interval` seconds: each read gets data quickly, the whole answer takes bytesize * interval.
class TrickleServer
  def initialize(body, interval: 0.05, pad_to: 100)
    text = JSON.generate(body)
    @payload = text + (" " * [pad_to - text.bytesize, 0].max)
    @interval = interval
    @listener = LoopbackListener.new(concurrent: true) { |socket| answer(socket) }
  end

  def url
    @listener.url
  end

  def connections
    @listener.connections
  end

  def stop
    @listener.stop
  end

  private

  def answer(socket)
    while (line = socket.gets) && line != "\r\n"; end
    socket.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" \
                 "Content-Length: #{@payload.bytesize}\r\nConnection: close\r\n\r\n")
    @payload.each_char do |c|
      sleep(@interval)
      socket.write(c)
    end
  end
end

module DossierTestHelpers
  SUCCESS = {
    status: "success", search_id: "srch_1", credits_remaining: 9,
    results: [{ e164: "+14155552671", valid: true }],
    sources: [{ provider: "libphonenumber", outcome: "found", took_ms: 1 }],
  }.freeze

  def setup
    super
    @server = FakeServer.new
    @saved_env = ENV.fetch("DOSSIER_API_KEY", nil)
    ENV.delete("DOSSIER_API_KEY")
  end

  def teardown
    @server&.stop
    ENV["DOSSIER_API_KEY"] = @saved_env if @saved_env
    super
  end

  # Runs the block with the environment variables given set (nil: unset), then restores them; returns its value.
  def with_env(vars)
    saved = vars.keys.to_h { |name| [name, ENV.fetch(name, nil)] }
    vars.each { |name, value| value.nil? ? ENV.delete(name) : ENV[name] = value }
    yield
  ensure
    saved.each { |name, value| value.nil? ? ENV.delete(name) : ENV[name] = value }
  end

  # A client against the fake server with tiny backoff; records every pause (and sleeps at most 20 ms
  # of it, so a Retry-After of 1 s is asserted without being waited out).
  def client(**opts)
    c = Dossier::Client.new(api_key: "dsk_test", base_url: @server.url, backoff_base: 0.01, backoff_max: 0.04,
                            **opts)
    record_pauses(c)
  end

  def record_pauses(client, real_cap: 0.02, &on_pause)
    pauses = []
    transport = client.send(:transport)
    transport.define_singleton_method(:pause) do |seconds|
      pauses << seconds
      on_pause&.call(pauses.size)
      sleep([seconds, real_cap].min) if seconds.positive?
    end
    client.define_singleton_method(:pauses) { pauses }
    client
  end

  # A fake clock in the client (no test measures the wall clock): a pause returns at once, recorded in
  # client.pauses, and moves the clock (client.clock[0], seconds) on by what it was asked for; the time the
  # requests take does not move it (a server's reply block may). A deadline is reached by the pauses alone.
  def fake_clock(client)
    pauses = []
    clock = [1000.0]
    transport = client.send(:transport)
    transport.define_singleton_method(:pause) do |seconds|
      pauses << seconds
      clock[0] += seconds
    end
    transport.define_singleton_method(:now) { clock[0] }
    client.define_singleton_method(:pauses) { pauses }
    client.define_singleton_method(:clock) { clock }
    client
  end

  def error_body(code, message, request_id: "req_123", details: nil)
    error = { code: code, message: message }
    error[:details] = details if details
    { status: "error", error: error, request_id: request_id }
  end

  def free_port
    s = TCPServer.new("127.0.0.1", 0)
    port = s.addr[1]
    s.close
    port
  end

  UUID_V4 = /\A\h{8}-\h{4}-4\h{3}-[89ab]\h{3}-\h{12}\z/.freeze
end
