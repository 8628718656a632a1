<?php

declare(strict_types=1);

namespace Dossier\Exception;

use Dossier\Internal\Headers;

/**
 * 402 insufficient_credits: the balance is below the lookup's cost; nothing was charged.
 */
class InsufficientCreditsException extends ApiException
{
    /** The balance (the X-Credits-Remaining header); null when the answer has none (a batch item's error). */
    public function getCreditsRemaining(): ?int
    {
        return Headers::count($this->getHeaders(), 'x-credits-remaining');
    }
}
