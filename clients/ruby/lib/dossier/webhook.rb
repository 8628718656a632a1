# frozen_string_literal: true

require "json"
require "openssl"

module Dossier
  # Checks the Dossier-Signature header of a webhook delivery.
  #
  #   # Rack / Rails: the body exactly as received, before any JSON parsing
  #   event = Dossier::Webhook.verify(request.body.read, request.get_header("HTTP_DOSSIER_SIGNATURE"),
  #                                   ENV["DOSSIER_WEBHOOK_SECRET"])
  #   event["type"]  # => "search.completed"
  #
  # The header is `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the secret>`
  # (the whsec_… string as is), the hex in either case. Several v1= values are accepted (any one matching is enough).
  module Webhook
    SIGNATURE_HEADER = "Dossier-Signature"
    DEFAULT_TOLERANCE = 300 # seconds between the signature's timestamp and now, either way
    NOT_GIVEN = Object.new.freeze
    private_constant :NOT_GIVEN

    module_function

    # payload:   the raw request body (String)
    # header:    the Dossier-Signature header's value
    # secret:    the webhook's whsec_… secret
    # tolerance: seconds |now - t| may reach (nil: no check); a replayed old delivery is refused.
    #            Positional, as in the other clients (verify(body, header, secret, 60)), or tolerance: 60.
    # now:       the current time (Time or Integer unix seconds), for tests
    # Returns the event (Hash: "id", "type", "created_at", "data"); raises SignatureVerificationError,
    # or ArgumentError for a tolerance given twice or not a number >= 0 (or nil).
    def verify(payload, header, secret, positional_tolerance = NOT_GIVEN, tolerance: NOT_GIVEN, now: nil)
      tolerance = verify_tolerance(positional_tolerance, tolerance)
      raise SignatureVerificationError, "no webhook secret given" if secret.nil? || secret.to_s.empty?

      timestamp, signatures = parse_header(header)
      expected = sign(secret, payload, timestamp)
      unless signatures.any? { |given| secure_compare(given, expected) }
        raise SignatureVerificationError, "no v1 signature matches the payload and secret"
      end

      now = Integer(now || Time.now)
      if tolerance && (now - timestamp).abs > tolerance
        raise SignatureVerificationError, "signature timestamp #{timestamp} is outside the #{tolerance} s tolerance"
      end

      parse_event(payload)
    end

    # The tolerance of a verify call: given positionally or as tolerance:, not both; DEFAULT_TOLERANCE if neither.
    def verify_tolerance(positional, keyword)
      unless positional.equal?(NOT_GIVEN) || keyword.equal?(NOT_GIVEN)
        raise ArgumentError, "tolerance given both positionally and as tolerance:; pass it once"
      end

      tolerance = positional.equal?(NOT_GIVEN) ? keyword : positional
      return DEFAULT_TOLERANCE if tolerance.equal?(NOT_GIVEN)
      return nil if tolerance.nil?
      unless tolerance.is_a?(Numeric) && !(tolerance.is_a?(Float) && tolerance.nan?) && tolerance >= 0
        raise ArgumentError, "tolerance must be a number of seconds >= 0 (or nil for no check), got #{tolerance.inspect}"
      end

      tolerance
    end

    # The hex HMAC-SHA256 of "<timestamp>.<payload>" keyed with secret (what the server sends as v1=).
    def sign(secret, payload, timestamp)
      OpenSSL::HMAC.hexdigest("SHA256", secret.to_s, "#{timestamp}.#{payload}")
    end

    # A whole header value for payload signed at timestamp (unix seconds), as the server builds it.
    def signature_header(secret, payload, timestamp)
      "t=#{Integer(timestamp)},v1=#{sign(secret, payload, Integer(timestamp))}"
    end

    # => [Integer timestamp, Array of v1 hex signatures]
    def parse_header(header)
      raise SignatureVerificationError, "missing #{SIGNATURE_HEADER} header" if header.nil? || header.to_s.strip.empty?

      timestamp = nil
      signatures = []
      header.to_s.split(",").each do |part|
        key, value = part.strip.split("=", 2)
        case key
        when "t" then timestamp = value
        when "v1" then signatures << value.to_s.downcase
        end
      end
      unless timestamp&.match?(/\A\d{1,12}\z/) && signatures.any? { |s| s.match?(/\A\h{64}\z/) }
        raise SignatureVerificationError, "malformed #{SIGNATURE_HEADER} header: expected t=<unix seconds>,v1=<hex>"
      end

      [Integer(timestamp, 10), signatures]
    end

    def secure_compare(given, expected)
      given.bytesize == expected.bytesize && OpenSSL.fixed_length_secure_compare(given, expected)
    end

    def parse_event(payload)
      event = JSON.parse(payload.to_s)
      raise SignatureVerificationError, "the payload is not a JSON object" unless event.is_a?(Hash)

      event
    rescue JSON::ParserError
      raise SignatureVerificationError, "the payload is not JSON"
    end
  end
end
