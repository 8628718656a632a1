<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * 409 email_taken (register) or idempotency_conflict (an Idempotency-Key reused with a different body).
 */
class ConflictException extends ApiException
{
}
