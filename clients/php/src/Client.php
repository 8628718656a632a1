<?php

declare(strict_types=1);

namespace Dossier;

use Dossier\Exception\ApiException;
use Dossier\Exception\InvalidArgumentException;
use Dossier\Exception\LogicException;
use Dossier\Exception\PollTimeoutException;
use Dossier\Internal\HttpTransport;
use Dossier\Internal\Redact;

/**
 * Client for the Dossier v1 HTTP API.
 *
 *     $client = new Dossier\Client('dsk_…');
 *     $result = $client->search(name: 'Gonzalo Halvorson');
 *     foreach ($result->results as $person) { … }
 *
 * Every method throws a Dossier\Exception\ApiException subclass for an error answer and
 * Dossier\Exception\ApiConnectionException when the server cannot be reached.
 */
final class Client
{
    public const VERSION = '0.1.0';
    public const USER_AGENT = 'dossier-php/' . self::VERSION;
    public const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';
    /** Where the server is when no baseUrl is given, as the Stripe and OpenAI SDKs read their settings. */
    public const ENV_BASE_URL = 'DOSSIER_BASE_URL';

    /** What the gateway waits by default before answering 202 (Prefer: wait=N lowers it). */
    private const SERVER_WAIT = 10;
    /** What the gateway accepts as an Idempotency-Key (API.md): 1–255 visible ASCII characters (no spaces). */
    private const IDEMPOTENCY_KEY = '/^[\x21-\x7E]{1,255}$/D';
    /**
     * What the gateway echoes as the answer's X-Request-Id (API.md): 1–128 of these characters. It replaces anything
     * else with an id of its own, so the client refuses it rather than send an id the caller would never see again.
     */
    private const REQUEST_ID = '#^[A-Za-z0-9._~:@+=/-]{1,128}$#D';

    public readonly string $baseUrl;
    private readonly HttpTransport $http;
    /** The API key shortened for var_dump() and print_r() (dsk_live…). */
    private readonly string $apiKeyHint;

    /**
     * @param string|null $apiKey "dsk_…"; defaults to the DOSSIER_API_KEY environment variable (also when blank);
     *        surrounding whitespace is removed, a control character inside is an InvalidArgumentException
     * @param string|null $baseUrl defaults to the DOSSIER_BASE_URL environment variable (also when blank), else
     *        http://127.0.0.1:3000
     * @param float $timeout seconds one HTTP attempt may take as a whole, from connecting to the complete answer read
     * @param int $maxRetries retries after the first attempt on 429, 503, connection failures and (when safe to repeat) 408, 502 and 504
     * @param float $pollTimeout seconds a lookup may take, 202 polling included, before PollTimeoutException
     * @param float $pollInterval seconds between polls when a 202 carries no (readable) Retry-After; a poll waits
     *        the Retry-After otherwise, at most 60 s, and never past the deadline
     * @param float $retryBaseDelay backoff base in seconds: retry n waits random(0, min(max, base * 2^n))
     * @param float $retryMaxDelay backoff cap in seconds
     */
    public function __construct(
        #[\SensitiveParameter] ?string $apiKey = null,
        ?string $baseUrl = null,
        private readonly float $timeout = 30.0,
        int $maxRetries = 2,
        private readonly float $pollTimeout = 60.0,
        private readonly float $pollInterval = 1.0,
        float $retryBaseDelay = 0.5,
        float $retryMaxDelay = 8.0,
    ) {
        // Trimmed (a key read from a file keeps its line break); a blank key is no key. As in the other clients.
        $apiKey = trim($apiKey ?? '');
        if ($apiKey === '') {
            $env = getenv('DOSSIER_API_KEY');
            $apiKey = is_string($env) ? trim($env) : '';
        }
        if ($apiKey === '') {
            throw new InvalidArgumentException(
                'No API key: pass one to new Dossier\Client(\'dsk_…\') or set the DOSSIER_API_KEY environment variable',
            );
        }
        if (preg_match('/[\x00-\x1f\x7f]/', $apiKey)) {
            throw new InvalidArgumentException('the API key contains a control character (a line break or a tab?); it cannot be sent');
        }
        self::checkOptions($timeout, $maxRetries, $retryBaseDelay, $retryMaxDelay);
        $this->baseUrl = self::normalizeBaseUrl($baseUrl);
        $this->http = new HttpTransport($this->baseUrl, $apiKey, $timeout, $maxRetries, $retryBaseDelay, $retryMaxDelay);
        $this->apiKeyHint = Redact::apiKey($apiKey);
    }

