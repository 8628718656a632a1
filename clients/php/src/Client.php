<?php

declare(strict_types=1);

namespace Dossier;

use Dossier\Exception\ApiException;
use Dossier\Exception\InvalidArgumentException;
use Dossier\Exception\SearchTimeoutException;
use Dossier\Internal\Headers;
use Dossier\Internal\HttpTransport;

/**
 * Client for the Dossier v1 HTTP API.
 *
 *     $client = new Dossier\Client('dsk_…');
 *     $result = $client->search(name: 'John Smith');
 *     foreach ($result->results as $person) { … }
 *
 * Every method throws a Dossier\Exception\ApiException subclass for an error answer and
 * Dossier\Exception\ApiConnectionException when the server cannot be reached.
 */
final class Client
{
    public const VERSION = '0.1.0';
    public const USER_AGENT = 'dossier-php/' . self::VERSION;
    public const DEFAULT_BASE_URL = 'http://localhost:3000';

    /** What the gateway waits by default before answering 202 (Prefer: wait=N lowers it). */
    private const SERVER_WAIT = 10;

    public readonly string $baseUrl;
    private readonly HttpTransport $http;

    /**
     * @param string|null $apiKey "dsk_…"; defaults to the DOSSIER_API_KEY environment variable
     * @param string|null $baseUrl defaults to http://localhost:3000
     * @param float $timeout seconds per HTTP request (connect + answer)
     * @param int $maxRetries retries after the first attempt on 429, 503 and connection failures
     * @param float $pollTimeout seconds a lookup may take, 202 polling included, before SearchTimeoutException
     * @param float $pollInterval seconds between polls when a 202 carries no Retry-After
     * @param float $retryBaseDelay backoff base in seconds: retry n waits random(0, min(max, base * 2^n))
     * @param float $retryMaxDelay backoff cap in seconds
     */
    public function __construct(
        ?string $apiKey = null,
        ?string $baseUrl = null,
        private readonly float $timeout = 30.0,
        int $maxRetries = 2,
        private readonly float $pollTimeout = 60.0,
        private readonly float $pollInterval = 1.0,
        float $retryBaseDelay = 0.5,
        float $retryMaxDelay = 8.0,
    ) {
        if ($apiKey === null || $apiKey === '') {
            $env = getenv('DOSSIER_API_KEY');
            $apiKey = is_string($env) && $env !== '' ? $env : null;
        }
        if ($apiKey === null) {
            throw new InvalidArgumentException(
                'No API key: pass one to new Dossier\Client(\'dsk_…\') or set the DOSSIER_API_KEY environment variable',
            );
        }
        self::checkOptions($timeout, $maxRetries, $retryBaseDelay, $retryMaxDelay);
        $this->baseUrl = self::normalizeBaseUrl($baseUrl);
        $this->http = new HttpTransport($this->baseUrl, $apiKey, $timeout, $maxRetries, $retryBaseDelay, $retryMaxDelay);
    }

    // ---------------------------------------------------------------- accounts (no key needed)

    /**
     * Creates an account. The response carries the first key: $response->apiKey (shown once),
     * $response->account, $response->creditsRemaining.
     */
    public static function register(
        string $email,
        string $password,
        ?string $baseUrl = null,
        float $timeout = 30.0,
        int $maxRetries = 2,
    ): Response {
        return self::anonymous('/v1/auth/register', ['email' => $email, 'password' => $password], $baseUrl, $timeout, $maxRetries);
    }

    /** Logs in and issues a new key: $response->apiKey, $response->keyId. */
    public static function login(
        string $email,
        string $password,
        ?string $baseUrl = null,
        float $timeout = 30.0,
        int $maxRetries = 2,
    ): Response {
        return self::anonymous('/v1/auth/login', ['email' => $email, 'password' => $password], $baseUrl, $timeout, $maxRetries);
    }

    // ---------------------------------------------------------------- lookups

