<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * 401 unauthorized (no, unknown or revoked API key) or invalid_credentials (wrong e-mail or password at login).
 */
class AuthenticationException extends ApiException
{
}
