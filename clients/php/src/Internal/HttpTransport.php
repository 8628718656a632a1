<?php

declare(strict_types=1);

namespace Dossier\Internal;

use Dossier\Client;
use Dossier\Exception\ApiConnectionException;
use Dossier\Exception\ApiException;
use Dossier\Exception\InvalidArgumentException;

/**
 * @internal sends one API call over cURL, with retries; not part of the public API
 *
 * Retry policy (attempts = 1 + maxRetries):
 *  - 429 and 503 answers are retried, after Retry-After when the server sent it, otherwise after
 *    an exponential backoff with full jitter: random(0, min(retryMaxDelay, retryBaseDelay * 2^n)).
 *    A Retry-After over MAX_RETRY_AFTER seconds is not waited out: the error is thrown at once.
 *    Exception: a GET answering 503 for a search that failed (the body carries search_id) is
 *    final, since asking again gives the same answer.
 *  - A 408 (request_timeout: the request did not arrive in time, the gateway's or a proxy's) is
 *    retried the same way when the request is safe to repeat (GET, DELETE, or a POST carrying an
 *    Idempotency-Key); a POST without one is not repeated, as after a connection failure. So are a 502
 *    and a 504 (a load balancer's or proxy's answer while a gateway restarts).
 *  - Connection failures are retried with the same backoff when the request never reached the
 *    server (could not resolve / connect), or when the request is safe to repeat (GET, DELETE,
 *    or a POST carrying an Idempotency-Key). A POST without one (register, login, createKey)
 *    that timed out mid-flight is not repeated. A TLS certificate error (CERTIFICATE_ERRORS) is
 *    never retried.
 */
final class HttpTransport
{
    /** The longest Retry-After (seconds) slept through before a retry; a longer one ends the retries. */
    public const MAX_RETRY_AFTER = 60;

    /**
     * Retried only when the request is safe to repeat, as a connection that failed after sending is: 408 (the request
     * did not arrive in time), 502 and 504 (a load balancer's while a gateway restarts: the request may have been
     * acted on). As in the other clients.
     */
    private const RETRY_IF_SAFE_STATUSES = [408, 502, 504];

    private const CONNECT_ERRORS = [
        5, // CURLE_COULDNT_RESOLVE_PROXY
        6, // CURLE_COULDNT_RESOLVE_HOST
        7, // CURLE_COULDNT_CONNECT
    ];

    /**
     * A certificate the client does not trust, or cannot use: not transient (asking again meets the same
     * certificate), so never retried, as in the other clients.
     */
    private const CERTIFICATE_ERRORS = [
        51, // CURLE_PEER_FAILED_VERIFICATION before libcurl 7.62
        58, // CURLE_SSL_CERTPROBLEM
        60, // CURLE_PEER_FAILED_VERIFICATION (CURLE_SSL_CACERT)
        77, // CURLE_SSL_CACERT_BADFILE
        82, // CURLE_SSL_CRL_BADFILE
        83, // CURLE_SSL_ISSUER_ERROR
        90, // CURLE_SSL_PINNEDPUBKEYNOTMATCH
        91, // CURLE_SSL_INVALIDCERTSTATUS
    ];

    /** @var \CurlHandle|null reused between calls so keep-alive connections are reused */
    private ?\CurlHandle $handle = null;

    /**
     * The API key, wrapped so that no dump shows it: var_export(), var_dump(), print_r(), debug_zval_dump()
     * and an (array) cast show an empty SensitiveParameterValue, and serialize() refuses it.
     */
    private readonly ?\SensitiveParameterValue $apiKey;

    /** @var \Closure(float): void the sleep between attempts and between polls; tests stand in their own */
    public \Closure $sleeper;

    /** @var \Closure(): float the monotonic time in seconds that poll deadlines are counted with; tests stand in their own */
    public \Closure $clock;

    public function __construct(
        private readonly string $baseUrl,
        #[\SensitiveParameter] ?string $apiKey,
        private readonly float $timeout,
        private readonly int $maxRetries,
        private readonly float $retryBaseDelay,
        private readonly float $retryMaxDelay,
    ) {
        $this->apiKey = $apiKey === null ? null : new \SensitiveParameterValue($apiKey);
        $this->sleeper = static function (float $seconds): void {
            if ($seconds > 0) {
                usleep((int) round($seconds * 1_000_000));
            }
        };
        $this->clock = static fn (): float => hrtime(true) / 1e9;
    }