    /** @return array<string, mixed> what var_dump() and print_r() show: never the whole API key */
    public function __debugInfo(): array
    {
        return [
            'baseUrl' => $this->baseUrl,
            'apiKey' => $this->apiKeyHint,
            'timeout' => $this->timeout,
            'pollTimeout' => $this->pollTimeout,
            'pollInterval' => $this->pollInterval,
        ];
    }

    /**
     * A client is not serializable: it holds the API key, which must not end up in a cache, a session or a
     * queue. Make a new client from the key (or DOSSIER_API_KEY) where one is needed.
     *
     * @return array<never>
     * @throws LogicException always
     */
    public function __serialize(): array
    {
        throw new LogicException('a Dossier\Client holds an API key and cannot be serialized; make a new Client where it is needed');
    }

    /**
     * @param array<mixed> $data
     * @throws LogicException always (no serialized client is ever made, see __serialize())
     */
    public function __unserialize(array $data): void
    {
        throw new LogicException('a Dossier\Client cannot be unserialized; make a new Client from the API key');
    }

    // ---------------------------------------------------------------- accounts (no key needed)

    /**
     * Creates an account. The response carries the first key: $response->apiKey (shown once),
     * $response->account, $response->creditsRemaining.
     */
    public static function register(
        string $email,
        #[\SensitiveParameter] string $password,
        ?string $baseUrl = null,
        float $timeout = 30.0,
        int $maxRetries = 2,
        ?string $requestId = null,
    ): Response {
        return self::anonymous('/v1/auth/register', 'register', ['email' => $email, 'password' => $password], $baseUrl, $timeout, $maxRetries, $requestId);
    }

    /** Logs in and issues a new key: $response->apiKey, $response->keyId. */
    public static function login(
        string $email,
        #[\SensitiveParameter] string $password,
        ?string $baseUrl = null,
        float $timeout = 30.0,
        int $maxRetries = 2,
        ?string $requestId = null,
    ): Response {
        return self::anonymous('/v1/auth/login', 'keyIssued', ['email' => $email, 'password' => $password], $baseUrl, $timeout, $maxRetries, $requestId);
    }

    // ---------------------------------------------------------------- lookups

