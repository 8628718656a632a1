<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * A call was made with arguments the client refuses before sending anything
 * (no API key, the generic and the person form of search() mixed, ...).
 */
class InvalidArgumentException extends \InvalidArgumentException implements DossierException
{
}