    /**
     * Searches in either of two forms:
     *  - generic: search(query: 'John Smith', type: 'person', country: 'US') → POST /v1/search
     *    (type is person, company, email, phone or username);
     *  - person fields: search(name: 'John Smith', location: 'Austin, TX') → POST /v1/search/person.
     * The two forms cannot be mixed in one call.
     *
     * Common options of every lookup:
     *  - permissiblePurpose: stored in the audit trail (e.g. "employment");
     *  - idempotencyKey: sent as Idempotency-Key (a UUID v4 is generated when omitted) and reused on retries;
     *  - wait: true (default) polls a 202 until the search is done; false asks the server to answer
     *    at once (Prefer: respond-async) and returns the pending result;
     *  - pollTimeout: overrides the client's poll deadline for this call.
     */
    public function search(
        ?string $query = null,
        ?string $type = null,
        ?string $country = null,
        ?string $name = null,
        ?string $email = null,
        ?string $phone = null,
        ?string $username = null,
        ?string $location = null,
        ?string $ageRange = null,
        ?string $permissiblePurpose = null,
        ?string $idempotencyKey = null,
        bool $wait = true,
        ?float $pollTimeout = null,
    ): SearchResult {
        $generic = self::compact(['query' => $query, 'type' => $type, 'country' => $country]);
        $person = self::compact([
            'name' => $name, 'email' => $email, 'phone' => $phone,
            'username' => $username, 'location' => $location, 'age_range' => $ageRange,
        ]);
        if ($generic !== [] && $person !== []) {
            throw new InvalidArgumentException(
                'search() takes either query/type/country or person fields (name, email, phone, username, location, ageRange), not both',
            );
        }
        $purpose = self::compact(['permissible_purpose' => $permissiblePurpose]);
        if ($generic !== []) {
            return $this->lookup('/v1/search', $generic + $purpose, $idempotencyKey, $wait, $pollTimeout);
        }

        return $this->lookup('/v1/search/person', $person + $purpose, $idempotencyKey, $wait, $pollTimeout);
    }

    /** POST /v1/search/person. At least one of name, email, phone, username is required. */
    public function searchPerson(
        ?string $name = null,
        ?string $email = null,
        ?string $phone = null,
        ?string $username = null,
        ?string $location = null,
        ?string $ageRange = null,
        ?string $permissiblePurpose = null,
        ?string $idempotencyKey = null,
        bool $wait = true,
        ?float $pollTimeout = null,
    ): SearchResult {
        return $this->lookup('/v1/search/person', self::compact([
            'name' => $name, 'email' => $email, 'phone' => $phone, 'username' => $username,
            'location' => $location, 'age_range' => $ageRange, 'permissible_purpose' => $permissiblePurpose,
        ]), $idempotencyKey, $wait, $pollTimeout);
    }

    /** POST /v1/search/company. At least one of companyName, domain, registrationNumber is required. */
    public function searchCompany(
        ?string $companyName = null,
        ?string $domain = null,
        ?string $registrationNumber = null,
        ?string $country = null,
        ?string $permissiblePurpose = null,
        ?string $idempotencyKey = null,
        bool $wait = true,
        ?float $pollTimeout = null,
    ): SearchResult {
        return $this->lookup('/v1/search/company', self::compact([
            'company_name' => $companyName, 'domain' => $domain, 'registration_number' => $registrationNumber,
            'country' => $country, 'permissible_purpose' => $permissiblePurpose,
        ]), $idempotencyKey, $wait, $pollTimeout);
    }

    /** POST /v1/verify/email: always one result describing the address. */
    public function verifyEmail(
        string $email,
        ?string $permissiblePurpose = null,
        ?string $idempotencyKey = null,
        bool $wait = true,
        ?float $pollTimeout = null,
    ): SearchResult {
        return $this->lookup('/v1/verify/email', self::compact([
            'email' => $email, 'permissible_purpose' => $permissiblePurpose,
        ]), $idempotencyKey, $wait, $pollTimeout);
    }

    /** POST /v1/verify/phone: E.164 ("+14155552671"), or national format with $country as default region. */
    public function verifyPhone(
        string $phone,
        ?string $country = null,
        ?string $permissiblePurpose = null,
        ?string $idempotencyKey = null,
        bool $wait = true,
        ?float $pollTimeout = null,
    ): SearchResult {
        return $this->lookup('/v1/verify/phone', self::compact([
            'phone' => $phone, 'country' => $country, 'permissible_purpose' => $permissiblePurpose,
        ]), $idempotencyKey, $wait, $pollTimeout);
    }

    /**
     * GET /v1/searches/{id}: the search as it is now (status "pending" or "success").
     * With wait: true, polls until it is done (or pollTimeout passes).
     * A search that failed throws UnavailableException.
     */
    public function getSearch(string $id, bool $wait = false, ?float $pollTimeout = null): SearchResult
    {
        $started = microtime(true);
        $result = $this->fetchSearch($id);

        return $wait ? $this->poll($result, $started, $pollTimeout) : $result;
    }

    // ---------------------------------------------------------------- account and keys

    /** GET /v1/account: $response->account (id, email, created_at) and $response->creditsRemaining. */
    public function account(): Response
    {
        return $this->call('GET', '/v1/account');
    }

    /** POST /v1/auth/keys: a new key for this account, $response->apiKey (shown once) and $response->keyId. */
    public function createKey(?string $name = null): Response
    {
        return $this->call('POST', '/v1/auth/keys', self::compact(['name' => $name]));
    }

    /** GET /v1/auth/keys: $response->keys, each [id, prefix, name, created_at, last_used_at, revoked_at]. */
    public function listKeys(): Response
    {
        return $this->call('GET', '/v1/auth/keys');
    }

