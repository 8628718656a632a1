<?php

declare(strict_types=1);

namespace Dossier\Exception;

use Dossier\Internal\Headers;

/**
 * The server answered with an error (HTTP status >= 400). Subclasses name the common cases;
 * anything else (405, 413, 415, 500, an unexpected status) is an ApiException itself.
 *
 * getMessage() is the server's error.message; getCode() is the HTTP status (as an int, since
 * PHP's exception code must be one); the string error code is getErrorCode().
 */
class ApiException extends \RuntimeException implements DossierException
{
    /** @var list<array{field: string, issue: string}> */
    private readonly array $details;

    /**
     * @param array<string, string> $headers response headers, names lower-cased
     * @param array<string, mixed>|null $body the decoded JSON body, null when it was not JSON
     * @param list<array{field: string, issue: string}> $details
     */
    public function __construct(
        string $message,
        private readonly int $httpStatus,
        private readonly ?string $errorCode = null,
        private readonly ?string $requestId = null,
        array $details = [],
        private readonly ?array $body = null,
        private readonly string $rawBody = '',
        private readonly array $headers = [],
    ) {
        parent::__construct($message, $httpStatus);
        $this->details = $details;
    }

    /**
     * Builds the exception matching an error response.
     *
     * @param array<string, string> $headers names lower-cased
     */
    public static function fromResponse(int $status, array $headers, string $rawBody): self
    {
        $decoded = json_decode($rawBody, true);
        $body = is_array($decoded) ? $decoded : null;
        [$code, $message, $details] = self::parts($body['error'] ?? null);
        $message ??= sprintf('HTTP %d from the Dossier API', $status);
        $requestId = is_string($body['request_id'] ?? null) ? $body['request_id'] : Headers::get($headers, 'x-request-id');
        $class = self::classFor($status, $code);

        return new $class($message, $status, $code, $requestId, $details, $body, $rawBody, $headers);
    }

    /**
     * The exception for a 2xx answer whose body is not $expected ("JSON object", "search envelope (…)"): an
     * ApiException itself, with no error code (it is no error envelope), as in the other three clients.
     *
     * @param array<string, string> $headers names lower-cased
     * @param array<string, mixed>|null $body the decoded JSON object, null when the body was not one
     */
    public static function notA(string $expected, int $status, array $headers, ?array $body, string $rawBody): self
    {
        $article = in_array($expected[0] ?? '', ['a', 'e', 'i', 'o', 'u'], true) ? 'an' : 'a';
        $message = sprintf('the Dossier API answered HTTP %d with a body that is not %s %s', $status, $article, $expected);

        return new self($message, $status, null, Headers::get($headers, 'x-request-id'), [], $body, $rawBody, $headers);
    }

    /**
     * The exception a batch item's error stands for: `{"status":"error","error":{code,message,details?},
     * "search_id"?}` (a ValidationException for "validation_error", an InsufficientCreditsException for
     * "insufficient_credits", …). Its HTTP status is 0 (the item has none of its own: the batch succeeded);
     * getBody() is the item, so getSearchId() names a failed lookup's search.
     *
     * @param array<string, mixed> $item
     */
    public static function fromBatchItem(array $item): self
    {
        [$code, $message, $details] = self::parts($item['error'] ?? null);
        $class = self::classFor(0, $code);

        return new $class($message ?? 'batch item failed', 0, $code, null, $details, $item, (string) json_encode($item));
    }

    /**
     * An envelope's error object as [code, message, details].
     *
     * @return array{0: ?string, 1: ?string, 2: list<array{field: string, issue: string}>}
     */
    private static function parts(mixed $error): array
    {
        $error = is_array($error) ? $error : [];
        $details = [];
        foreach (is_array($error['details'] ?? null) ? $error['details'] : [] as $d) {
            if (is_array($d)) {
                $details[] = ['field' => (string) ($d['field'] ?? ''), 'issue' => (string) ($d['issue'] ?? '')];
            }
        }

        return [
            is_string($error['code'] ?? null) ? $error['code'] : null,
            is_string($error['message'] ?? null) ? $error['message'] : null,
            $details,
        ];
    }

    /** @return class-string<self> */
    private static function classFor(int $status, ?string $code): string
    {
        return match (true) {
            $status === 401 || $code === 'unauthorized' || $code === 'invalid_credentials' => AuthenticationException::class,
            $status === 402 || $code === 'insufficient_credits' => InsufficientCreditsException::class,
            $status === 429 || $code === 'rate_limited' => RateLimitException::class,
            $status === 400 || $code === 'validation_error' || $code === 'invalid_json' => ValidationException::class,
            $status === 404 || $code === 'not_found' => NotFoundException::class,
            $status === 409 || $code === 'email_taken' || $code === 'idempotency_conflict' => ConflictException::class,
            $status === 503 || $code === 'unavailable' => UnavailableException::class,
            default => self::class,
        };
    }

    /** The search a failed lookup (or failed batch item) belongs to, when the body names one. */
    public function getSearchId(): ?string
    {
        return is_string($this->body['search_id'] ?? null) ? $this->body['search_id'] : null;
    }

    /** The HTTP status, e.g. 402 (0 for a batch item's error, see fromBatchItem()). */
    public function getHttpStatus(): int
    {
        return $this->httpStatus;
    }

    /** The contract's error code, e.g. "insufficient_credits"; null when the body was not an error envelope. */
    public function getErrorCode(): ?string
    {
        return $this->errorCode;
    }

    /** The request id (body request_id, else the X-Request-Id header); quote it when reporting a problem. */
    public function getRequestId(): ?string
    {
        return $this->requestId;
    }

    /**
     * Field details of a validation error, e.g. [['field' => 'phone', 'issue' => '...']]; empty otherwise.
     *
     * @return list<array{field: string, issue: string}>
     */
    public function getDetails(): array
    {
        return $this->details;
    }

    /**
     * The decoded JSON body, or null when the body was not JSON.
     *
     * @return array<string, mixed>|null
     */
    public function getBody(): ?array
    {
        return $this->body;
    }

    /** The response body exactly as received. */
    public function getRawBody(): string
    {
        return $this->rawBody;
    }

    /** @return array<string, string> response headers, names lower-cased */
    public function getHeaders(): array
    {
        return $this->headers;
    }

    /** A response header by case-insensitive name. */
    public function getHeader(string $name): ?string
    {
        return Headers::get($this->headers, $name);
    }

    /** The Retry-After header in seconds, when the server sent one (429 and 503 do). */
    public function getRetryAfter(): ?float
    {
        return Headers::retryAfter($this->headers);
    }
}
