<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * 429 rate_limited: over the key's (or, on register/login, the client address's) rate.
 * Thrown once the client's own retries are used up; getRetryAfter() gives the seconds to wait.
 */
class RateLimitException extends ApiException
{
}
