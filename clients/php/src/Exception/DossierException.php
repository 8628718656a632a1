<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * Implemented by every exception this library throws, so one `catch (DossierException $e)`
 * catches them all.
 */
interface DossierException extends \Throwable
{
}
