# frozen_string_literal: true

module Dossier
  # A successful answer. The parsed JSON body is a Hash with String keys, available whole as
  # `body` (or `to_h`) and by key with `[]` / `dig`; the common fields also have readers.
  class Response
    attr_reader :http_status, :headers, :body, :raw_body

    def initialize(reply)
      @http_status = reply.status
      @headers = reply.headers
      @body = reply.data
      @raw_body = reply.body
    end

    def [](key)
      body[key.to_s]
    end

    def dig(*keys)
      body.dig(*keys.map { |k| k.is_a?(Symbol) ? k.to_s : k })
    end

    def to_h
      body
    end

    def status
      body["status"]
    end

    # register, login, create_key
    def api_key
      body["api_key"]
    end

    # login, create_key
    def key_id
      body["key_id"]
    end

    # register, account: {"id", "email", "created_at"}
    def account
      body["account"]
    end

    # list_keys: Array of {"id", "prefix", "name", "created_at", "last_used_at", "revoked_at"}
    def keys
      body["keys"]
    end

    # revoke_key: the revoked key
    def key
      body["key"]
    end

    def credits_remaining
      body["credits_remaining"]
    end

    # The X-Request-Id header.
    def request_id
      headers["x-request-id"]
    end

    def inspect
      "#<#{self.class.name} http_status=#{http_status} body=#{redacted_body.inspect}>"
    end

    private

    def redacted_body
      return body unless body.is_a?(Hash) && body["api_key"].is_a?(String)

      body.merge("api_key" => "#{body['api_key'][0, 8]}…")
    end
  end

  # The envelope of a lookup (or of GET /v1/searches/{id}):
  # status ("success" or "pending"), search_id, results, credits_remaining, sources.
  class SearchResult < Response
    def search_id
      body["search_id"]
    end

    # Array of result Hashes (String keys); [] while pending.
    def results
      body["results"] || []
    end

    # Array of {"provider", "outcome", "took_ms"}; [] while pending.
    def sources
      body["sources"] || []
    end

    def success?
      status == "success"
    end

    def pending?
      status == "pending"
    end

    # X-Credits-Spent as an Integer (0 on an idempotent replay), or nil when absent.
    def credits_spent
      int_header("x-credits-spent")
    end

    # true when the server replayed an earlier search for the same Idempotency-Key.
    def replayed?
      headers["idempotent-replayed"] == "true"
    end

    # For a pending search: the Location header (/v1/searches/{id}).
    def location
      headers["location"]
    end

    # Retry-After in seconds, or nil.
    def retry_after
      Transport.parse_retry_after(headers["retry-after"])
    end

    # {limit:, remaining:, reset:} from the RateLimit-* headers (Integers or nil).
    def rate_limit
      { limit: int_header("ratelimit-limit"), remaining: int_header("ratelimit-remaining"),
        reset: int_header("ratelimit-reset") }
    end

    private

    def int_header(name)
      value = headers[name]
      value && value =~ /\A\d+\z/ ? value.to_i : nil
    end
  end
end
