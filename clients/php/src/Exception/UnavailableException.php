<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * 503 unavailable: a backing service is down, the queue is saturated, or the lookup failed; nothing was charged. See getRetryAfter().
 */
class UnavailableException extends ApiException
{
}
