<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * The library was used in a way it refuses whatever the arguments: serialize() or unserialize() of a
 * Client (it holds the API key, which must not end up in a cache, a session or a queue).
 */
class LogicException extends \LogicException implements DossierException
{
}
