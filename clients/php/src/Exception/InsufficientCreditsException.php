<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * 402 insufficient_credits: the balance is below the lookup's cost; nothing was charged.
 */
class InsufficientCreditsException extends ApiException
{
}
