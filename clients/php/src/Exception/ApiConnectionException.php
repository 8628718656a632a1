<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * The server could not be reached, or the connection failed or timed out, on every attempt
 * (1 + maxRetries when the request was safe to repeat). Not an ApiException: there is no
 * HTTP status, error code or request id.
 */
class ApiConnectionException extends \RuntimeException implements DossierException
{
    public function __construct(
        string $message,
        private readonly int $attempts = 1,
        private readonly ?int $curlErrno = null,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, 0, $previous);
    }

    /** How many times the request was tried before giving up. */
    public function getAttempts(): int
    {
        return $this->attempts;
    }

    /** The cURL error number of the last attempt (e.g. 7 = could not connect, 28 = timed out). */
    public function getCurlErrno(): ?int
    {
        return $this->curlErrno;
    }
}