    /**
     * Searches in either of two forms:
     *  - generic: search(query: 'Gonzalo Halvorson', type: 'person', country: 'US') → POST /v1/search
     *    (type is person, company, email, phone or username);
     *  - person fields: search(name: 'Gonzalo Halvorson', location: 'South Jillville, NM') → POST /v1/search/person.
     * The two forms cannot be mixed in one call. $sites, $tags and $top choose the sites a username is checked on,
     * in either form (type "username", or a username): see searchPerson().
     *
     * Common options of every lookup:
     *  - permissiblePurpose: stored in the audit trail (e.g. "employment");
     *  - idempotencyKey: sent as Idempotency-Key (a UUID v4 is generated when omitted) and reused on retries;
     *    1–255 printable ASCII characters, else InvalidArgumentException before anything is sent;
     *  - wait: true (default) polls a 202 until the search is done; false asks the server to answer
     *    at once (Prefer: respond-async) and returns the pending result;
     *  - pollTimeout: overrides the client's poll deadline for this call;
     *  - requestId: your own id for the call, sent as X-Request-Id on every request it makes (retries and polls
     *    included) and echoed by the gateway ($result->requestId); every other method takes it too. 1–128 of
     *    A-Z a-z 0-9 . _ ~ : @ + = / -, else InvalidArgumentException before anything is sent.
     *
     * @param list<string>|null $sites
     * @param list<string>|null $tags
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
        ?string $requestId = null,
        ?array $sites = null,
        ?array $tags = null,
        ?int $top = null,
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
        $purpose = self::siteSelection($sites, $tags, $top) + self::compact(['permissible_purpose' => $permissiblePurpose]);
        if ($generic !== []) {
            return $this->lookup('/v1/search', $generic + $purpose, $idempotencyKey, $wait, $pollTimeout, $requestId);
        }

        return $this->lookup('/v1/search/person', $person + $purpose, $idempotencyKey, $wait, $pollTimeout, $requestId);
    }

    /**
     * POST /v1/search/person. At least one of name, email, phone, username is required.
     *
     * With a username, $sites (site names), $tags (categories such as "coding", country codes such as "de") and
     * $top (the N most popular) choose the sites it is checked on; without them, every site of the server's list.
     * A name or tag no site has is a ValidationException (GET /v1/username/sites lists them). The envelope's
     * $result['source_summary'] counts sources by outcome; a pending search's $result['progress'] shows the
     * accounts found so far.
     *
     * $country (ISO alpha-2, e.g. "US") keeps people known in that country or of no known country, and is the region
     * a national $phone is read in; $limit (a whole number from 1 to 100; the server's default is 25) is how many
     * items to answer at most, best first; $minScore (0 to 1) drops items whose match_score is below it. All three
     * are sent as given (a value out of range is the server's ValidationException naming it). $result->totalResults
     * says how many items passed min_score before limit cut them:
     * searchPerson('Gonzalo Halvorson', country: 'US', limit: 10, minScore: 0.5).
     *
     * @param list<string>|null $sites
     * @param list<string>|null $tags
     */
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
        ?string $requestId = null,
        ?array $sites = null,
        ?array $tags = null,
        ?int $top = null,
        ?string $country = null,
        ?int $limit = null,
        ?float $minScore = null,
    ): SearchResult {
        return $this->lookup('/v1/search/person', self::compact([
            'name' => $name, 'email' => $email, 'phone' => $phone, 'username' => $username,
            'location' => $location, 'age_range' => $ageRange,
        ]) + self::siteSelection($sites, $tags, $top) + self::compact([
            'country' => $country, 'limit' => $limit, 'min_score' => $minScore,
            'permissible_purpose' => $permissiblePurpose,
        ]), $idempotencyKey, $wait, $pollTimeout, $requestId);
    }

    /**
     * POST /v1/screen: $name screened against the sanctions lists the operator imported, alone. $type is "person"
     * (the server's default) or "company"; $birthYear (a person's) rules out entries born more than a year apart;
     * $country (ISO alpha-2) is reported in matched_on and narrows nothing. Each result is a listed entity the
     * name matches, with its watchlist_hits; charged as a person or company lookup, only with a hit.
     */
    public function screen(
        string $name,
        ?string $type = null,
        ?int $birthYear = null,
        ?string $country = null,
        ?string $permissiblePurpose = null,
        ?string $idempotencyKey = null,
        bool $wait = true,
        ?float $pollTimeout = null,
        ?string $requestId = null,
    ): SearchResult {
        return $this->lookup('/v1/screen', self::compact([
            'name' => $name, 'type' => $type, 'birth_year' => $birthYear, 'country' => $country,
            'permissible_purpose' => $permissiblePurpose,
        ]), $idempotencyKey, $wait, $pollTimeout, $requestId);
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
        ?string $requestId = null,
    ): SearchResult {
        return $this->lookup('/v1/search/company', self::compact([
            'company_name' => $companyName, 'domain' => $domain, 'registration_number' => $registrationNumber,
            'country' => $country, 'permissible_purpose' => $permissiblePurpose,
        ]), $idempotencyKey, $wait, $pollTimeout, $requestId);
    }

    /** POST /v1/verify/email: always one result describing the address. */
    public function verifyEmail(
        string $email,
        ?string $permissiblePurpose = null,
        ?string $idempotencyKey = null,
        bool $wait = true,
        ?float $pollTimeout = null,
        ?string $requestId = null,
    ): SearchResult {
        return $this->lookup('/v1/verify/email', self::compact([
            'email' => $email, 'permissible_purpose' => $permissiblePurpose,
        ]), $idempotencyKey, $wait, $pollTimeout, $requestId);
    }

    /** POST /v1/verify/phone: E.164 ("+14155552671"), or national format with $country as default region. */
    public function verifyPhone(
        string $phone,
        ?string $country = null,
        ?string $permissiblePurpose = null,
        ?string $idempotencyKey = null,
        bool $wait = true,
        ?float $pollTimeout = null,
        ?string $requestId = null,
    ): SearchResult {
        return $this->lookup('/v1/verify/phone', self::compact([
            'phone' => $phone, 'country' => $country, 'permissible_purpose' => $permissiblePurpose,
        ]), $idempotencyKey, $wait, $pollTimeout, $requestId);
    }

    /**
     * GET /v1/searches/{id}: the search as it is now (status "pending" or "success").
     * With wait: true, polls until it is done (or pollTimeout passes).
     * A search that failed throws UnavailableException.
     */
    public function getSearch(string $id, bool $wait = false, ?float $pollTimeout = null, ?string $requestId = null): SearchResult
    {
        $started = $this->http->now();
        $result = $this->fetchSearch($id, $requestId);

        return $wait ? $this->poll($result, $started, $pollTimeout, $requestId) : $result;
    }

    // ---------------------------------------------------------------- search history

    /**
     * GET /v1/searches: one page of the account's own searches, newest first, without inputs or results
     * (free). $response->searches lists [search_id, kind, status (pending|succeeded|failed), created_at,
     * completed_at, credits_spent, permissible_purpose, result_count]; $response->nextCursor is null on the
     * last page, else pass it as $cursor with the same filters (eachSearch() does that for you).
     *
     * @param string|null $kind person, company, email or phone
     * @param string|\DateTimeInterface|null $since searches created at or after it: a DateTimeInterface (sent as
     *        RFC 3339 in UTC) or an RFC 3339 string (sent as given)
     * @param string|\DateTimeInterface|null $until searches created before it, likewise
     * @param int|null $limit searches per page, 1–100 (server default 20)
     */
    public function listSearches(?string $kind = null, string|\DateTimeInterface|null $since = null, string|\DateTimeInterface|null $until = null, ?int $limit = null, ?string $cursor = null, ?string $requestId = null): Response
    {
        $query = http_build_query(array_filter(
            ['kind' => $kind, 'since' => self::instant($since), 'until' => self::instant($until), 'limit' => $limit, 'cursor' => $cursor],
            static fn (mixed $v): bool => $v !== null,
        ), '', '&', PHP_QUERY_RFC3986);

        return $this->call('GET', '/v1/searches' . ($query === '' ? '' : '?' . $query), null, $requestId, 'history');
    }

    /**
     * Every search listSearches() lists with these filters, newest first, fetching page after page until
     * next_cursor is null.
     *
     *     foreach ($client->eachSearch(kind: 'phone') as $search) { … $search['search_id'] … }
     *
     * @return \Generator<int, array<string, mixed>>
     */
    public function eachSearch(?string $kind = null, string|\DateTimeInterface|null $since = null, string|\DateTimeInterface|null $until = null, ?int $limit = null, ?string $requestId = null): \Generator
    {
        $cursor = null;
        do {
            $page = $this->listSearches($kind, $since, $until, $limit, $cursor, $requestId);
            foreach (is_array($page->data['searches'] ?? null) ? $page->data['searches'] : [] as $search) {
                yield $search;
            }
            $cursor = is_string($page->data['next_cursor'] ?? null) ? $page->data['next_cursor'] : null;
        } while ($cursor !== null);
    }

    // ---------------------------------------------------------------- batches

    /**
     * POST /v1/batch: up to 100 lookups in one call, each checked and charged on its own.
     *
     *     $batch = $client->batch([
     *         ['kind' => 'phone', 'input' => ['phone' => '+14155552671']],
     *         ['kind' => 'email', 'input' => ['email' => 'grace@example.com']],
     *     ]);
     *     foreach ($batch->items as $item) {
     *         if ($item->isSuccess()) { … $item->results … }
     *         elseif ($item->isError()) { … $item->error->getErrorCode() … }   // not thrown
     *     }
     *
     * @param list<array{kind: string, input: array<string, mixed>}> $requests kind is person, company, email
     *        or phone; input is that endpoint's body (null fields are dropped; an empty one is sent as {})
     * @param string|null $idempotencyKey for the whole batch (a UUID v4 is generated when omitted, reused on retries)
     * @param bool $wait true polls GET /v1/batches/{id} until every item is settled; false: Prefer: respond-async
     * A batch-level error (no request, more than 100) throws ValidationException; an item's error does not throw.
     */
    public function batch(array $requests, ?string $idempotencyKey = null, bool $wait = true, ?float $pollTimeout = null, ?string $requestId = null): BatchResult
    {
        $body = ['requests' => array_map(self::batchRequest(...), array_values($requests))];
        $started = $this->http->now();
        $headers = $this->postHeaders($idempotencyKey, $wait, $pollTimeout) + self::requestIdHeader($requestId);
        $result = self::batchResult($this->http->request('POST', '/v1/batch', $body, $headers), $headers['Idempotency-Key']);

        return $wait ? $this->poll($result, $started, $pollTimeout, $requestId) : $result;
    }

    /** GET /v1/batches/{id}: the batch as it is now; with wait: true, polls until every item is settled. */
    public function getBatch(string $id, bool $wait = false, ?float $pollTimeout = null, ?string $requestId = null): BatchResult
    {
        $started = $this->http->now();
        $result = $this->fetchBatch($id, $requestId);

        return $wait ? $this->poll($result, $started, $pollTimeout, $requestId) : $result;
    }

    // ---------------------------------------------------------------- webhooks

    /**
     * POST /v1/webhooks: $response->webhook (id, url, events, created_at) and $response->secret (whsec_…,
     * shown only here: keep it to check deliveries with Dossier\Webhook::verify()).
     *
     * @param list<string>|null $events e.g. ['search.completed']; null: every event
     */
    public function createWebhook(string $url, ?array $events = null, ?string $requestId = null): Response
    {
        $body = ['url' => $url];
        if ($events !== null) {
            $body['events'] = array_values($events);
        }

        return $this->call('POST', '/v1/webhooks', $body, $requestId, 'webhookCreated');
    }

    /** GET /v1/webhooks: $response->webhooks, oldest first, without their secrets. */
    public function listWebhooks(?string $requestId = null): Response
    {
        return $this->call('GET', '/v1/webhooks', null, $requestId, 'webhookList');
    }

    /** DELETE /v1/webhooks/{id}: no event is sent to it from then on. $response->webhook describes it. */
    public function deleteWebhook(string $id, ?string $requestId = null): Response
    {
        return $this->delete('/v1/webhooks/' . self::segment($id), $requestId, 'webhookDeleted', 'webhook');
    }

    /**
     * GET /v1/webhooks/{id}/deliveries: $response->deliveries, newest first (at most 100), each
     * [event_id, type, attempt, outcome (delivered|retrying|failed), status_code, error, duration_ms, attempted_at].
     */
    public function webhookDeliveries(string $id, ?string $requestId = null): Response
    {
        return $this->call('GET', '/v1/webhooks/' . self::segment($id) . '/deliveries', null, $requestId, 'deliveries');
    }

    // ---------------------------------------------------------------- account and keys

    /** GET /v1/account: $response->account (id, email, created_at) and $response->creditsRemaining. */
    public function account(?string $requestId = null): Response
    {
        return $this->call('GET', '/v1/account', null, $requestId, 'account');
    }

    /**
     * POST /v1/auth/keys: a new key for this account, $response->apiKey (shown once) and $response->keyId.
     * $mode "test" issues a dsk_test_… sandbox key (free lookups from the synthetic data set); the default is the
     * calling key's mode (a test key makes only test keys).
     */
    public function createKey(?string $name = null, ?string $mode = null, ?string $requestId = null): Response
    {
        return $this->call('POST', '/v1/auth/keys', self::compact(['name' => $name, 'mode' => $mode]), $requestId, 'keyIssued');
    }

    /** GET /v1/auth/keys: $response->keys, each [id, prefix, name, mode, created_at, last_used_at, revoked_at]. */
    public function listKeys(?string $requestId = null): Response
    {
        return $this->call('GET', '/v1/auth/keys', null, $requestId, 'keyList');
    }

    /** DELETE /v1/auth/keys/{id}: the key is refused from the next request on. $response->key describes it. */
    public function revokeKey(string $id, ?string $requestId = null): Response
    {
        return $this->delete('/v1/auth/keys/' . self::segment($id), $requestId, 'keyRevoked', 'key');
    }

    // ---------------------------------------------------------------- internals

    /**
     * @param array<string, string> $body
     */
    private function lookup(string $path, array $body, ?string $idempotencyKey, bool $wait, ?float $pollTimeout, ?string $requestId): SearchResult
    {
        $started = $this->http->now();
        $headers = $this->postHeaders($idempotencyKey, $wait, $pollTimeout) + self::requestIdHeader($requestId);
        $result = self::searchResult($this->http->request('POST', $path, $body, $headers), $headers['Idempotency-Key']);

        return $wait ? $this->poll($result, $started, $pollTimeout, $requestId) : $result;
    }

    /**
     * Idempotency-Key (generated when not given: a retried POST then never charges twice) and Prefer
     * for a lookup or a batch.
     *
     * @return array<string, string>
     */
    private function postHeaders(?string $idempotencyKey, bool $wait, ?float $pollTimeout): array
    {
        if ($idempotencyKey !== null && !preg_match(self::IDEMPOTENCY_KEY, $idempotencyKey)) {
            // Refused before sending: the gateway would refuse it too, and a CR/LF must never reach a header.
            throw new InvalidArgumentException('idempotencyKey must be 1–255 printable ASCII characters (no spaces or control characters)');
        }

        return [
            'Idempotency-Key' => $idempotencyKey ?? self::uuid4(),
            'Prefer' => $wait ? 'wait=' . $this->serverWait($pollTimeout ?? $this->pollTimeout) : 'respond-async',
        ];
    }

    /**
     * The X-Request-Id header of a call ([] without one). An id the gateway would not echo is refused before
     * anything is sent, as in the other clients.
     *
     * @return array<string, string>
     */
    private static function requestIdHeader(?string $requestId): array
    {
        if ($requestId === null) {
            return [];
        }
        if (!preg_match(self::REQUEST_ID, $requestId)) {
            throw new InvalidArgumentException('requestId must be 1–128 of the characters A-Z a-z 0-9 . _ ~ : @ + = / - (the gateway would not echo it)');
        }

        return ['X-Request-Id' => $requestId];
    }

    /**
     * @param mixed $request ['kind' => …, 'input' => […]]
     * @return array<string, mixed>
     */
    private static function batchRequest(mixed $request): array
    {
        if (!is_array($request)) {
            throw new InvalidArgumentException("each batch request must be an array ['kind' => …, 'input' => […]]");
        }
        $input = $request['input'] ?? null;
        if (is_array($input)) {
            $input = array_filter($input, static fn (mixed $v): bool => $v !== null);
            // An input is a JSON object; PHP's [] is an empty list too, which json_encode() writes as [].
            $input = $input === [] ? new \stdClass() : $input;
        }

        return ['kind' => $request['kind'] ?? null, 'input' => $input];
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

    /** $idempotencyKey: the key of the POST this polls (kept on the result); null for getSearch(). */
    private function fetchSearch(string $id, ?string $requestId, ?string $idempotencyKey = null): SearchResult
    {
        return self::searchResult($this->http->request('GET', '/v1/searches/' . self::segment($id), null, self::requestIdHeader($requestId)), $idempotencyKey);
    }

    /** $idempotencyKey: the key of the POST this polls (kept on the result); null for getBatch(). */
    private function fetchBatch(string $id, ?string $requestId, ?string $idempotencyKey = null): BatchResult
    {
        return self::batchResult($this->http->request('GET', '/v1/batches/' . self::segment($id), null, self::requestIdHeader($requestId)), $idempotencyKey);
    }

    /**
     * A lookup's or getSearch()'s answer. One that is not the envelope (status "success" with its results list,
     * or "pending"; a search_id; credits_remaining) is an ApiException with no error code, as in the other three
     * clients: a broken answer is never shown as a search that found nothing.
     *
     * @param array{int, array<string, string>, array<string, mixed>, string} $answer HttpTransport::request()'s
     * @param string|null $idempotencyKey the Idempotency-Key of the lookup or batch (null for a GET of it)
     */
    private static function searchResult(array $answer, ?string $idempotencyKey): SearchResult
    {
        [$status, $headers, $data, $raw] = $answer;
        $body = self::asObject($raw);
        $settled = ($body->status ?? null) === 'success' && is_array($body->results ?? null);
        if (!($settled || ($body->status ?? null) === 'pending') || !self::namesItAndTheBalance($body, 'search_id')) {
            throw ApiException::notA('search envelope (status, search_id, credits_remaining and, once done, results)', $status, $headers, $data, $raw);
        }

        return new SearchResult($status, $headers, $data, $raw, $idempotencyKey);
    }

    /**
     * A batch's answer; one that is not the envelope (status, batch_id, items, credits_remaining) is an ApiException.
     *
     * @param array{int, array<string, string>, array<string, mixed>, string} $answer HttpTransport::request()'s
     * @param string|null $idempotencyKey the Idempotency-Key of the lookup or batch (null for a GET of it)
     */
    private static function batchResult(array $answer, ?string $idempotencyKey): BatchResult
    {
        [$status, $headers, $data, $raw] = $answer;
        $body = self::asObject($raw);
        $settles = in_array($body->status ?? null, ['success', 'pending'], true) && is_array($body->items ?? null);
        if (!$settles || !self::namesItAndTheBalance($body, 'batch_id')) {
            throw ApiException::notA('batch envelope (status, batch_id, items, credits_remaining)', $status, $headers, $data, $raw);
        }

        return new BatchResult($status, $headers, $data, $raw, $idempotencyKey);
    }

    /** Whether a search's or a batch's answer names it (a non-empty $idField) and the balance (an integer). */
    private static function namesItAndTheBalance(\stdClass $body, string $idField): bool
    {
        return is_string($body->{$idField} ?? null) && $body->{$idField} !== '' && is_int($body->credits_remaining ?? null);
    }

    /**
     * A 2xx answer's body (a JSON object: the transport made sure) decoded as objects, so that a JSON array (a
     * PHP array here) is told from a JSON object ({} is a stdClass), which an associative array cannot do.
     */
    private static function asObject(string $raw): \stdClass
    {
        $body = json_decode($raw);

        return $body instanceof \stdClass ? $body : new \stdClass();
    }

    /**
     * Polls a pending search (GET /v1/searches/{id}) or batch (GET /v1/batches/{id}) until it is settled,
     * waiting HttpTransport::pollDelay() between polls (Retry-After, else pollInterval; at most 60 s). Every poll
     * carries the call's request id.
     *
     * @template T of SearchResult|BatchResult
     * @param T $result
     * @return T
     */
    private function poll(SearchResult|BatchResult $result, float $started, ?float $pollTimeout, ?string $requestId): SearchResult|BatchResult
    {
        $deadline = $started + ($pollTimeout ?? $this->pollTimeout);
        while ($result->isPending()) {
            // Never empty: searchResult() and batchResult() refuse an answer without its id.
            $id = (string) ($result instanceof BatchResult ? $result->batchId : $result->searchId);
            $remaining = $deadline - $this->http->now();
            if ($remaining <= 0) {
                throw new PollTimeoutException($result, $this->http->now() - $started);
            }
            $this->http->sleep(HttpTransport::pollDelay($result->headers, $this->pollInterval, $remaining));
            $result = $result instanceof BatchResult
                ? $this->fetchBatch($id, $requestId, $result->idempotencyKey)
                : $this->fetchSearch($id, $requestId, $result->idempotencyKey);
        }

        return $result;
    }

    /**
     * A call whose answer is of $kind (see shape()).
     *
     * @param array<string, mixed>|null $body
     */
    private function call(string $method, string $path, ?array $body, ?string $requestId, string $kind): Response
    {
        return self::shaped($kind, ...$this->http->request($method, $path, $body, self::requestIdHeader($requestId)));
    }

    /**
     * A DELETE whose retry gets 404 (the attempt whose answer was lost had deleted it) is a Response with status
     * success and $field null; a 404 on the first attempt is thrown.
     */
    private function delete(string $path, ?string $requestId, string $kind, string $field): Response
    {
        $gone = ['status' => 'success', $field => null];
        [$status, $headers, $data, $raw] = $this->http->request('DELETE', $path, null, self::requestIdHeader($requestId), $gone);

        return $status === 404 ? new Response($status, $headers, $data, $raw) : self::shaped($kind, $status, $headers, $data, $raw);
    }

    /** @param array<string, string> $body */
    private static function anonymous(string $path, string $kind, #[\SensitiveParameter] array $body, ?string $baseUrl, float $timeout, int $maxRetries, ?string $requestId): Response
    {
        self::checkOptions($timeout, $maxRetries, 0.5, 8.0);
        $requestHeaders = self::requestIdHeader($requestId);
        $http = new HttpTransport(self::normalizeBaseUrl($baseUrl), null, $timeout, $maxRetries, 0.5, 8.0);

        return self::shaped($kind, ...$http->request('POST', $path, $body, $requestHeaders));
    }

    /**
     * The Response of a 2xx answer of $kind; one that is not its documented shape is an ApiException with no error
     * code, as a lookup's that is not the envelope: a broken answer is never read as an account without an id or an
     * empty list.
     *
     * @param array<string, string> $headers
     * @param array<string, mixed> $data
     */
    private static function shaped(string $kind, int $status, array $headers, array $data, string $raw): Response
    {
        $body = self::asObject($raw);
        [$what, $holds] = self::shape($kind, $body);
        if (($body->status ?? null) !== 'success' || !$holds) {
            throw ApiException::notA($what, $status, $headers, $data, $raw);
        }

        return new Response($status, $headers, $data, $raw);
    }

    /**
     * The documented shape (API.md) of every other 2xx answer, beside status "success": what it is called, and
     * whether $b holds it. The same rules in the Python, JavaScript and Ruby clients.
     *
     * @return array{string, bool}
     */
    private static function shape(string $kind, \stdClass $b): array
    {
        $text = static fn (mixed $v): bool => is_string($v) && $v !== '';
        $named = static fn (mixed $v): bool => $v instanceof \stdClass && $text($v->id ?? null);
        $objects = static fn (mixed $v): bool => is_array($v) && array_filter($v, static fn (mixed $e): bool => !$e instanceof \stdClass) === [];
        $account = $named($b->account ?? null) && is_int($b->credits_remaining ?? null);

        return match ($kind) {
            'account' => ['account answer (status, account with its id, credits_remaining)', $account],
            'register' => ['registration answer (status, account with its id, api_key, credits_remaining)', $account && $text($b->api_key ?? null)],
            'keyIssued' => ['new key answer (status, api_key, key_id)', $text($b->api_key ?? null) && $text($b->key_id ?? null)],
            'keyList' => ['key list (status, keys)', $objects($b->keys ?? null)],
            'keyRevoked' => ['revoked key answer (status, key with its id)', $named($b->key ?? null)],
            'history' => [
                'search history page (status, searches, next_cursor)',
                $objects($b->searches ?? null) && (property_exists($b, 'next_cursor') && $b->next_cursor === null || $text($b->next_cursor ?? null)),
            ],
            'webhookCreated' => ['new webhook answer (status, webhook with its id, secret)', $named($b->webhook ?? null) && $text($b->secret ?? null)],
            'webhookList' => ['webhook list (status, webhooks)', $objects($b->webhooks ?? null)],
            'webhookDeleted' => ['deleted webhook answer (status, webhook with its id)', $named($b->webhook ?? null)],
            'deliveries' => ['delivery list (status, deliveries)', $objects($b->deliveries ?? null)],
        };
    }

    /**
     * Drops null values: the API rejects unknown fields and nulls, so absent options are never sent.
     *
     * @param array<string, string|int|float|null> $fields
     * @return array<string, string|int|float>
     */
    private static function compact(array $fields): array
    {
        return array_filter($fields, static fn (string|int|float|null $v): bool => $v !== null);
    }

    /**
     * Username presence's choice of sites as the body carries it: $sites and $tags as JSON arrays (their values,
     * whatever their keys), $top as given; absent ones left out.
     *
     * @param array<array-key, string>|null $sites
     * @param array<array-key, string>|null $tags
     * @return array<string, list<string>|int>
     */
    private static function siteSelection(?array $sites, ?array $tags, ?int $top): array
    {
        $chosen = [];
        if ($sites !== null) {
            $chosen['sites'] = array_values($sites);
        }
        if ($tags !== null) {
            $chosen['tags'] = array_values($tags);
        }
        if ($top !== null) {
            $chosen['top'] = $top;
        }

        return $chosen;
    }

    /**
     * A history filter as sent: a DateTimeInterface as RFC 3339 in UTC, its fraction of a second (microseconds,
     * trailing zeros dropped) only when it has one; a string as given. As in the other clients.
     */
    private static function instant(string|\DateTimeInterface|null $value): ?string
    {
        if (!$value instanceof \DateTimeInterface) {
            return $value;
        }
        $utc = \DateTimeImmutable::createFromInterface($value)->setTimezone(new \DateTimeZone('UTC'));
        $fraction = rtrim($utc->format('u'), '0');

        return $utc->format('Y-m-d\\TH:i:s') . ($fraction === '' ? '' : '.' . $fraction) . 'Z';
    }

    /**
     * An id as a path segment. An empty one (a bug in the caller) is refused before anything is sent, as in
     * the other clients, rather than answered 404 "no such route" after a round trip.
     */
    private static function segment(string $id): string
    {
        if ($id === '') {
            throw new InvalidArgumentException('an id must be a non-empty string');
        }

        return rawurlencode($id);
    }

    /** The argument, else DOSSIER_BASE_URL, else DEFAULT_BASE_URL; a blank one counts as none (as in the other clients). */
    private static function normalizeBaseUrl(?string $baseUrl): string
    {
        $given = trim($baseUrl ?? '');
        $env = $given === '' ? getenv(self::ENV_BASE_URL) : false;
        $fromEnv = is_string($env) ? trim($env) : '';
        $url = rtrim($given !== '' ? $given : ($fromEnv !== '' ? $fromEnv : self::DEFAULT_BASE_URL), '/');
        if (!preg_match('#^https?://[^/]+#i', $url)) {
            $setting = $given === '' && $fromEnv !== '' ? self::ENV_BASE_URL : 'baseUrl';
            throw new InvalidArgumentException(sprintf('%s must be an http(s) URL, got "%s"', $setting, $url));
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