    /** DELETE /v1/auth/keys/{id}: the key is refused from the next request on. $response->key describes it. */
    public function revokeKey(string $id): Response
    {
        return $this->call('DELETE', '/v1/auth/keys/' . rawurlencode($id));
    }

    // ---------------------------------------------------------------- internals

    /**
     * @param array<string, string> $body
     */
    private function lookup(string $path, array $body, ?string $idempotencyKey, bool $wait, ?float $pollTimeout): SearchResult
    {
        $started = microtime(true);
        $headers = [
            'Idempotency-Key' => $idempotencyKey ?? self::uuid4(),
            'Prefer' => $wait ? 'wait=' . $this->serverWait($pollTimeout ?? $this->pollTimeout) : 'respond-async',
        ];
        [$status, $respHeaders, $data, $raw] = $this->http->request('POST', $path, $body, $headers);
        $result = new SearchResult($status, $respHeaders, $data, $raw);

        return $wait ? $this->poll($result, $started, $pollTimeout) : $result;
    }

    /**
     * How long the gateway may hold a lookup before answering 202: its default of 10 s, less when
     * the poll deadline or the HTTP timeout is shorter (so the request never times out client-side
     * while the server is still waiting).
     */
    private function serverWait(float $budget): int
    {
        return (int) max(0, min(self::SERVER_WAIT, floor($budget), floor($this->timeout) - 2));
    }

    private function fetchSearch(string $id): SearchResult
    {
        [$status, $headers, $data, $raw] = $this->http->request('GET', '/v1/searches/' . rawurlencode($id));

        return new SearchResult($status, $headers, $data, $raw);
    }

    /** Polls GET /v1/searches/{id} while the result is pending, honouring Retry-After. */
    private function poll(SearchResult $result, float $started, ?float $pollTimeout): SearchResult
    {
        $deadline = $started + ($pollTimeout ?? $this->pollTimeout);
        while ($result->isPending()) {
            if ($result->searchId === null) {
                throw new ApiException('a pending answer without search_id cannot be polled', $result->httpStatus, null, $result->requestId, [], $result->data, $result->rawBody, $result->headers);
            }
            $remaining = $deadline - microtime(true);
            if ($remaining <= 0) {
                throw new SearchTimeoutException($result, microtime(true) - $started);
            }
            $this->http->sleep(min(Headers::retryAfter($result->headers) ?? $this->pollInterval, $remaining));
            $result = $this->fetchSearch($result->searchId);
        }

        return $result;
    }

    /** @param array<string, mixed>|null $body */
    private function call(string $method, string $path, ?array $body = null): Response
    {
        [$status, $headers, $data, $raw] = $this->http->request($method, $path, $body);

        return new Response($status, $headers, $data, $raw);
    }

    /** @param array<string, string> $body */
    private static function anonymous(string $path, array $body, ?string $baseUrl, float $timeout, int $maxRetries): Response
    {
        self::checkOptions($timeout, $maxRetries, 0.5, 8.0);
        $http = new HttpTransport(self::normalizeBaseUrl($baseUrl), null, $timeout, $maxRetries, 0.5, 8.0);
        [$status, $headers, $data, $raw] = $http->request('POST', $path, $body);

        return new Response($status, $headers, $data, $raw);
    }

    /**
     * Drops null values: the API rejects unknown fields and nulls, so absent options are never sent.
     *
     * @param array<string, string|null> $fields
     * @return array<string, string>
     */
    private static function compact(array $fields): array
    {
        return array_filter($fields, static fn (?string $v): bool => $v !== null);
    }

    private static function normalizeBaseUrl(?string $baseUrl): string
    {
        $url = rtrim($baseUrl ?? self::DEFAULT_BASE_URL, '/');
        if (!preg_match('#^https?://[^/]+#i', $url)) {
            throw new InvalidArgumentException(sprintf('baseUrl must be an http(s) URL, got "%s"', $url));
        }

        return $url;
    }

    private static function checkOptions(float $timeout, int $maxRetries, float $base, float $max): void
    {
        if ($timeout <= 0) {
            throw new InvalidArgumentException('timeout must be greater than 0');
        }
        if ($maxRetries < 0) {
            throw new InvalidArgumentException('maxRetries must be 0 or more');
        }
        if ($base < 0 || $max < 0) {
            throw new InvalidArgumentException('retryBaseDelay and retryMaxDelay must be 0 or more');
        }
    }

    private static function uuid4(): string
    {
        $b = random_bytes(16);
        $b[6] = chr((ord($b[6]) & 0x0f) | 0x40);
        $b[8] = chr((ord($b[8]) & 0x3f) | 0x80);

        return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($b), 4));
    }
}
