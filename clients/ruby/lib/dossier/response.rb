# frozen_string_literal: true

module Dossier
  # Readers over a parsed JSON object `body` (String keys), shared by Response and BatchItem.
  module BodyReaders
    def [](key)
      body[key.to_s]
    end

    def to_h
      body
    end

    def status
      body["status"]
    end

    def success?
      status == "success"
    end

    def pending?
      status == "pending"
    end

    def credits_remaining
      body["credits_remaining"]
    end
  end

  # The fields of a lookup's envelope, shared by SearchResult and BatchItem.
  module SearchFields
    def search_id
      body["search_id"]
    end

    # Array of result Hashes (String keys); [] while pending (or for an error item).
    def results
      body["results"] || []
    end

    # Array of {"provider", "outcome", "took_ms"}; [] while pending.
    def sources
      body["sources"] || []
    end

    # A person search: how many items passed min_score before limit cut them (Integer); nil for other kinds, while
    # pending, and for a person search settled before the server counted them.
    def total_results
      body["total_results"]
    end
  end

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

    include BodyReaders

    def dig(*keys)
      body.dig(*keys.map { |k| k.is_a?(Symbol) ? k.to_s : k })
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

    # list_keys: Array of {"id", "prefix", "name", "mode", "created_at", "last_used_at", "revoked_at"}
    def keys
      body["keys"]
    end

    # revoke_key: the revoked key
    def key
      body["key"]
    end

    # create_webhook, delete_webhook: {"id", "url", "events", "created_at"}
    def webhook
      body["webhook"]
    end

    # create_webhook: the signing secret (whsec_…), shown only in this answer
    def secret
      body["secret"]
    end

    # list_webhooks: Array of webhooks, oldest first
    def webhooks
      body["webhooks"]
    end

    # webhook_deliveries: Array of delivery attempts, newest first
    def deliveries
      body["deliveries"]
    end

    # list_searches: Array of searches, newest first
    def searches
      body["searches"]
    end

    # list_searches: the cursor of the next page, nil on the last page
    def next_cursor
      body["next_cursor"]
    end

    # The X-Request-Id header.
    def request_id
      headers["x-request-id"]
    end

    # The calling key's rate limit as this answer reports it: {limit:, remaining:, reset:} from RateLimit-Limit
    # (requests allowed in a burst), RateLimit-Remaining (requests left in it) and RateLimit-Reset (seconds until
    # it is full again); each an Integer, or nil when the header is absent or not a whole number (read as the
    # credit headers are). On every answer, as rate_limit in the other three clients.
    def rate_limit
      { limit: Transport.parse_count(headers["ratelimit-limit"]),
        remaining: Transport.parse_count(headers["ratelimit-remaining"]),
        reset: Transport.parse_count(headers["ratelimit-reset"]) }
    end

    def inspect
      "#<#{self.class.name} http_status=#{http_status} body=#{redacted_body.inspect}>"
    end

    private

    def redacted_body
      return body unless body.is_a?(Hash)

      redacted = body
      redacted = redacted.merge("api_key" => "#{body['api_key'][0, 8]}…") if body["api_key"].is_a?(String)
      redacted = redacted.merge("secret" => "#{body['secret'][0, 6]}…") if body["secret"].is_a?(String)
      redacted
    end
  end

  # What a lookup's and a batch's answers share: "success" once settled, "pending" (202) until then.
  class SettlingResponse < Response
    # The Idempotency-Key the lookup or batch was sent with (yours, or the UUID v4 generated for it), kept
    # through polling; nil for get_search and get_batch (a GET sends none). As idempotency_key in Python.
    attr_reader :idempotency_key

    def initialize(reply, idempotency_key: nil)
      super(reply)
      @idempotency_key = idempotency_key
    end

    # For a pending answer: the Location header (/v1/searches/{id} or /v1/batches/{id}).
    def location
      headers["location"]
    end

    # Retry-After in seconds, or nil.
    def retry_after
      Transport.parse_retry_after(headers["retry-after"])
    end

    # X-Credits-Spent as an Integer (0 on an idempotent replay), or nil when absent.
    def credits_spent
      Transport.parse_count(headers["x-credits-spent"])
    end

    # true when the server replayed an earlier answer for the same Idempotency-Key.
    def replayed?
      headers["idempotent-replayed"] == "true"
    end
  end

  # The envelope of a lookup (or of GET /v1/searches/{id}):
  # status ("success" or "pending"), search_id, results, credits_remaining, sources, total_results (a person search).
  class SearchResult < SettlingResponse
    include SearchFields
  end

  # The answer of Client#batch and Client#get_batch: status "success" (every item settled) or
  # "pending" (202, some item still running), batch_id ("bat_…"), credits_remaining, and items,
  # one BatchItem per request, in request order.
  class BatchResult < SettlingResponse
    def batch_id
      body["batch_id"]
    end

    # Array of BatchItem.
    def items
      @items ||= (body["items"] || []).map { |item| BatchItem.new(item) }
    end

    # The items in error (failed?).
    def errors
      items.select(&:failed?)
    end
  end

  # One item of a batch, answering the request at its place: a lookup's answer or an item error, as in the
  # Python, JavaScript and PHP clients.
  # - ok? (status "success"): a finished lookup, with search_id, results, sources and credits_remaining as a
  #   SearchResult has them;
  # - pending? (status "pending"): a lookup still running (search_id; results empty);
  # - failed? (status "error"): the item was not run, or its lookup failed; error is the typed APIError.
  class BatchItem
    include BodyReaders
    include SearchFields # search_id: also on a failed lookup's error item; nil for an invalid item

    attr_reader :body

    def initialize(body)
      @body = body.is_a?(Hash) ? body : {}
    end

    # A finished lookup (status "success"); success? is the same.
    def ok?
      success?
    end

    # An item in error (status "error"; see error); error? is the same.
    def failed?
      status == "error"
    end
    alias error? failed?

    # For an error item: the Dossier::APIError subclass its code maps to (ValidationError for
    # "validation_error", InsufficientCreditsError for "insufficient_credits", …), with code, message
    # and details; not raised. nil for any other item.
    def error
      return nil unless failed?

      @error ||= ErrorMapping.item_error(body)
    end

    def inspect
      "#<#{self.class.name} #{body.inspect}>"
    end
  end
end
