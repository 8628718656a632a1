# frozen_string_literal: true

module Dossier
  # Root of every error this gem raises on purpose. `rescue Dossier::Error` catches them all.
  class Error < StandardError; end

  # The server answered with an error envelope (or with something that is not JSON).
  #
  #   http_status  Integer HTTP status, e.g. 402
  #   code         the envelope's error.code, e.g. "insufficient_credits" (nil if the body was not an envelope)
  #   message      the envelope's error.message
  #   request_id   the envelope's request_id (falls back to the X-Request-Id header)
  #   details      Array of {"field" => ..., "issue" => ...} Hashes (empty unless the server sent some)
  #   body         the parsed JSON body (Hash) or nil
  #   raw_body     the body exactly as received (String)
  #   headers      response headers, lower-case names => String values
  class APIError < Error
    attr_reader :http_status, :code, :request_id, :details, :body, :raw_body, :headers

    def initialize(message = nil, http_status: nil, code: nil, request_id: nil, details: nil, body: nil, raw_body: nil, headers: nil)
      @http_status = http_status
      @code = code
      @request_id = request_id
      @details = details || []
      @body = body
      @raw_body = raw_body
      @headers = headers || {}
      super(message || "HTTP #{http_status}")
    end

    # The search this error belongs to, when the body names one (a failed lookup's 503 does).
    def search_id
      body.is_a?(Hash) ? body["search_id"] : nil
    end

    # The Retry-After header in seconds (Integer or Float), or nil.
    def retry_after
      Transport.parse_retry_after(headers["retry-after"])
    end

    def inspect
      "#<#{self.class.name} http_status=#{http_status.inspect} code=#{code.inspect} " \
        "message=#{message.inspect} request_id=#{request_id.inspect}>"
    end
  end

  # 401: `unauthorized` (no, malformed, unknown or revoked key) and `invalid_credentials` (login).
  class AuthenticationError < APIError; end

  # 402 `insufficient_credits`: the balance is below the lookup's cost; nothing was charged.
  # `credits_remaining` is the balance (the X-Credits-Remaining header; nil for a batch item's error).
  class InsufficientCreditsError < APIError
    def credits_remaining
      Transport.parse_count(headers["x-credits-remaining"])
    end
  end

  # 429 `rate_limited`. `retry_after` holds the Retry-After seconds.
  class RateLimitError < APIError; end

  # 400 `validation_error` or `invalid_json`. `details` names each offending field.
  class ValidationError < APIError; end

  # 404 `not_found`: unknown search or key id (or route).
  class NotFoundError < APIError; end

  # 409 `email_taken` or `idempotency_conflict`.
  class ConflictError < APIError; end

  # 503 `unavailable`: the service (or, with a `search_id`, that lookup) failed; nothing was charged.
  # `retry_after` holds the Retry-After seconds.
  class UnavailableError < APIError; end

  # The server could not be reached (refused, reset, timed out, DNS) after every retry.
  # Not an APIError: there is no HTTP status. The low-level exception is in `cause`.
  class ConnectionError < Error; end

  # The name the JavaScript and Python clients give it (PHP: ApiConnectionException): the same class, so either
  # rescues it.
  APIConnectionError = ConnectionError

  # A pending search (or batch) was still pending when the polling deadline (poll_timeout) passed.
  # The work goes on on the server: fetch it later with Client#get_search(error.search_id)
  # (or Client#get_batch(error.batch_id)).
  #   result     the last pending SearchResult or BatchResult
  #   search     that SearchResult (nil for a batch); search_id its id
  #   batch_id   the BatchResult's id (nil for a search)
  class PollTimeoutError < Error
    attr_reader :result, :search_id, :search, :batch_id

    def initialize(message = nil, result: nil, search: nil)
      @result = result || search
      @search = @result if @result.is_a?(SearchResult)
      @search_id = @search&.search_id
      @batch_id = @result.batch_id if @result.is_a?(BatchResult)
      super(message || (@batch_id ? "batch #{@batch_id} is still pending" : "search #{@search_id} is still pending"))
    end
  end

  # Dossier::Webhook.verify refused a delivery: missing or malformed Dossier-Signature header, no v1
  # signature matching the secret, a timestamp outside the tolerance, or a body that is not JSON.
  # Answer such a request with a 4xx and do not act on it.
  class SignatureVerificationError < Error; end

  # Maps an error envelope to the error class for its code (or, failing that, its HTTP status).
  module ErrorMapping
    BY_CODE = {
      "unauthorized" => AuthenticationError,
      "invalid_credentials" => AuthenticationError,
      "insufficient_credits" => InsufficientCreditsError,
      "rate_limited" => RateLimitError,
      "validation_error" => ValidationError,
      "invalid_json" => ValidationError,
      "not_found" => NotFoundError,
      "email_taken" => ConflictError,
      "idempotency_conflict" => ConflictError,
      "unavailable" => UnavailableError,
    }.freeze

    BY_STATUS = {
      400 => ValidationError,
      401 => AuthenticationError,
      402 => InsufficientCreditsError,
      404 => NotFoundError,
      409 => ConflictError,
      429 => RateLimitError,
      503 => UnavailableError,
    }.freeze

    module_function

    # reply: a Transport::Reply with a non-2xx status.
    def error_for(reply)
      data = reply.data.is_a?(Hash) ? reply.data : nil
      code, message, details = parts(data && data["error"])
      klass = BY_CODE[code] || BY_STATUS[reply.status] || APIError
      message ||= default_message(reply)
      request_id = (data && data["request_id"]) || reply.headers["x-request-id"]
      klass.new(message, http_status: reply.status, code: code, request_id: request_id, details: details,
                         body: data, raw_body: reply.body, headers: reply.headers)
    end

    # A batch item's {"status":"error","error":{code,message,details?},"search_id"?} as the APIError it maps
    # to (no HTTP status: the batch itself succeeded); body is the item, so search_id reads a failed search's.
    def item_error(item)
      code, message, details = parts(item["error"])
      (BY_CODE[code] || APIError).new(message || "batch item failed", code: code, details: details, body: item)
    end

    # An envelope's error object => [code or nil, message or nil, details Array].
    def parts(err)
      err = {} unless err.is_a?(Hash)
      [err["code"].is_a?(String) ? err["code"] : nil, err["message"].is_a?(String) ? err["message"] : nil,
       err["details"].is_a?(Array) ? err["details"] : []]
    end

    def default_message(reply)
      snippet = reply.body.to_s.strip[0, 200]
      snippet.empty? ? "HTTP #{reply.status} with an empty body" : "HTTP #{reply.status}: #{snippet}"
    end
  end
end
