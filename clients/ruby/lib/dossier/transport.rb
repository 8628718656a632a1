# frozen_string_literal: true

require "json"
require "net/http"
require "openssl"
require "date"
require "time"
require "timeout"
require "uri"

module Dossier
  # HTTP plumbing shared by Client and the class methods register/login: one Net::HTTP request per
  # attempt, JSON in and out, retries with exponential backoff and full jitter. Internal API.
  class Transport
    # An attempt that outlived `timeout` after the connection was made (the request may have arrived): a
    # Net::ReadTimeout, as a silent server's is, but for the whole answer rather than one read.
    class AttemptTimeout < Net::ReadTimeout
      def initialize(message = nil)
        super(nil)
        @message = message
      end

      def message
        @message || super
      end
    end

    # One HTTP answer: Integer status, headers (lower-case names => String), raw body, parsed JSON (or nil).
    # gone: a DELETE's 404 on a retry, read as success (see #request's gone_on_retry).
    Reply = Struct.new(:status, :headers, :body, :data, :gone)

    # The request never reached the server: always safe to retry.
    UNSENT_ERRORS = [
      Errno::ECONNREFUSED, Errno::EHOSTUNREACH, Errno::ENETUNREACH, Errno::EADDRNOTAVAIL,
      Net::OpenTimeout, SocketError
    ].freeze

    # The request may have reached the server: retried only when repeating it is harmless
    # (GET, DELETE, and lookup POSTs, which carry an Idempotency-Key). A malformed answer (something
    # other than HTTP listening on the port) counts too, as in the other clients.
    SENT_ERRORS = [
      Errno::ECONNRESET, Errno::ECONNABORTED, Errno::EPIPE, Errno::ETIMEDOUT, EOFError, IOError,
      Net::ReadTimeout, Net::WriteTimeout, OpenSSL::SSL::SSLError, Net::HTTPBadResponse, Net::HTTPHeaderSyntaxError
    ].freeze

    # A certificate the client does not trust (self-signed, unknown issuer, expired, another host's) is not
    # transient: asking again meets the same certificate, so it is never retried, as in the other clients.
    # Net::HTTP raises it as an OpenSSL::SSL::SSLError like any TLS failure; its message tells it apart.
    CERTIFICATE_ERROR = /certificate verify failed|does not match the server certificate/.freeze

    # A Retry-After longer than this is not waited out: the error is raised at once instead.
    MAX_RETRY_AFTER = 60

    # Answers retried only when the request is safe to repeat (retry_sent), as in the other clients.
    RETRY_IF_SAFE_STATUSES = [408, 502, 504].freeze

    # Where the server is when no base_url is given: as the Stripe and OpenAI SDKs read their settings.
    ENV_BASE_URL = "DOSSIER_BASE_URL"
    DEFAULT_BASE_URL = "http://127.0.0.1:3000"

    attr_reader :base_url, :timeout, :max_retries, :backoff_base, :backoff_max

    # base_url: the argument, else ENV["DOSSIER_BASE_URL"], else DEFAULT_BASE_URL; a blank one counts as none.
    def initialize(base_url:, timeout:, max_retries:, backoff_base:, backoff_max:)
      given = base_url.to_s.strip
      from_env = given.empty? ? ENV[ENV_BASE_URL].to_s.strip : ""
      setting = from_env.empty? ? "base_url" : ENV_BASE_URL
      @base_uri = parse_base_url([given, from_env, DEFAULT_BASE_URL].find { |url| !url.empty? }, setting)
      @base_url = @base_uri.to_s
      @timeout = timeout
      @max_retries = Integer(max_retries)
      raise ArgumentError, "max_retries must be >= 0" if @max_retries.negative?

      @backoff_base = Float(backoff_base)
      @backoff_max = Float(backoff_max)
      @random = Random.new
    end

    # Sends one logical request, retrying on 429, 503 and connection failures (not on a certificate error), and
    # on a 408 (the request did not arrive in time), 502 or 504 when retry_sent: repeating the request is harmless.
    # Returns a Reply of any status (the caller decides what is an error);
    # raises ConnectionError when the server cannot be reached. gone_on_retry (a DELETE) is the data of the Reply
    # (marked gone) when a retry gets 404: the attempt whose answer was lost had deleted it. A first 404 is returned.
    def request(method, path, body: nil, headers: {}, retry_sent: false, gone_on_retry: nil)
      payload = body.nil? ? nil : encode(body)
      attempt = 0
      loop do
        begin
          reply = perform(method, path, payload, headers)
        rescue *UNSENT_ERRORS => e
          raise ConnectionError, connection_message(e, attempt) if attempt >= max_retries
        rescue *SENT_ERRORS => e
          if !retry_sent || attempt >= max_retries || certificate_error?(e)
            raise ConnectionError, connection_message(e, attempt)
          end
        else
          if gone_on_retry && attempt.positive? && reply.status == 404
            return Reply.new(reply.status, reply.headers, reply.body, gone_on_retry, true)
          end

          delay = retry_delay(method, reply, attempt, retry_sent)
          return reply if delay.nil?
        end
        pause(delay || backoff(attempt))
        attempt += 1
      end
    end

    # Sleeps between attempts and between polls (a method so it can be observed).
    def pause(seconds)
      sleep(seconds) if seconds.positive?
    end

    # The monotonic time in seconds that poll deadlines are counted with (a method so tests can stand in a clock).
    def now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    # Full jitter: a uniform random delay in [0, min(backoff_max, backoff_base * 2**attempt)].
    def backoff(attempt)
      @random.rand * [backoff_max, backoff_base * (2**attempt)].min
    end

    # A count header (X-Credits-Spent, X-Credits-Remaining) => Integer: a whole number of ASCII digits,
    # surrounding spaces ignored; anything else ("-1", "+7", "1.5", "1e2", blank) is nil. As in the other clients.
    def self.parse_count(value)
      value = value&.gsub(/\A[ \t]+|[ \t]+\z/, "")
      value&.match?(/\A[0-9]+\z/) ? value.to_i : nil
    end

    # A longer Retry-After is read as this: one day, in seconds.
    RETRY_AFTER_CAP = 86_400

    MONTHS = %w[Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec].freeze
    HTTP_TIME = "([0-9]{2}):([0-9]{2}):([0-9]{2})"
    IMF_FIXDATE = /\A(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) (#{MONTHS.join('|')}) ([0-9]{4}) #{HTTP_TIME} GMT\z/.freeze
    RFC850_DATE = /\A(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{2})-(#{MONTHS.join('|')})-([0-9]{2}) #{HTTP_TIME} GMT\z/.freeze
    ASCTIME_DATE = /\A(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (#{MONTHS.join('|')}) ([0-9]{2}| [0-9]) #{HTTP_TIME} ([0-9]{4})\z/.freeze

    # Retry-After (RFC 9110 section 10.2.3) => seconds to wait (Integer, or Float for a fraction or a date),
    # or nil when absent or unreadable; read the same way by the four Dossier clients. Delay-seconds ("120";
    # a decimal fraction such as "1.5" is tolerated) or an HTTP-date ("Tue, 24 Nov 2026 14:00:30 GMT", or
    # the obsolete RFC 850 and asctime forms) counted from `now` (a past date is 0), capped at
    # RETRY_AFTER_CAP (one day). Anything else, such as "-5", "1e3" or an RFC 3339 time, is garbage: nil,
    # so a retry waits its backoff and a poll its poll_interval.
    def self.parse_retry_after(value, now = Time.now)
      return nil if value.nil?

      value = value.gsub(/\A[ \t]+|[ \t]+\z/, "")
      if value.match?(/\A[0-9]+(\.[0-9]+)?\z/)
        seconds = value.include?(".") ? value.to_f : value.to_i
        return [seconds, RETRY_AFTER_CAP].min
      end

      date = http_date(value, now)
      date && (date - now).clamp(0, RETRY_AFTER_CAP)
    end

    # An HTTP-date (RFC 9110 section 5.6.7) => Time, or nil.
    def self.http_date(value, now)
      if (m = IMF_FIXDATE.match(value))
        day, month, year, hour, minute, second = m.captures
      elsif (m = RFC850_DATE.match(value))
        day, month, yy, hour, minute, second = m.captures
        # Two digits: the year within 50 years from now, else the century before.
        this_year = now.utc.year
        year = this_year - (this_year % 100) + yy.to_i
        year -= 100 if year > this_year + 50
      elsif (m = ASCTIME_DATE.match(value))
        month, day, hour, minute, second, year = m.captures
      else
        return nil
      end
      year, month, day = year.to_i, MONTHS.index(month) + 1, day.to_i
      hour, minute, second = hour.to_i, minute.to_i, second.to_i
      # No such day or time (30 Feb, 24:00:00): Time.utc would roll it over.
      return nil unless Date.valid_date?(year, month, day) && hour < 24 && minute < 60 && second < 60

      Time.utc(year, month, day, hour, minute, second)
    end
    private_class_method :http_date

    # Returns the reply when it is a 2xx with a JSON object body; raises the mapped APIError otherwise.
    def self.check(reply)
      raise ErrorMapping.error_for(reply) unless (200..299).cover?(reply.status) || reply.gone
      return reply if reply.data.is_a?(Hash)

      raise not_a(reply, "JSON object")
    end

    # The error for a 2xx reply whose body is not `expected` ("JSON object", "search envelope (…)"): the base
    # APIError, code nil (it is no error envelope), as in the other three clients.
    def self.not_a(reply, expected)
      article = expected.start_with?(/[aeiou]/) ? "an" : "a"
      APIError.new("HTTP #{reply.status} with a body that is not #{article} #{expected}",
                   http_status: reply.status, body: reply.data.is_a?(Hash) ? reply.data : nil, raw_body: reply.body,
                   headers: reply.headers, request_id: reply.headers["x-request-id"])
    end

    private

    # nil: do not retry this reply. Otherwise: seconds to wait before the next attempt.
    def retry_delay(method, reply, attempt, retry_sent)
      return nil if attempt >= max_retries
      # 408 request_timeout (the gateway's or a proxy's), 502 and 504 (a load balancer's while a gateway restarts):
      # retried only when the request is safe to repeat, as a connection that failed after sending is; 429 and 503
      # always (the server did not act on the request).
      return nil unless [429, 503].include?(reply.status) || (RETRY_IF_SAFE_STATUSES.include?(reply.status) && retry_sent)
      # A GET answered 503 naming a search reads that lookup's final outcome (it failed): polling again
      # gives the same answer. A POST answered so is retried: the same Idempotency-Key runs it again.
      return nil if method == :get && reply.status == 503 && reply.data.is_a?(Hash) && reply.data["search_id"]

      retry_after = self.class.parse_retry_after(reply.headers["retry-after"])
      return backoff(attempt) if retry_after.nil?
      return nil if retry_after > MAX_RETRY_AFTER

      retry_after
    end

    # The request body as JSON. What JSON cannot carry (a String that is not valid UTF-8, such as one read as
    # Latin-1 or binary) is the caller's to fix: ArgumentError before anything is sent, as in the PHP client.
    def encode(body)
      JSON.generate(body)
    rescue JSON::GeneratorError
      # Not JSON's own message: it may quote the value (a password, for register and login).
      what = if non_finite?(body)
               "every number in it must be finite (no NaN or Infinity)"
             else
               "every String in it must be valid UTF-8"
             end
      raise ArgumentError, "the request cannot be sent as JSON: #{what}", cause: nil
    end

    # Whether a NaN or an infinite Float is somewhere in value (what JSON cannot write, besides text that is not UTF-8).
    def non_finite?(value)
      case value
      when Float then !value.finite?
      when Hash then value.each_value.any? { |v| non_finite?(v) }
      when Array then value.any? { |v| non_finite?(v) }
      else false
      end
    end

    def perform(method, path, payload, headers)
      uri = @base_uri.dup
      path, query = path.split("?", 2)
      uri.path = @base_uri.path.chomp("/") + path
      uri.query = query
      req = build_request(method, uri, payload, headers)
      http = Net::HTTP.new(uri.hostname, uri.port)
      http.use_ssl = uri.scheme == "https"
      http.max_retries = 0 # retries are ours, counted against max_retries
      if timeout
        http.open_timeout = timeout
        http.read_timeout = timeout
        http.write_timeout = timeout
      end
      connected = false
      response = within_timeout do
        http.start do |h|
          connected = true
          h.request(req)
        end
      end
      to_reply(response)
    rescue AttemptTimeout
      raise if connected

      raise Net::OpenTimeout, "no connection within the timeout of #{timeout} s" # never sent: retried
    end

    # `timeout` bounds the whole attempt, from connecting to reading the complete answer: Net::HTTP's own
    # timeouts count each read, so a server trickling its answer a byte at a time would outlast them.
    def within_timeout(&block)
      return yield unless timeout

      Timeout.timeout(timeout, AttemptTimeout, "no complete answer within the timeout of #{timeout} s", &block)
    end

    def build_request(method, uri, payload, headers)
      klass = { get: Net::HTTP::Get, post: Net::HTTP::Post, delete: Net::HTTP::Delete }.fetch(method)
      req = klass.new(uri)
      req["Accept"] = "application/json"
      req["User-Agent"] = "dossier-ruby/#{VERSION}"
      headers.each { |name, value| req[name] = value }
      unless payload.nil?
        req["Content-Type"] = "application/json"
        req.body = payload
      end
      req
    end

    def to_reply(response)
      headers = {}
      response.each_header { |name, value| headers[name.downcase] = value }
      raw = response.body.to_s
      raw = raw.dup.force_encoding(Encoding::UTF_8) unless raw.frozen?
      data = begin
        raw.empty? ? nil : JSON.parse(raw)
      rescue JSON::ParserError
        nil
      end
      Reply.new(response.code.to_i, headers, raw, data)
    end

    def certificate_error?(error)
      error.is_a?(OpenSSL::SSL::SSLError) && CERTIFICATE_ERROR.match?(error.message)
    end

    def connection_message(error, attempt)
      tries = attempt + 1
      "could not reach #{base_url} (#{error.class}: #{error.message}) after #{tries} attempt#{'s' if tries > 1}"
    end

    # setting: what the URL came from (base_url, DOSSIER_BASE_URL), named when it is not one.
    def parse_base_url(base_url, setting)
      uri = URI.parse(base_url)
      unless uri.is_a?(URI::HTTP) && uri.host && !uri.host.empty?
        raise ArgumentError, "#{setting} must be an http(s) URL, got #{base_url.inspect}"
      end

      uri.query = nil
      uri.fragment = nil
      uri.path = uri.path.chomp("/")
      uri
    rescue URI::InvalidURIError
      raise ArgumentError, "#{setting} must be an http(s) URL, got #{base_url.inspect}"
    end
  end
end
