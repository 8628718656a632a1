# frozen_string_literal: true

require "date"
require "securerandom"
require "time"

module Dossier
  # A client for one API key.
  #
  #   client = Dossier::Client.new(api_key: "dsk_…")    # or ENV["DOSSIER_API_KEY"] (and ENV["DOSSIER_BASE_URL"])
  #   search = client.verify_phone(phone: "+14155552671")
  #   search.results.first["e164"]  # => "+14155552671"
  #   search.credits_remaining      # => 99
  #
  # Every method raises a Dossier::APIError subclass for an error answer and
  # Dossier::ConnectionError when the server cannot be reached after the retries.
  class Client
    DEFAULT_BASE_URL = Transport::DEFAULT_BASE_URL
    DEFAULT_TIMEOUT = 30        # seconds per HTTP attempt, from connecting to the whole answer read
    DEFAULT_MAX_RETRIES = 2     # retries after the first attempt
    DEFAULT_POLL_TIMEOUT = 60   # seconds a lookup may take, polling a pending search included
    DEFAULT_POLL_INTERVAL = 1.0 # seconds between polls when the answer has no Retry-After
    DEFAULT_BACKOFF_BASE = 0.5  # seconds; attempt n waits rand * min(backoff_max, backoff_base * 2**n)
    DEFAULT_BACKOFF_MAX = 8.0   # seconds
    # The gateway waits this long for a lookup before answering 202 when no Prefer: wait=N is sent.
    SERVER_DEFAULT_WAIT = 10

    PERSON_FIELDS = %i[name email phone username location age_range].freeze
    # What the gateway accepts as an Idempotency-Key (API.md): 1–255 visible ASCII characters (no spaces).
    IDEMPOTENCY_KEY = /\A[\x21-\x7E]{1,255}\z/.freeze
    # What the gateway echoes as the answer's X-Request-Id (API.md): 1–128 of these characters. It replaces anything
    # else with an id of its own, so the client refuses it rather than send an id the caller would never see again.
    REQUEST_ID = %r{\A[A-Za-z0-9._~:@+=/-]{1,128}\z}.freeze
    GENERIC_FIELDS = %i[query type country].freeze

    attr_reader :base_url, :timeout, :max_retries, :poll_timeout, :poll_interval

    # api_key:       "dsk_…"; defaults to ENV["DOSSIER_API_KEY"] (also when blank); surrounding whitespace is
    #                removed. ArgumentError when neither is set, or with a control character inside.
    # base_url:      defaults to ENV["DOSSIER_BASE_URL"] (also when blank), else "http://127.0.0.1:3000"
    # timeout:       seconds one HTTP attempt may take as a whole, from connecting to the complete answer
    #                read (nil: no timeout), default 30
    # max_retries:   retries on 429, 503, connection failures and (when safe to repeat) 408, 502 and 504, default 2 (0: none)
    # poll_timeout:  seconds a lookup may take (from the call's start, polling of a 202 included) before
    #                PollTimeoutError, default 60 (nil: no deadline)
    # poll_interval: seconds between polls when the server sends no Retry-After, default 1
    # backoff_base, backoff_max: exponential backoff with full jitter, defaults 0.5 and 8 seconds
    def initialize(api_key: nil, base_url: nil, timeout: DEFAULT_TIMEOUT,
                   max_retries: DEFAULT_MAX_RETRIES, poll_timeout: DEFAULT_POLL_TIMEOUT,
                   poll_interval: DEFAULT_POLL_INTERVAL, backoff_base: DEFAULT_BACKOFF_BASE,
                   backoff_max: DEFAULT_BACKOFF_MAX)
      # Trimmed (a key read from a file keeps its line break); a blank key is no key. As in the other clients.
      api_key = ENV["DOSSIER_API_KEY"] if api_key.nil? || api_key.to_s.strip.empty?
      if api_key.nil? || api_key.to_s.strip.empty?
        raise ArgumentError, "an API key is required: pass api_key: or set DOSSIER_API_KEY"
      end

      @api_key = api_key.to_s.strip
      if @api_key.match?(/[\x00-\x1f\x7f]/)
        # Refused here, without echoing it, rather than by Net::HTTP at the first request.
        raise ArgumentError, "the API key contains a control character (a line break or a tab?); it cannot be sent"
      end
      @transport = Transport.new(base_url: base_url, timeout: timeout, max_retries: max_retries,
                                 backoff_base: backoff_base, backoff_max: backoff_max)
      @base_url = @transport.base_url
      @timeout = timeout
      @max_retries = @transport.max_retries
      @poll_timeout = poll_timeout
      @poll_interval = Float(poll_interval)
    end

    # POST /v1/auth/register (no key needed). Returns a Response with api_key, account, credits_remaining.
    def self.register(email:, password:, base_url: nil, timeout: DEFAULT_TIMEOUT,
                      max_retries: DEFAULT_MAX_RETRIES, request_id: nil)
      public_call("/v1/auth/register", { email: email, password: password }, :register,
                  base_url: base_url, timeout: timeout, max_retries: max_retries, request_id: request_id)
    end

    # POST /v1/auth/login (no key needed). Returns a Response with a new api_key and its key_id.
    def self.login(email:, password:, base_url: nil, timeout: DEFAULT_TIMEOUT,
                   max_retries: DEFAULT_MAX_RETRIES, request_id: nil)
      public_call("/v1/auth/login", { email: email, password: password }, :key_issued,
                  base_url: base_url, timeout: timeout, max_retries: max_retries, request_id: request_id)
    end

    def self.public_call(path, body, kind, base_url:, timeout:, max_retries:, request_id:)
      headers = request_id_header(request_id)
      transport = Transport.new(base_url: base_url, timeout: timeout, max_retries: max_retries,
                                backoff_base: DEFAULT_BACKOFF_BASE, backoff_max: DEFAULT_BACKOFF_MAX)
      shaped(Transport.check(transport.request(:post, path, body: body, headers: headers)), kind)
    end
    private_class_method :public_call

    text = ->(value) { value.is_a?(String) && !value.empty? }
    named = ->(value) { value.is_a?(Hash) && text.call(value["id"]) }
    objects = ->(value) { value.is_a?(Array) && value.all?(Hash) }
    # The documented shape (API.md) of every other 2xx answer, beside status "success": what it is called and what
    # its body must hold to be read as that answer. The same rules in the Python, JavaScript and PHP clients.
    ANSWERS = {
      account: ["account answer (status, account with its id, credits_remaining)",
                ->(b) { named.call(b["account"]) && b["credits_remaining"].is_a?(Integer) }],
      register: ["registration answer (status, account with its id, api_key, credits_remaining)",
                 ->(b) { ANSWERS[:account][1].call(b) && text.call(b["api_key"]) }],
      key_issued: ["new key answer (status, api_key, key_id)",
                   ->(b) { text.call(b["api_key"]) && text.call(b["key_id"]) }],
      key_list: ["key list (status, keys)", ->(b) { objects.call(b["keys"]) }],
      key_revoked: ["revoked key answer (status, key with its id)", ->(b) { named.call(b["key"]) }],
      history: ["search history page (status, searches, next_cursor)",
                lambda do |b|
                  cursor = b.fetch("next_cursor", false) # absent: false, neither nil nor a cursor
                  objects.call(b["searches"]) && (cursor.nil? || text.call(cursor))
                end],
      webhook_created: ["new webhook answer (status, webhook with its id, secret)",
                        ->(b) { named.call(b["webhook"]) && text.call(b["secret"]) }],
      webhook_list: ["webhook list (status, webhooks)", ->(b) { objects.call(b["webhooks"]) }],
      webhook_deleted: ["deleted webhook answer (status, webhook with its id)", ->(b) { named.call(b["webhook"]) }],
      deliveries: ["delivery list (status, deliveries)", ->(b) { objects.call(b["deliveries"]) }]
    }.freeze

    # The Response of a 2xx reply of kind (a key of ANSWERS); one that is not its documented shape raises APIError
    # (code nil), as a lookup's that is not the envelope: a broken answer is never read as an account without an id
    # or an empty list.
    def self.shaped(reply, kind)
      what, holds = ANSWERS.fetch(kind)
      # A DELETE's 404 on a retry (reply.gone) is the success the client made of it, not the gateway's answer.
      raise Transport.not_a(reply, what) unless reply.gone || (reply.data["status"] == "success" && holds.call(reply.data))

      Response.new(reply)
    end
    private_class_method :shaped

    # {"X-Request-Id" => request_id} ({} for nil); ArgumentError, before anything is sent, for an id the gateway
    # would not echo (1–128 of A-Z a-z 0-9 . _ ~ : @ + = / -), as in the other three clients.
    def self.request_id_header(request_id)
      return {} if request_id.nil?
      unless request_id.is_a?(String) && request_id.match?(REQUEST_ID)
        raise ArgumentError, "request_id must be 1–128 of the characters A-Z a-z 0-9 . _ ~ : @ + = / - " \
                             "(the gateway would not echo it)"
      end

      { "X-Request-Id" => request_id }
    end

    # --- lookups -------------------------------------------------------------------------------
    #
    # Every lookup also takes:
    #   permissible_purpose: e.g. "employment" (stored in the audit trail)
    #   idempotency_key:     sent as Idempotency-Key; a UUID v4 is generated when omitted. The same key
    #                        is sent on every retry of the call, so a retry never charges twice.
    #                        Anything but 1–255 printable ASCII characters raises ArgumentError.
    #   wait:                true (default): on 202 poll GET /v1/searches/{id} until the search is done;
    #                        false: send Prefer: respond-async and return the pending search at once.
    #   poll_timeout:        overrides the client's poll_timeout for this call.
    #   request_id:          your own id for the call, sent as X-Request-Id on every request it makes (retries
    #                        and polls included) and echoed by the gateway (result.request_id); every other method
    #                        takes it too. 1–128 of A-Z a-z 0-9 . _ ~ : @ + = / -, else ArgumentError.
    # Fields left nil are not sent.

    # Generic form:  search(query: "+14155552671", type: "phone", country: "US")            => POST /v1/search
    # Person form:   search(name: "Gonzalo Halvorson", location: "South Jillville, NM")  => POST /v1/search/person
    # Mixing the two forms raises ArgumentError. sites:, tags: and top: choose the sites a username is checked on,
    # in either form (type: "username", or username:): see search_person.
    def search(positional_query = nil, query: nil, type: nil, country: nil, name: nil, email: nil, phone: nil,
               username: nil, location: nil, age_range: nil, sites: nil, tags: nil, top: nil,
               permissible_purpose: nil, idempotency_key: nil, wait: true, poll_timeout: nil, request_id: nil)
      query = main_value(:query, positional_query, query)
      generic = { query: query, type: type, country: country }
      person = { name: name, email: email, phone: phone, username: username, location: location,
                 age_range: age_range }
      selection = { sites: sites, tags: tags, top: top }
      options = { permissible_purpose: permissible_purpose, idempotency_key: idempotency_key, wait: wait,
                  poll_timeout: poll_timeout, request_id: request_id }
      if generic.values.any? { |v| !v.nil? }
        if person.values.any? { |v| !v.nil? }
          raise ArgumentError, "give either query/type/country or person fields (#{PERSON_FIELDS.join(', ')}), not both"
        end

        lookup("/v1/search", generic.merge(selection), **options)
      else
        lookup("/v1/search/person", person.merge(selection), **options)
      end
    end

    # POST /v1/search/person. At least one of name, email, phone, username.
    #   search_person("Gonzalo Halvorson", location: "South Jillville, NM")   # or search_person(name: "Gonzalo Halvorson", …)
    # With a username, sites: (site names), tags: (categories such as "coding", country codes such as "de") and
    # top: (the N most popular) choose the sites it is checked on; without them, every site of the server's list.
    # A name or tag no site has is a ValidationError (GET /v1/username/sites lists them). result["source_summary"]
    # counts sources by outcome; a pending search's result["progress"] shows the accounts found so far.
    #   search_person(username: "gonzalo_halvorson", top: 20)
    # country: (ISO alpha-2, e.g. "US") keeps people known in that country or of no known country, and is the region a
    # national phone: is read in; limit: (a whole number from 1 to 100; the server's default is 25) is how many items
    # to answer at most, best first; min_score: (0 to 1) drops items whose "match_score" is below it. All three are
    # sent as given (a value out of range is the server's ValidationError naming it). result.total_results says how
    # many items passed min_score before limit cut them.
    #   search_person("Gonzalo Halvorson", country: "US", limit: 10, min_score: 0.5)
    def search_person(positional_name = nil, name: nil, email: nil, phone: nil, username: nil, location: nil,
                      age_range: nil, sites: nil, tags: nil, top: nil, country: nil, limit: nil, min_score: nil,
                      permissible_purpose: nil, idempotency_key: nil, wait: true, poll_timeout: nil, request_id: nil)
      name = main_value(:name, positional_name, name)
      lookup("/v1/search/person",
             { name: name, email: email, phone: phone, username: username, location: location, age_range: age_range,
               sites: sites, tags: tags, top: top, country: country, limit: limit, min_score: min_score },
             permissible_purpose: permissible_purpose, idempotency_key: idempotency_key, wait: wait,
             poll_timeout: poll_timeout, request_id: request_id)
    end

    # POST /v1/screen: a name screened against the sanctions lists the operator imported, alone. type: "person"
    # (the server's default) or "company"; birth_year: (a person's) rules out entries born more than a year apart;
    # country: (ISO alpha-2) is reported in matched_on and narrows nothing. Each result is a listed entity the name
    # matches, with its "watchlist_hits"; charged as a person or company lookup, only with a hit.
    #   screen("Rustam Karimov", birth_year: 1961)   # or screen(name: "Rustam Karimov", …)
    def screen(positional_name = nil, name: nil, type: nil, birth_year: nil, country: nil, permissible_purpose: nil,
               idempotency_key: nil, wait: true, poll_timeout: nil, request_id: nil)
      name = main_value(:name, positional_name, name, required: true)
      lookup("/v1/screen", { name: name, type: type, birth_year: birth_year, country: country },
             permissible_purpose: permissible_purpose, idempotency_key: idempotency_key, wait: wait,
             poll_timeout: poll_timeout, request_id: request_id)
    end

    # POST /v1/search/company. At least one of company_name, domain, registration_number.
    #   search_company("Acme Inc", country: "US")   # or search_company(company_name: "Acme Inc", …)
    def search_company(positional_company_name = nil, company_name: nil, domain: nil, registration_number: nil,
                       country: nil, permissible_purpose: nil, idempotency_key: nil, wait: true, poll_timeout: nil,
                       request_id: nil)
      company_name = main_value(:company_name, positional_company_name, company_name)
      lookup("/v1/search/company",
             { company_name: company_name, domain: domain, registration_number: registration_number, country: country },
             permissible_purpose: permissible_purpose, idempotency_key: idempotency_key, wait: wait,
             poll_timeout: poll_timeout, request_id: request_id)
    end

    # POST /v1/verify/email
    #   verify_email("grace@example.com")   # or verify_email(email: "grace@example.com")
    def verify_email(positional_email = nil, email: nil, permissible_purpose: nil, idempotency_key: nil, wait: true,
                     poll_timeout: nil, request_id: nil)
      email = main_value(:email, positional_email, email, required: true)
      lookup("/v1/verify/email", { email: email },
             permissible_purpose: permissible_purpose, idempotency_key: idempotency_key, wait: wait,
             poll_timeout: poll_timeout, request_id: request_id)
    end

    # POST /v1/verify/phone. country is the default region for national-format numbers.
    #   verify_phone("+14155552671", country: "US")   # or verify_phone(phone: "+14155552671")
    def verify_phone(positional_phone = nil, phone: nil, country: nil, permissible_purpose: nil, idempotency_key: nil,
                     wait: true, poll_timeout: nil, request_id: nil)
      phone = main_value(:phone, positional_phone, phone, required: true)
      lookup("/v1/verify/phone", { phone: phone, country: country },
             permissible_purpose: permissible_purpose, idempotency_key: idempotency_key, wait: wait,
             poll_timeout: poll_timeout, request_id: request_id)
    end

    # GET /v1/searches/{id}: one request (retried on 429/503), returning the search as it is now
    # (pending? or success?). wait: true polls until it is done (up to poll_timeout).
    # A lookup that failed raises UnavailableError (its search_id is on the error).
    def get_search(search_id, wait: false, poll_timeout: nil, request_id: nil)
      raise ArgumentError, "search_id is required" if search_id.nil? || search_id.to_s.empty?

      deadline = deadline_for(poll_timeout)
      result = fetch_search(search_id, request_id)
      wait && result.pending? ? poll(result, deadline, request_id) : result
    end

    # --- search history ------------------------------------------------------------------------

    HISTORY_FILTERS = %i[kind since until limit cursor].freeze

    # GET /v1/searches => Response with searches (one page, newest first: {"search_id", "kind", "status"
    # ("pending"|"succeeded"|"failed"), "created_at", "completed_at", "credits_spent", "permissible_purpose",
    # "result_count"}; no inputs or results) and next_cursor (nil on the last page). Free.
    #   list_searches(kind: "person", since: "2026-11-01T00:00:00Z", limit: 50)
    #   list_searches(kind: "person", since: "2026-11-01T00:00:00Z", limit: 50, cursor: page.next_cursor)
    # kind: person, company, email or phone; since (inclusive) / until (exclusive): a Time, DateTime or Date
    # (sent as RFC 3339 in UTC, a Date as midnight UTC) or an RFC 3339 String (sent as given);
    # limit: 1..100 (server default 20); cursor: the previous page's next_cursor, with the same filters.
    def list_searches(request_id: nil, **filters)
      unknown = filters.keys - HISTORY_FILTERS
      raise ArgumentError, "unknown filter(s) #{unknown.join(', ')}; use #{HISTORY_FILTERS.join(', ')}" if unknown.any?

      query = URI.encode_www_form(filters.reject { |_, v| v.nil? }.map { |k, v| [k.to_s, filter_value(v)] })
      shaped(call(:get, query.empty? ? "/v1/searches" : "/v1/searches?#{query}", request_id: request_id), :history)
    end

    # Every search list_searches lists with these filters (no cursor:), newest first, fetching page after
    # page until next_cursor is nil. With a block, yields each search Hash; without, returns an Enumerator.
    def each_search(**filters, &block)
      return enum_for(:each_search, **filters) unless block
      raise ArgumentError, "each_search follows the cursors itself; give no cursor:" if filters.key?(:cursor)

      cursor = nil
      loop do
        page = list_searches(**filters, cursor: cursor)
        (page.searches || []).each(&block)
        cursor = page.next_cursor
        break if cursor.nil?
      end
      nil
    end

    # --- batches -------------------------------------------------------------------------------

    # POST /v1/batch: up to 100 lookups in one call, each charged (or refused) on its own.
    #
    #   batch = client.batch([
    #     { kind: "phone", input: { phone: "+14155552671" } },
    #     { kind: "email", input: { email: "grace@example.com" } },
    #   ])
    #   batch.items.each do |item|
    #     if item.success? then item.results
    #     elsif item.error? then item.error # a Dossier::APIError (not raised), e.g. ValidationError
    #     end
    #   end
    #
    # requests: Array of {kind: "person"|"company"|"email"|"phone", input: {…that endpoint's body…}}.
    # idempotency_key: for the whole batch (a UUID v4 is generated when omitted, so a retry never charges twice).
    # wait: true (default) polls GET /v1/batches/{id} until every item is settled; false sends
    # Prefer: respond-async and returns the pending batch at once. poll_timeout as for lookups.
    # A batch-level error (not 1..100 requests) raises ValidationError; an item's error does not raise.
    def batch(requests, idempotency_key: nil, wait: true, poll_timeout: nil, request_id: nil)
      raise ArgumentError, "requests must be an Array of {kind:, input:} Hashes" unless requests.is_a?(Array)

      body = { "requests" => requests.map { |r| batch_request(r) } }
      deadline = deadline_for(poll_timeout)
      headers = post_headers(idempotency_key, wait, poll_timeout)
      result = batch_result(call(:post, "/v1/batch", body: body, headers: headers, retry_sent: true,
                                                   request_id: request_id), headers["Idempotency-Key"])
      wait && result.pending? ? poll(result, deadline, request_id) : result
    end

    # GET /v1/batches/{id}: the batch as it is now; wait: true polls until every item is settled.
    def get_batch(batch_id, wait: false, poll_timeout: nil, request_id: nil)
      raise ArgumentError, "batch_id is required" if batch_id.nil? || batch_id.to_s.empty?

      deadline = deadline_for(poll_timeout)
      result = fetch_batch(batch_id, request_id)
      wait && result.pending? ? poll(result, deadline, request_id) : result
    end

    # --- webhooks ------------------------------------------------------------------------------

    # POST /v1/webhooks => Response with webhook ({"id", "url", "events", "created_at"}) and secret
    # (whsec_…, shown only here: keep it to check deliveries with Dossier::Webhook.verify).
    # events: e.g. ["search.completed"]; omitted, every event is sent.
    def create_webhook(url, events: nil, request_id: nil)
      raise ArgumentError, "url is required" if url.nil? || url.to_s.empty?

      shaped(call(:post, "/v1/webhooks", body: compact(url: url, events: events&.map(&:to_s)), request_id: request_id),
             :webhook_created)
    end

    # GET /v1/webhooks => Response with webhooks (oldest first, without secrets)
    def list_webhooks(request_id: nil)
      shaped(call(:get, "/v1/webhooks", request_id: request_id), :webhook_list)
    end

    # DELETE /v1/webhooks/{id} => Response with the deleted webhook
    def delete_webhook(webhook_id, request_id: nil)
      path = "/v1/webhooks/#{escape(required_id(:webhook_id, webhook_id))}"
      shaped(call(:delete, path, request_id: request_id, gone_on_retry: { "status" => "success", "webhook" => nil }),
             :webhook_deleted)
    end

    # GET /v1/webhooks/{id}/deliveries => Response with deliveries, newest first (at most 100):
    # {"event_id", "type", "attempt", "outcome" ("delivered"|"retrying"|"failed"), "status_code",
    #  "error", "duration_ms", "attempted_at"}
    def webhook_deliveries(webhook_id, request_id: nil)
      shaped(call(:get, "/v1/webhooks/#{escape(required_id(:webhook_id, webhook_id))}/deliveries",
                  request_id: request_id), :deliveries)
    end

    # --- account and keys ----------------------------------------------------------------------

    # GET /v1/account => Response with account and credits_remaining
    def account(request_id: nil)
      shaped(call(:get, "/v1/account", request_id: request_id), :account)
    end

    # POST /v1/auth/keys => Response with api_key (shown once) and key_id.
    # mode: "live" or "test": a dsk_test_… key whose lookups are free and answer from the synthetic
    # data set. The default is the calling key's mode: a test key makes only test keys.
    def create_key(name: nil, mode: nil, request_id: nil)
      shaped(call(:post, "/v1/auth/keys", body: compact(name: name, mode: mode), request_id: request_id), :key_issued)
    end

    # GET /v1/auth/keys => Response with keys (each with its mode, "live" or "test")
    def list_keys(request_id: nil)
      shaped(call(:get, "/v1/auth/keys", request_id: request_id), :key_list)
    end

    # DELETE /v1/auth/keys/{id} => Response with the revoked key
    def revoke_key(key_id, request_id: nil)
      raise ArgumentError, "key_id is required" if key_id.nil? || key_id.to_s.empty?

      shaped(call(:delete, "/v1/auth/keys/#{escape(key_id)}", request_id: request_id,
                                                              gone_on_retry: { "status" => "success", "key" => nil }),
             :key_revoked)
    end

    def inspect
      "#<#{self.class.name} base_url=#{base_url.inspect} api_key=\"#{@api_key[0, 8]}…\">"
    end

    private

    attr_reader :transport

    def shaped(reply, kind)
      self.class.send(:shaped, reply, kind)
    end

    def call(method, path, body: nil, headers: {}, retry_sent: method != :post, request_id: nil, gone_on_retry: nil)
      headers = { "Authorization" => "Bearer #{@api_key}" }.merge(headers, self.class.request_id_header(request_id))
      Transport.check(transport.request(method, path, body: body, headers: headers, retry_sent: retry_sent,
                                                      gone_on_retry: gone_on_retry))
    end

    def lookup(path, fields, permissible_purpose:, idempotency_key:, wait:, poll_timeout:, request_id:)
      body = compact(**fields, permissible_purpose: permissible_purpose)
      deadline = deadline_for(poll_timeout)
      # The Idempotency-Key makes a repeated POST replay the same search: safe to retry.
      headers = post_headers(idempotency_key, wait, poll_timeout)
      result = search_result(call(:post, path, body: body, headers: headers, retry_sent: true,
                                             request_id: request_id), headers["Idempotency-Key"])
      wait && result.pending? ? poll(result, deadline, request_id) : result
    end

    # Idempotency-Key (generated when not given) and Prefer for a lookup or batch POST.
    def post_headers(idempotency_key, wait, poll_timeout)
      key = idempotency_key&.to_s
      if key && !key.match?(IDEMPOTENCY_KEY)
        # Refused before sending: the gateway would refuse it too, and a CR/LF must never reach a header.
        raise ArgumentError, "idempotency_key must be 1–255 printable ASCII characters (no spaces or control characters)"
      end

      headers = { "Idempotency-Key" => key || SecureRandom.uuid }
      prefer = wait ? prefer_wait(poll_timeout || @poll_timeout) : "respond-async"
      headers["Prefer"] = prefer if prefer
      headers
    end

    # The main field of a lookup, given positionally or as a keyword (not both).
    def main_value(name, positional, keyword, required: false)
      unless positional.nil? || keyword.nil?
        raise ArgumentError, "#{name} given both positionally and as #{name}:; pass it once"
      end

      value = positional.nil? ? keyword : positional
      raise ArgumentError, "#{name} is required" if required && value.nil?

      value
    end

    def required_id(name, value)
      raise ArgumentError, "#{name} is required" if value.nil? || value.to_s.empty?

      value
    end

    # {kind:, input:} with String or Symbol keys => {"kind" => "…", "input" => {…}} (input keys as Strings,
    # nil fields dropped like a lookup's).
    def batch_request(request)
      raise ArgumentError, "each batch request must be a Hash with kind: and input:" unless request.is_a?(Hash)

      kind = request[:kind] || request["kind"]
      input = request[:input] || request["input"]
      { "kind" => kind.is_a?(Symbol) ? kind.to_s : kind,
        "input" => input.is_a?(Hash) ? compact(**input.transform_keys(&:to_sym)) : input }
    end

    # idempotency_key: the key of the POST this polls (kept on the result), nil for get_search / get_batch.
    def fetch_search(search_id, request_id, idempotency_key = nil)
      search_result(call(:get, "/v1/searches/#{escape(search_id)}", request_id: request_id), idempotency_key)
    end

    def fetch_batch(batch_id, request_id, idempotency_key = nil)
      batch_result(call(:get, "/v1/batches/#{escape(batch_id)}", request_id: request_id), idempotency_key)
    end

    # A lookup's or get_search's answer. One that is not the envelope (status "success" with its results Array, or
    # "pending"; a search_id; credits_remaining) raises APIError (code nil), as in the other three clients: a
    # broken answer is never shown as a search that found nothing.
    def search_result(reply, idempotency_key)
      data = reply.data
      settled = data["status"] == "success" && data["results"].is_a?(Array)
      unless (settled || data["status"] == "pending") && names_it_and_the_balance?(data, "search_id")
        raise Transport.not_a(reply, "search envelope (status, search_id, credits_remaining and, once done, results)")
      end

      SearchResult.new(reply, idempotency_key: idempotency_key)
    end

    # A batch's answer; one that is not the envelope (status, batch_id, items, credits_remaining) raises APIError.
    def batch_result(reply, idempotency_key)
      data = reply.data
      settles = %w[success pending].include?(data["status"]) && data["items"].is_a?(Array)
      unless settles && names_it_and_the_balance?(data, "batch_id")
        raise Transport.not_a(reply, "batch envelope (status, batch_id, items, credits_remaining)")
      end

      BatchResult.new(reply, idempotency_key: idempotency_key)
    end

    # Whether a search's or a batch's answer names it (a non-empty id_field) and the balance (an Integer).
    def names_it_and_the_balance?(data, id_field)
      data[id_field].is_a?(String) && !data[id_field].empty? && data["credits_remaining"].is_a?(Integer)
    end

    # How long the gateway may hold a lookup before its 202, as the Python, JavaScript and PHP clients
    # reckon it: its default of 10 s, less when the poll budget is shorter (the call ends within it) or the
    # HTTP timeout is (2 s under it, so no attempt times out while the gateway still waits). nil (no Prefer
    # header) when that is the default anyway. budget: the call's poll_timeout (nil: no deadline).
    def prefer_wait(budget)
      limits = [SERVER_DEFAULT_WAIT]
      limits << budget.floor if budget
      limits << timeout.floor - 2 if timeout
      seconds = [limits.min, 0].max
      seconds < SERVER_DEFAULT_WAIT ? "wait=#{seconds}" : nil
    end

    # The monotonic time a call given poll_timeout (else the client's) must end by, counted from now, the
    # start of the call (its first request included), as in the other clients; nil: no deadline.
    def deadline_for(poll_timeout)
      budget = poll_timeout || @poll_timeout
      budget && transport.now + budget
    end

    # Polls a pending SearchResult (GET /v1/searches/{id}) or BatchResult (GET /v1/batches/{id}) until it is
    # settled, waiting Retry-After (or poll_interval when it has none or an unreadable one) between polls, at
    # most Transport::MAX_RETRY_AFTER (60 s) and never past the deadline, as in the other three clients;
    # PollTimeoutError past the deadline. Every poll carries the call's request_id.
    def poll(pending, deadline, request_id)
      current = pending
      while current.pending?
        delay = [current.retry_after || @poll_interval, Transport::MAX_RETRY_AFTER].min
        if deadline
          remaining = deadline - transport.now
          raise PollTimeoutError.new(nil, result: current) if remaining <= 0

          delay = [delay, remaining].min
        end
        transport.pause(delay)
        current = if current.is_a?(BatchResult)
                    fetch_batch(current.batch_id, request_id, current.idempotency_key)
                  else
                    fetch_search(current.search_id, request_id, current.idempotency_key)
                  end
      end
      current
    end

    # A history filter as sent: a Time or DateTime as RFC 3339 in UTC, its fraction of a second (to the
    # microsecond, trailing zeros dropped) only when it has one, a Date as midnight UTC of that day; anything
    # else as its String. As in the Python, JavaScript and PHP clients.
    def filter_value(value)
      time = case value
             when Time then value
             when DateTime then value.to_time # before Date: a DateTime is a Date
             when Date then Time.utc(value.year, value.month, value.day)
             end
      return value.to_s unless time

      time.utc.iso8601(6).sub(/\.?0+Z\z/, "Z")
    end

    def compact(**fields)
      fields.each_with_object({}) do |(k, v), out|
        out[k.to_s] = v.is_a?(Symbol) ? v.to_s : v unless v.nil?
      end
    end

    def escape(segment)
      segment.to_s.b.gsub(/[^A-Za-z0-9_.~-]/) { |c| format("%%%02X", c.ord) }
    end
  end
end