    /**
     * @param array<string, mixed>|null $body JSON object to send; null for no body
     * @param array<string, string> $headers extra request headers
     * @param array<string, mixed>|null $goneOnRetry for a DELETE: the body returned (with the 404) when a retry gets
     *        404, because the attempt whose answer was lost had deleted it; a 404 on the first attempt is thrown
     * @return array{int, array<string, string>, array<string, mixed>, string} status, headers, decoded body, raw body
     *
     * @throws ApiException for any status >= 400 left after retries
     * @throws ApiConnectionException when no answer could be had
     */
    public function request(string $method, string $path, ?array $body = null, array $headers = [], ?array $goneOnRetry = null): array
    {
        $repeatable = $method === 'GET' || $method === 'DELETE' || isset($headers['Idempotency-Key']);
        $payload = $body === null ? null : self::encode($body);
        $attempt = 0;
        while (true) {
            $answer = $this->send($method, $path, $payload, $headers);
            if (isset($answer['error'])) {
                [$errno, $message, $neverSent] = $answer['error'];
                $transient = !in_array($errno, self::CERTIFICATE_ERRORS, true);
                if ($attempt < $this->maxRetries && $transient && ($neverSent || $repeatable)) {
                    $this->sleep($this->backoff($attempt));
                    $attempt++;
                    continue;
                }
                throw new ApiConnectionException(
                    sprintf('could not reach the Dossier API at %s (%s) after %d attempt(s)', $this->baseUrl, $message, $attempt + 1),
                    $attempt + 1,
                    $errno,
                );
            }

            [$status, $respHeaders, $raw] = $answer['response'];
            if ($attempt > 0 && $status === 404 && $goneOnRetry !== null) {
                return [$status, $respHeaders, $goneOnRetry, $raw];
            }
            if ($status < 200 || $status >= 300) { // a 3xx too: redirects are not followed (CURLOPT_FOLLOWLOCATION)
                $retryAfter = Headers::retryAfter($respHeaders);
                // A longer wait than we are willing to sleep: the error (with its Retry-After) is thrown at once.
                $waitable = $retryAfter === null || $retryAfter <= self::MAX_RETRY_AFTER;
                if ($attempt < $this->maxRetries && $waitable && $this->retryableStatus($method, $status, $raw, $repeatable)) {
                    $this->sleep($retryAfter ?? $this->backoff($attempt));
                    $attempt++;
                    continue;
                }
                throw ApiException::fromResponse($status, $respHeaders, $raw);
            }

            // Every answer of the API is a JSON object; anything else (a proxy's page, an empty body, a list)
            // is an error, as in the other clients.
            $decoded = Json::object($raw);
            if ($decoded === null) {
                throw ApiException::notA('JSON object', $status, $respHeaders, null, $raw);
            }

            return [$status, $respHeaders, $decoded, $raw];
        }
    }

    /** @return array<string, mixed> what var_dump() and print_r() show: the API key shortened (dsk_live…) */
    public function __debugInfo(): array
    {
        return [
            'baseUrl' => $this->baseUrl,
            'apiKey' => $this->apiKey === null ? null : Redact::apiKey($this->apiKey->getValue()),
            'timeout' => $this->timeout,
            'maxRetries' => $this->maxRetries,
            'retryBaseDelay' => $this->retryBaseDelay,
            'retryMaxDelay' => $this->retryMaxDelay,
        ];
    }

    /**
     * The wait before the next poll of a pending answer: its Retry-After (1 s from the gateway), else
     * $pollInterval when it has none or an unreadable one; at most MAX_RETRY_AFTER (the longest wait a retry
     * sleeps) and never past the deadline ($remaining seconds away). As in the Python, JavaScript and Ruby
     * clients.
     *
     * @param array<string, string> $headers the pending answer's, names lower-cased
     */
    public static function pollDelay(array $headers, float $pollInterval, float $remaining): float
    {
        return min(Headers::retryAfter($headers) ?? $pollInterval, (float) self::MAX_RETRY_AFTER, $remaining);
    }

    /** Full-jitter exponential backoff for retry number $attempt (0-based), in seconds. */
    public function backoff(int $attempt): float
    {
        $ceiling = min($this->retryMaxDelay, $this->retryBaseDelay * (2 ** $attempt));

        return $ceiling * (mt_rand() / mt_getrandmax());
    }

    public function sleep(float $seconds): void
    {
        ($this->sleeper)($seconds);
    }

