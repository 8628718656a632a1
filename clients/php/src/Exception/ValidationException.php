<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * 400 validation_error or invalid_json. getDetails() names each offending field: [['field' => 'phone', 'issue' => '...']].
 */
class ValidationException extends ApiException
{
}