    /** Now, in seconds, on the clock poll deadlines are counted with. */
    public function now(): float
    {
        return ($this->clock)();
    }

    private function retryableStatus(string $method, int $status, string $raw, bool $repeatable): bool
    {
        if ($status === 429) {
            return true;
        }
        if (in_array($status, self::RETRY_IF_SAFE_STATUSES, true)) {
            return $repeatable;
        }
        if ($status !== 503) {
            return false;
        }
        if ($method === 'GET') {
            $body = json_decode($raw, true);
            if (is_array($body) && isset($body['search_id'])) {
                return false; // the search itself failed; polling again returns the same
            }
        }

        return true;
    }

    /**
     * A request body as sent: a JSON object ({} for an empty one). What json_encode() cannot write (a string that
     * is not UTF-8, INF or NAN) is the client's InvalidArgumentException, before anything is sent.
     *
     * @param array<string, mixed> $body
     */
    private static function encode(array $body): string
    {
        if ($body === []) {
            return '{}';
        }
        try {
            return json_encode($body, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
        } catch (\JsonException $e) {
            $what = $e->getCode() === JSON_ERROR_INF_OR_NAN
                ? 'every number must be finite (no INF or NAN)'
                : 'every string must be valid UTF-8';
            throw new InvalidArgumentException(
                sprintf('the request cannot be sent as JSON (%s): %s', $e->getMessage(), $what),
                0,
                $e,
            );
        }
    }

    /**
     * @param string|null $payload the JSON body; null for no body
     * @param array<string, string> $headers
     * @return array{response: array{int, array<string, string>, string}}|array{error: array{int, string, bool}}
     */
    private function send(string $method, string $path, ?string $payload, array $headers): array
    {
        $this->handle ??= curl_init();
        $ch = $this->handle;
        curl_reset($ch);

        $lines = [
            'Accept: application/json',
            'User-Agent: ' . Client::USER_AGENT,
            'Expect:',
        ];
        if ($this->apiKey !== null) {
            $lines[] = 'Authorization: Bearer ' . $this->apiKey->getValue();
        }
        foreach ($headers as $name => $value) {
            $lines[] = $name . ': ' . $value;
        }
        foreach ($lines as $line) {
            // cURL sends each line as given: a CR or LF in one would add headers of its own.
            if (strpbrk($line, "\r\n\0") !== false) {
                throw new InvalidArgumentException(sprintf('a request header may not contain CR, LF or NUL (%s)', strstr($line, ':', true)));
            }
        }

        $received = [];
        $timeoutMs = max(1, (int) round($this->timeout * 1000));
        $options = [
            CURLOPT_URL => $this->baseUrl . $path,
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_NOSIGNAL => true,
            CURLOPT_TIMEOUT_MS => $timeoutMs,
            CURLOPT_CONNECTTIMEOUT_MS => $timeoutMs,
            CURLOPT_PROTOCOLS => CURLPROTO_HTTP | CURLPROTO_HTTPS,
            CURLOPT_HEADERFUNCTION => static function ($ch, string $line) use (&$received): int {
                $trimmed = trim($line);
                if (str_starts_with($trimmed, 'HTTP/')) {
                    $received = []; // a new response (after a 1xx): start over
                } elseif ($trimmed !== '' && str_contains($trimmed, ':')) {
                    [$name, $value] = explode(':', $trimmed, 2);
                    $name = strtolower(trim($name));
                    // A field on several lines is one comma-separated list (RFC 9110 section 5.3), as in the other clients.
                    $received[$name] = isset($received[$name]) ? $received[$name] . ', ' . trim($value) : trim($value);
                }

                return strlen($line);
            },
        ];
        if ($payload !== null) {
            $lines[] = 'Content-Type: application/json';
            $options[CURLOPT_POSTFIELDS] = $payload;
        }
        $options[CURLOPT_HTTPHEADER] = $lines;
        curl_setopt_array($ch, $options);

        $raw = curl_exec($ch);
        $errno = curl_errno($ch);
        if ($raw === false || $errno !== 0) {
            $neverSent = in_array($errno, self::CONNECT_ERRORS, true)
                || ($errno === 28 && (float) curl_getinfo($ch, CURLINFO_PRETRANSFER_TIME) === 0.0);

            return ['error' => [$errno, curl_error($ch) ?: ('cURL error ' . $errno), $neverSent]];
        }

        return ['response' => [(int) curl_getinfo($ch, CURLINFO_RESPONSE_CODE), $received, (string) $raw]];
    }
}
